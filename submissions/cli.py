"""Command-line client for the MageBench Leaderboard REST API.

    python -m submissions.cli --url https://magebench.example submit-endpoint --model "My model" \\
        --env sokoban --flow global --subset mini --endpoint https://llm.example/v1 --api-key-env MY_KEY --follow

The token comes from --token or, better (argv is visible to other users of the machine), from the
MAGEBENCH_TOKEN environment variable. This module imports only the standard library, requests and
its sibling csv_safe.py (itself standard library only), so that submitters can copy the two
anywhere without installing the site.

Exit codes: 0 success (for follow: completed), 1 the submission ended incomplete or cancelled,
2 the site refused the request (or the command line was wrong), 3 the site could not be reached,
141 the output's reader went away (e.g. ``results | head``), as for any command a closed pipe stops.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO, Any, TextIO

import requests

from submissions.csv_safe import write_csv

DEFAULT_URL = "http://127.0.0.1:8000"
EXIT_OK, EXIT_UNFINISHED, EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
# 128 + SIGPIPE: what a shell reports for a program a closed pipe stopped.
EXIT_BROKEN_PIPE = 141
#: Final submission statuses and the exit code ``follow`` ends with.
FINAL_STATUSES = {"completed": EXIT_OK, "incomplete": EXIT_UNFINISHED, "cancelled": EXIT_UNFINISHED}
ATTEMPT_COLUMNS = ("scenario", "repeat", "status", "score", "outcome", "steps", "model_calls", "invalid_action",
                   "repeating_action", "parse_errors", "error_kind", "error_message")
ACTIONS = ("cancel", "resume", "rerun", "publish")
BAR_WIDTH = 20
# Uploads may be tens of megabytes and the site validates them before answering.
TIMEOUT = (10.0, 300.0)


class CliError(Exception):
    """A mistake found before anything was sent (a missing file or environment variable)."""


class ApiError(Exception):
    """The site answered with an error: its message and every problem it listed."""

    def __init__(self, status: int, message: str, details: list[str]) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details


class Unreachable(Exception):
    def __init__(self, url: str, reason: str) -> None:
        super().__init__(reason)
        self.url = url
        self.reason = reason


class Client:
    """The REST API at ``base_url``; the token only ever goes into the Authorization header."""

    def __init__(self, base_url: str, token: str | None) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._session = requests.Session()
        self._session.headers["User-Agent"] = "magebench-cli/1"

    def __repr__(self) -> str:
        return f"Client({self.base_url!r})"

    def close(self) -> None:
        self._session.close()

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = {"Accept": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        try:
            response = self._session.request(method, self.base_url + path, headers=headers, timeout=TIMEOUT, **kwargs)
        except requests.RequestException as exc:
            raise Unreachable(self.base_url, network_reason(exc)) from None
        if response.status_code >= 400:
            raise api_error(response)
        return response

    def get(self, path: str, params: dict[str, str] | None = None) -> Any:
        return response_json(self.request("GET", path, params=params))

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        return response_json(self.request("POST", path, json=body))

    def post_file(self, path: str, fields: dict[str, str], name: str, file: IO[bytes]) -> Any:
        return response_json(self.request("POST", path, data=fields, files={"file": (name, file)}))


def network_reason(exc: requests.RequestException) -> str:
    if isinstance(exc, requests.Timeout):
        return "no answer in time"
    text = str(exc)
    # urllib3 wraps the socket error several times; the errno text is the part a person needs.
    match = re.search(r"\[Errno -?\d+\] ([^'\")]+)", text)
    return match.group(1).strip() if match else (text or type(exc).__name__)


def response_json(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        kind = response.headers.get("Content-Type", "no content type")
        raise ApiError(response.status_code, f"expected JSON from {response.url}, got {kind}; is --url the "
                                             "MageBench site?", []) from None


def api_error(response: requests.Response) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "message" in body:
        return ApiError(response.status_code, str(body["message"]), error_details(body.get("extra")))
    status = f"HTTP {response.status_code} {response.reason}" if response.reason else f"HTTP {response.status_code}"
    return ApiError(response.status_code, f"{status} from {response.url}", [])


def error_details(extra: Any) -> list[str]:
    """Upload problems one per line, then any per-field validation messages as ``field: message``."""
    if not isinstance(extra, dict):
        return []
    lines = [str(problem) for problem in extra.get("problems") or []]
    for field, value in extra.items():
        if field != "problems":
            lines.append(f"{field}: {'; '.join(map(str, value)) if isinstance(value, list) else value}")
    return lines


# Times -------------------------------------------------------------------------------------------

def parse_time(text: str) -> datetime | None:
    """An ISO 8601 time from the API (``…Z`` or with an offset), as an aware datetime."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def span_text(seconds: float) -> str:
    minutes = round(abs(seconds) / 60)
    if minutes < 90:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h {minutes % 60:02d} min"
    return f"{round(minutes / (24 * 60))} days"


def time_text(text: str | None, now: datetime | None = None) -> str:
    """An API time as a person reads it: "2026-11-24 11:32 UTC (3 min ago)" or "(in 2 h 05 min)"."""
    moment = parse_time(text or "")
    if moment is None:
        return text or ""
    seconds = (moment - (now or datetime.now(UTC))).total_seconds()
    if abs(seconds) < 60:
        relative = "just now" if seconds <= 0 else "in under a minute"
    else:
        relative = f"in {span_text(seconds)}" if seconds > 0 else f"{span_text(seconds)} ago"
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC ({relative})"


# Progress ----------------------------------------------------------------------------------------

def progress_bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    # Rounded down, so the bar is only full once every attempt is done.
    filled = width * done // total if total else 0
    return "[" + "#" * filled + "." * (width - filled) + "]"


def eta_text(seconds: float, lower_bound: bool) -> str:
    minutes = max(1, round(seconds / 60))
    amount = f"{minutes} min" if minutes < 90 else f"{minutes // 60} h {minutes % 60:02d} min"
    # A lower bound: work queued ahead has no observed time yet, so the true wait may be much longer.
    return f"at least {amount} left" if lower_bound else f"about {amount} left"


def progress_line(progress: dict[str, Any]) -> str:
    done, total = int(progress.get("done") or 0), int(progress.get("total") or 0)
    counts = (f"{progress_bar(done, total)} {done}/{total} scored {progress.get('scored', 0)} running "
              f"{progress.get('running', 0)} retrying {progress.get('retrying', 0)} failed "
              f"{progress.get('infra_failed', 0)}")
    if progress.get("cancelled"):
        counts += f" cancelled {progress['cancelled']}"
    parts = [counts]
    if progress.get("queue_position") is not None:
        parts.append(f"position {progress['queue_position']}")
    if progress.get("eta_seconds") is not None:
        parts.append(eta_text(float(progress["eta_seconds"]), bool(progress.get("eta_is_lower_bound"))))
    return " · ".join(parts)


class StatusLine:
    """One line of progress: redrawn in place on a terminal; elsewhere (logs, CI) a new line per change."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.shown = ""

    def draw(self, text: str) -> None:
        if text == self.shown:
            return
        # Padding wipes the tail of a longer previous line without relying on terminal escape codes.
        self.stream.write("\r" + text.ljust(len(self.shown)) if self.tty else text + "\n")
        self.stream.flush()
        self.shown = text

    def note(self, text: str) -> None:
        """A message on a line of its own, above the progress line."""
        if self.tty and self.shown:
            self.stream.write("\r" + text.ljust(len(self.shown)) + "\n" + self.shown)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty and self.shown:
            self.stream.write("\n")
            self.stream.flush()


def follow(client: Client, submission_id: int, interval: float) -> int:
    line = StatusLine(sys.stderr)
    last_error = ""
    while True:
        submission = client.get(f"/api/v1/submissions/{submission_id}/")
        progress = submission.get("progress") or {}
        error = progress.get("last_error") or ""
        if error and error != last_error:
            line.note(f"last error: {error}")
            last_error = error
        line.draw(progress_line(progress))
        status = submission.get("status", "")
        if status in FINAL_STATUSES:
            line.finish()
            reason = submission.get("status_reason") or ""
            print(f"submission {submission_id} {status}" + (f": {reason}" if reason else ""), file=sys.stderr)
            score = final_score(client, submission)
            if score:
                print(score, file=sys.stderr)
            return FINAL_STATUSES[status]
        time.sleep(interval)


def board_row(client: Client, submission: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The submission's board and its row there, as the caller sees the board (a team's token shows
    the team's private entries); None when it is not on the board (cancelled, hidden)."""
    path = f"/api/v1/boards/{submission.get('env')}/{submission.get('flow')}/{submission.get('subset')}/"
    try:
        board = client.get(path, {"suite": str(submission.get("suite") or "")})
    except (ApiError, Unreachable):
        return None  # the submission has finished all the same: its status decides the exit code
    row = next((r for r in board.get("rows") or [] if r.get("submission") == submission.get("id")), None)
    return (board, row) if row is not None else None


def final_score(client: Client, submission: dict[str, Any]) -> str:
    """The finished submission's score as its board shows it: mean ± standard error, the 95%
    confidence interval and the rank; the plain mean of its scored attempts when it has no row."""
    found = board_row(client, submission)
    if found is None or found[1].get("mean") is None:
        scores = [a["score"] for a in submission.get("attempts") or [] if a.get("score") is not None]
        return f"mean score {sum(scores) / len(scores):.2f} over {len(scores)} scored attempt(s)" if scores else ""
    board, row = found
    text = f"{board.get('score_label') or 'score'}: {row['mean']:.2f}"
    if row.get("se") is not None:
        text += f" ± {row['se']:.2f}"
    if row.get("ci95_low") is not None and row.get("ci95_high") is not None:
        text += f" (95% CI {row['ci95_low']:.2f} to {row['ci95_high']:.2f})"
    text += f" over {row.get('scenarios')} scenario(s)"
    where = f"{board.get('env')}/{board.get('flow')}/{board.get('subset')} board, suite {board.get('suite')}"
    if row.get("rank") is not None:
        ranked = sum(1 for r in board.get("rows") or [] if r.get("rank") is not None)
        standing = {"leader": " (the leader)", "tied": " (tied with the leader)"}.get(row.get("standing") or "", "")
        text += f"; rank {row['rank']} of {ranked} on the {where}{standing}"
    else:
        why = ("baselines" if row.get("baseline") else f"variant: {', '.join(row['variant'])}" if row.get("variant")
               else "")
        text += f"; unranked{f' ({why})' if why else ''} on the {where}"
    return text


# Commands ----------------------------------------------------------------------------------------

def cmd_me(client: Client, args: argparse.Namespace) -> int:
    me = client.get("/api/v1/me/")
    who = me.get("user") or "anonymous (no token)"
    scope = me.get("token_scope")
    print(f"user {who}" + (f" · token {'read-write' if scope == 'write' else 'read-only'}" if scope else ""))
    if not me.get("teams"):
        print("no teams")
    for team in me.get("teams") or []:
        print(team_line(team))
    return EXIT_OK


def team_line(team: dict[str, Any]) -> str:
    q = team.get("quota") or {}
    text = (f"{team['name']} ({team['slug']}), {team['role']}: {q.get('per_day_left')} of {q.get('per_day_limit')} "
            f"submissions left today, {q.get('total_left')} of {q.get('total_limit')} in total, "
            f"{q.get('concurrent_left')} of {q.get('concurrent_limit')} at once")
    if q.get("per_day_resets_at"):
        text += f"; the next daily one frees up at {time_text(q['per_day_resets_at'])}"
    return text


def parse_setting(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    # Numbers and booleans keep their type; anything else is sent as the text given.
    try:
        return name.strip(), json.loads(value)
    except ValueError:
        return name.strip(), value


def metadata(args: argparse.Namespace) -> dict[str, Any]:
    """The fields an endpoint submission and an upload share."""
    fields: dict[str, Any] = {"model_name": args.model, "env": args.env, "flow": args.flow, "subset": args.subset,
                              "public": args.public}
    # Metadata flags left out are not sent, so the model keeps what the site or an earlier call set.
    optional = {"team": args.team, "suite": args.suite, "organisation": args.organisation,
                "parameter_count": args.parameter_count, "link": args.link, "licence": args.licence,
                "price_input_per_mtok": args.price_input, "price_output_per_mtok": args.price_output,
                "open_weights": True if args.open_weights else None}
    fields.update({name: value for name, value in optional.items() if value not in (None, "")})
    return fields


def api_key_from(variable: str | None) -> str:
    if not variable:
        return ""
    key = os.environ.get(variable, "")
    if not key:
        raise CliError(f"the environment variable {variable} is not set or empty")
    return key


def created(client: Client, result: dict[str, Any], args: argparse.Namespace) -> int:
    print(result["id"], flush=True)
    print(f"submission {result['id']} {result['status']} with {result['attempts']} attempt(s): "
          f"{client.base_url}/submissions/{result['id']}/", file=sys.stderr)
    return follow(client, result["id"], args.interval) if args.follow else EXIT_OK


def cmd_submit_endpoint(client: Client, args: argparse.Namespace) -> int:
    body = metadata(args)
    body.update({"endpoint_url": args.endpoint, "settings": dict(args.setting or [])})
    if args.endpoint_model:
        body["endpoint_model"] = args.endpoint_model
    if args.concurrency is not None:
        body["endpoint_concurrency"] = args.concurrency
    api_key = api_key_from(args.api_key_env)
    if api_key:
        body["api_key"] = api_key
    return created(client, client.post("/api/v1/submissions/", body), args)


def cmd_upload(client: Client, args: argparse.Namespace) -> int:
    fields = {name: (str(value).lower() if isinstance(value, bool) else str(value))
              for name, value in metadata(args).items()}
    try:
        with open(args.file, "rb") as file:
            result = client.post_file("/api/v1/uploads/", fields, os.path.basename(args.file), file)
    except OSError as exc:
        raise CliError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    return created(client, result, args)


def cmd_check(client: Client, args: argparse.Namespace) -> int:
    """Check a file of outputs the way an upload is checked; nothing is stored and no quota is used."""
    fields = {"env": args.env, "flow": args.flow, "subset": args.subset}
    if args.suite:
        fields["suite"] = args.suite
    try:
        with open(args.file, "rb") as file:
            result = client.post_file("/api/v1/uploads/check/", fields, os.path.basename(args.file), file)
    except OSError as exc:
        raise CliError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    for line in check_lines(result):
        print(line)
    return EXIT_OK


def check_lines(result: dict[str, Any]) -> list[str]:
    lines = [f"valid: {result.get('runs')} run(s) of {result.get('scenarios')} scenario(s), "
             f"up to {result.get('repeats')} repeat(s), suite {result.get('suite')}"]
    missing = result.get("missing_scenarios") or []
    if missing:
        lines.append(f"{len(missing)} scenario(s) of the subset have no run (the entry would be incomplete): "
                     + ", ".join(map(str, missing)))
    return lines


def cmd_follow(client: Client, args: argparse.Namespace) -> int:
    return follow(client, args.id, args.interval)


def cmd_status(client: Client, args: argparse.Namespace) -> int:
    for line in status_lines(client.get(f"/api/v1/submissions/{args.id}/")):
        print(line)
    return EXIT_OK


def status_lines(s: dict[str, Any]) -> list[str]:
    progress = s.get("progress") or {}
    lines = [f"submission {s['id']}: {s.get('model')} ({s.get('team')}) on {s.get('env')}/{s.get('flow')}/"
             f"{s.get('subset')}, suite {s.get('suite')}, "
             f"{'uploaded' if s.get('source') == 'upload' else 'run on its endpoint'}",
             f"status: {s.get('status')}" + (f" ({s['status_reason']})" if s.get("status_reason") else ""),
             f"public: {'yes' if s.get('is_public') else 'no'} · verified: {'yes' if s.get('verified') else 'no'}",
             progress_line(progress)]
    times = [f"{label} {time_text(s[key])}" for label, key in (("created", "created_at"), ("started", "started_at"),
                                                                ("finished", "finished_at")) if s.get(key)]
    if times:
        lines.append(" · ".join(times))
    scores = [a["score"] for a in s.get("attempts") or [] if a.get("score") is not None]
    if scores:
        lines.append(f"mean score {sum(scores) / len(scores):.2f} over {len(scores)} scored attempt(s)")
    if progress.get("last_error"):
        lines.append(f"last error: {progress['last_error']}")
    return lines


def cmd_results(client: Client, args: argparse.Namespace) -> int:
    submission = client.get(f"/api/v1/submissions/{args.id}/")
    attempts = submission.get("attempts") or []
    if args.format == "csv":
        write_output(args.out, lambda out: write_csv(out, ATTEMPT_COLUMNS, attempts))
    else:
        write_output(args.out, lambda out: out.write(json.dumps(submission, indent=2) + "\n"))
    if args.out:
        print(f"wrote {len(attempts)} attempt(s) of submission {args.id} to {args.out}", file=sys.stderr)
    return EXIT_OK


def cmd_board(client: Client, args: argparse.Namespace) -> int:
    params = {"suite": args.suite, "size": args.size, "org": args.org}
    params = {name: value for name, value in params.items() if value}
    params.update({name: "1" for name, flag in (("open", args.open), ("verified", args.verified),
                                                 ("best", args.best)) if flag})
    # The API rather than the site's CSV export: it honours the token, so the team's private entries show.
    board = client.get(f"/api/v1/boards/{args.env}/{args.flow}/{args.subset}/", params)
    rows = board.get("rows") or []
    if args.format == "json":
        write_output(args.out, lambda out: out.write(json.dumps(board, indent=2) + "\n"))
    else:
        write_output(args.out, lambda out: write_csv(out, board_columns(rows), rows))
    if args.out:
        print(f"wrote {len(rows)} row(s) of the {board.get('suite')} board to {args.out}", file=sys.stderr)
    return EXIT_OK


def board_columns(rows: list[dict[str, Any]]) -> list[str]:
    # Rows can carry different per-environment breakdown columns; keep every column, in first-seen order.
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return list(columns) or ["rank", "model", "mean", "se"]


def write_output(path: str | None, write: Callable[[TextIO], Any]) -> None:
    if not path:
        write(sys.stdout)
        return
    try:
        with open(path, "w", encoding="utf-8", newline="") as out:
            write(out)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None


def cmd_action(client: Client, args: argparse.Namespace) -> int:
    submission = client.post(f"/api/v1/submissions/{args.id}/{args.command}/")
    if args.command == "rerun":
        print(submission["id"])
        print(f"submission {args.id} re-run as submission {submission['id']} ({submission['status']})",
              file=sys.stderr)
    elif args.command == "publish":
        print(f"submission {submission['id']} is public")
    else:
        print(f"submission {submission['id']}: {submission['status']}")
    return EXIT_OK


# Command line ------------------------------------------------------------------------------------

def submission_options() -> argparse.ArgumentParser:
    """What an endpoint submission and an upload both describe: the model, the board and who submits."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--model", required=True, help="model name shown on the board")
    parser.add_argument("--env", required=True, help="environment slug, as listed by the site")
    parser.add_argument("--flow", required=True, choices=["global", "online"])
    parser.add_argument("--subset", required=True, choices=["mini", "full"])
    parser.add_argument("--suite", help="scenario suite (the site's default when left out)")
    parser.add_argument("--team", help="slug or name of your team (needed only if you belong to several)")
    parser.add_argument("--public", action="store_true", help="show on the public boards now")
    parser.add_argument("--organisation")
    parser.add_argument("--parameter-count", type=int)
    parser.add_argument("--open-weights", action="store_true",
                        help="the weights are public (metadata flags left out keep what the site has)")
    parser.add_argument("--link", help="model card or paper URL")
    parser.add_argument("--licence")
    parser.add_argument("--price-input", type=float, metavar="USD", help="price per million prompt tokens")
    parser.add_argument("--price-output", type=float, metavar="USD", help="price per million completion tokens")
    parser.add_argument("--follow", action="store_true", help="then follow the progress until it finishes")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between polls with --follow")
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m submissions.cli", description=__doc__.split("\n\n")[0],
        epilog="Exit codes: 0 done, 1 incomplete or cancelled, 2 refused, 3 unreachable, 141 output pipe closed.")
    parser.add_argument("--url", default=None,
                        help=f"site address (default: $MAGEBENCH_URL or {DEFAULT_URL})")
    parser.add_argument("--token", default=os.environ.get("MAGEBENCH_TOKEN"),
                        help="API token mbw_… or mbr_… (default: $MAGEBENCH_TOKEN, which keeps it out of argv)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    shared = submission_options()

    commands.add_parser("me", help="your teams and their quotas").set_defaults(handler=cmd_me)

    endpoint = commands.add_parser("submit-endpoint", parents=[shared], help="evaluate an OpenAI-compatible endpoint")
    endpoint.add_argument("--endpoint", required=True, help="base URL (…/v1) or the chat-completions URL")
    endpoint.add_argument("--endpoint-model",
                          help="model id sent to the endpoint (default: the first one it lists at /models)")
    endpoint.add_argument("--concurrency", type=int, metavar="N",
                          help="at most N attempts call the endpoint at once (default: the platform's limit)")
    endpoint.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the endpoint's API key "
                                                               "(a key on the command line would be visible in ps)")
    endpoint.add_argument("--setting", type=parse_setting, action="append", metavar="NAME=VALUE",
                          help="evaluation setting, e.g. repeats=1 (repeatable)")
    endpoint.set_defaults(handler=cmd_submit_endpoint)

    upload = commands.add_parser("upload", parents=[shared], help="upload a zip of MageBench output or a JSONL file")
    upload.add_argument("file")
    upload.set_defaults(handler=cmd_upload)

    check = commands.add_parser("check", help="check a zip or JSONL file of outputs as an upload would be, "
                                              "storing nothing and using no quota")
    check.add_argument("file")
    check.add_argument("--env", required=True, help="environment slug, as listed by the site")
    check.add_argument("--flow", required=True, choices=["global", "online"])
    check.add_argument("--subset", required=True, choices=["mini", "full"])
    check.add_argument("--suite", help="scenario suite (the site's default when left out)")
    check.set_defaults(handler=cmd_check)

    follow_cmd = commands.add_parser("follow", help="show progress until the submission finishes")
    follow_cmd.add_argument("id", type=int)
    follow_cmd.add_argument("--interval", type=float, default=2.0, help="seconds between polls")
    follow_cmd.set_defaults(handler=cmd_follow)

    status = commands.add_parser("status", help="a one-shot summary of a submission")
    status.add_argument("id", type=int)
    status.set_defaults(handler=cmd_status)

    results = commands.add_parser("results", help="download a submission and its attempts")
    results.add_argument("id", type=int)
    results.add_argument("--out", help="file to write (default: standard output)")
    results.add_argument("--format", choices=["json", "csv"], default="json")
    results.set_defaults(handler=cmd_results)

    board = commands.add_parser("board", help="download a board")
    board.add_argument("env")
    board.add_argument("flow")
    board.add_argument("subset")
    board.add_argument("--format", choices=["csv", "json"], default="csv")
    board.add_argument("--out", help="file to write (default: standard output)")
    board.add_argument("--suite")
    board.add_argument("--verified", action="store_true", help="verified entries only")
    board.add_argument("--open", action="store_true", help="open-weight models only")
    board.add_argument("--best", action="store_true", help="one best entry per team")
    board.add_argument("--size", help="parameter bucket: <10B, 10-40B, 40-100B, >100B, unknown")
    board.add_argument("--org", help="organisation")
    board.set_defaults(handler=cmd_board)

    for action in ACTIONS:
        sub = commands.add_parser(action, help=f"{action} a submission")
        sub.add_argument("id", type=int)
        sub.set_defaults(handler=cmd_action)
    return parser


def unreachable_hint(given: str) -> str:
    """What to change when the site cannot be reached, by where its address came from."""
    if given == "default":
        return f"no site address was given, so the CLI tried {DEFAULT_URL}: set MAGEBENCH_URL or pass --url"
    where = "--url" if given == "flag" else "MAGEBENCH_URL"
    return f"is {where} the site's address, and is the site up?"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    given = "flag" if args.url else "env" if os.environ.get("MAGEBENCH_URL") else "default"
    args.url = args.url or os.environ.get("MAGEBENCH_URL") or DEFAULT_URL
    if not re.match(r"https?://", args.url):
        print(f"--url must start with http:// or https:// (got {args.url!r})", file=sys.stderr)
        return EXIT_REFUSED
    client = Client(args.url, (args.token or "").strip() or None)
    try:
        code = args.handler(client, args)
        # Written out here, so that a reader gone away is noticed inside this try, not at exit.
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # The reader (head, less) stopped reading: nothing is wrong. Python flushes stdout again at
        # exit, which would fail the same way, so stdout goes to /dev/null (as the Python docs advise).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Unreachable as exc:
        print(f"cannot reach {exc.url}: {exc.reason}", file=sys.stderr)
        print(f"  {unreachable_hint(given)}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except ApiError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        for line in exc.details:
            print(f"  {line}", file=sys.stderr)
        return EXIT_REFUSED
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(main())
