"""Command-line client for the MageBench Leaderboard REST API.

    python -m submissions.cli --url https://magebench.example submit-endpoint --model "My model" \\
        --env sokoban --flow global --subset mini --endpoint https://llm.example/v1 --api-key-env MY_KEY --follow

The token comes from --token or, better (argv is visible to other users of the machine), from the
MAGEBENCH_TOKEN environment variable. This module imports only the standard library, requests and
its sibling csv_safe.py (itself standard library only), so that submitters can copy the two
anywhere without installing the site.

Exit codes: 0 success (for follow: completed), 1 the submission ended incomplete or cancelled,
2 the site refused the request (or the command line was wrong), 3 the site could not be reached.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from typing import IO, Any, TextIO

import requests

from submissions.csv_safe import write_csv

DEFAULT_URL = "http://127.0.0.1:8000"
EXIT_OK, EXIT_UNFINISHED, EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
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
            return FINAL_STATUSES[status]
        time.sleep(interval)


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
        text += f"; the next daily one frees up at {q['per_day_resets_at']}"
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
    parser.add_argument("--follow", action="store_true", help="then follow the progress until it finishes")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between polls with --follow")
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m submissions.cli", description=__doc__.split("\n\n")[0],
        epilog="Exit codes: 0 done, 1 incomplete or cancelled, 2 refused, 3 unreachable.")
    parser.add_argument("--url", default=os.environ.get("MAGEBENCH_URL") or DEFAULT_URL,
                        help=f"site address (default: $MAGEBENCH_URL or {DEFAULT_URL})")
    parser.add_argument("--token", default=os.environ.get("MAGEBENCH_TOKEN"),
                        help="API token mbw_… or mbr_… (default: $MAGEBENCH_TOKEN, which keeps it out of argv)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    shared = submission_options()

    commands.add_parser("me", help="your teams and their quotas").set_defaults(handler=cmd_me)

    endpoint = commands.add_parser("submit-endpoint", parents=[shared], help="evaluate an OpenAI-compatible endpoint")
    endpoint.add_argument("--endpoint", required=True, help="base URL (…/v1) or the chat-completions URL")
    endpoint.add_argument("--endpoint-model", help="model name sent to the endpoint (default: --model)")
    endpoint.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the endpoint's API key "
                                                               "(a key on the command line would be visible in ps)")
    endpoint.add_argument("--setting", type=parse_setting, action="append", metavar="NAME=VALUE",
                          help="evaluation setting, e.g. repeats=1 (repeatable)")
    endpoint.set_defaults(handler=cmd_submit_endpoint)

    upload = commands.add_parser("upload", parents=[shared], help="upload a zip of MageBench output or a JSONL file")
    upload.add_argument("file")
    upload.set_defaults(handler=cmd_upload)

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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not re.match(r"https?://", args.url):
        print(f"--url must start with http:// or https:// (got {args.url!r})", file=sys.stderr)
        return EXIT_REFUSED
    client = Client(args.url, (args.token or "").strip() or None)
    try:
        return args.handler(client, args)
    except Unreachable as exc:
        print(f"cannot reach {exc.url}: {exc.reason}", file=sys.stderr)
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
