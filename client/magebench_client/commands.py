"""What each command does: the requests it sends and what it prints or writes. Results go to standard
output, so they can be piped; progress and messages go to standard error."""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO
from urllib.parse import quote

from magebench_client.api import ApiError, Client, Unreachable
from magebench_client.csv_safe import write_csv
from magebench_client.output import (
    StatusLine,
    board_columns,
    check_lines,
    endpoint_check_lines,
    progress_line,
    quota_text,
    size_text,
    status_lines,
    team_line,
)

EXIT_OK, EXIT_UNFINISHED, EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
# 128 + SIGPIPE: what a shell reports for a program a closed pipe stopped.
EXIT_BROKEN_PIPE = 141
#: Final submission statuses and the exit code ``follow`` ends with.
#: A paused submission sends no more requests until it is resumed: following it further would wait forever.
FINAL_STATUSES = {"completed": EXIT_OK, "incomplete": EXIT_UNFINISHED, "cancelled": EXIT_UNFINISHED,
                  "paused": EXIT_UNFINISHED}
#: What ``export --format`` offers, and the file the site serves for each.
EXPORT_FORMATS = {"csv": "csv", "parquet": "parquet", "trajectories": "zip"}
#: The columns of the per-attempt table that ``results`` shows by default (``--all-columns``: every
#: one). The table is the site's per-attempt export itself, so each name means what it means there.
ATTEMPT_COLUMNS = ("scenario", "repeat", "status", "score", "outcome", "steps", "model_calls", "invalid_action",
                   "repeating_action", "parse_errors", "error_kind", "error_message")


class CliError(Exception):
    """A mistake found before anything was sent (a missing file or environment variable)."""


# Following a submission --------------------------------------------------------------------------

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


#: Rows asked for per page of a board: the most the API gives in one answer.
BOARD_PAGE = 200


def board_pages(client: Client, path: str, params: dict[str, str]) -> Iterator[dict[str, Any]]:
    """A board's answers, one per page of rows, until its last row."""
    offset = 0
    while True:
        board = client.get(path, {**params, "limit": str(BOARD_PAGE), "offset": str(offset)})
        yield board
        rows = board.get("rows") or []
        offset += len(rows)
        # A board whose entries change between pages may end early or repeat a row; it never loops.
        if not rows or offset >= int(board.get("count") or 0):
            return


def board_row(client: Client, submission: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The submission's board and its row there, as the caller sees the board (a team's token shows
    the team's private entries); None when it is not on the board (cancelled, hidden)."""
    path = f"/api/v1/boards/{submission.get('env')}/{submission.get('flow')}/{submission.get('subset')}/"
    try:
        for board in board_pages(client, path, {"suite": str(submission.get("suite") or "")}):
            row = next((r for r in board.get("rows") or [] if r.get("submission") == submission.get("id")), None)
            if row is not None:
                return board, row
    except (ApiError, Unreachable):
        pass  # the submission has finished all the same: its status decides the exit code
    return None


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
    if me.get("quota"):
        print(quota_text("you, across all your teams", me["quota"]))
    if not me.get("teams"):
        print("no teams")
    for team in me.get("teams") or []:
        print(team_line(team))
    return EXIT_OK


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
    if result.get("status") == "pending" and result.get("url"):
        result = _stored_check(client, result, args.interval)
    for line in check_lines(result):
        print(line)
    return EXIT_OK


def _stored_check(client: Client, queued: dict[str, Any], interval: float) -> dict[str, Any]:
    """A large file's check, made by a worker: read until it is done; what a valid file holds, or the
    problems of an invalid one raised as the site's refusal of a file checked at once would be."""
    line = StatusLine(sys.stderr)
    while True:
        check = client.get(queued["url"])
        if check.get("status") != "pending":
            line.finish()
            break
        line.draw(f"check #{queued['id']} pending: a worker reads the file")
        time.sleep(interval)
    if not check.get("valid"):
        raise ApiError(400, "the file has problems; nothing was stored", [str(p) for p in check.get("problems") or []])
    return dict(check.get("result") or {})


def cmd_test_endpoint(client: Client, args: argparse.Namespace) -> int:
    """Make one real request to the endpoint through the site, as the board's first attempt would,
    and print what came back: 0 when the reply parsed into valid actions, 2 otherwise."""
    body: dict[str, Any] = {"endpoint_url": args.endpoint, "endpoint_model": args.model or "", "env": args.env,
                            "flow": args.flow, "subset": args.subset, "settings": dict(args.setting or [])}
    body.update({name: value for name, value in (("team", args.team), ("suite", args.suite)) if value})
    api_key = api_key_from(args.api_key_env)
    if api_key:
        body["api_key"] = api_key
    queued = client.post("/api/v1/endpoint-checks/", body)
    line = StatusLine(sys.stderr)
    while True:
        check = client.get(f"/api/v1/endpoint-checks/{queued['id']}/")
        if check.get("status") == "finished":
            line.finish()
            break
        line.draw(f"test call #{queued['id']} {check.get('status')}: "
                  + ("waiting for a worker" if check.get("status") == "queued" else "calling the endpoint"))
        time.sleep(args.interval)
    for text in endpoint_check_lines(check):
        print(text)
    return EXIT_OK if (check.get("result") or {}).get("ok") else EXIT_REFUSED


def cmd_follow(client: Client, args: argparse.Namespace) -> int:
    return follow(client, args.id, args.interval)


def cmd_status(client: Client, args: argparse.Namespace) -> int:
    for line in status_lines(client.get(f"/api/v1/submissions/{args.id}/")):
        print(line)
    return EXIT_OK


def attempt_table(client: Client, submission_id: int, wait: float) -> tuple[list[str], list[dict[str, str]]]:
    """The submission's per-attempt export (every column, as the site defines them) and its rows."""
    body = io.BytesIO()

    def waiting(seconds: float) -> None:
        print(f"the site is preparing the attempts of submission {submission_id}; asking again in {seconds:.0f} s",
              file=sys.stderr)

    client.download(f"/api/v1/submissions/{submission_id}/attempts.csv", None, body, wait=wait, waiting=waiting)
    reader = csv.DictReader(io.StringIO(body.getvalue().decode("utf-8")))
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def cmd_results(client: Client, args: argparse.Namespace) -> int:
    if args.format == "csv":
        # The same table as ``export``: a terminal's choice of its columns, or all of them.
        columns, attempts = attempt_table(client, args.id, args.wait)
        shown = columns if args.all_columns else [name for name in ATTEMPT_COLUMNS if name in columns]
        write_output(args.out, lambda out: write_csv(out, shown, attempts))
    else:
        submission = client.get(f"/api/v1/submissions/{args.id}/")
        attempts = submission.get("attempts") or []
        write_output(args.out, lambda out: out.write(json.dumps(submission, indent=2) + "\n"))
    if args.out:
        print(f"wrote {len(attempts)} attempt(s) of submission {args.id} to {args.out}", file=sys.stderr)
    return EXIT_OK


def board_params(args: argparse.Namespace) -> dict[str, str]:
    """The board filters given on the command line, as the board's query."""
    params = {"suite": args.suite, "size": args.size, "org": args.org}
    params = {name: value for name, value in params.items() if value}
    params.update({name: "1" for name, flag in (("open", args.open), ("verified", args.verified),
                                                 ("best", args.best)) if flag})
    return params


def cmd_board(client: Client, args: argparse.Namespace) -> int:
    params = board_params(args)
    # The API rather than the site's CSV export: it honours the token, so the team's private entries show.
    pages = list(board_pages(client, f"/api/v1/boards/{args.env}/{args.flow}/{args.subset}/", params))
    rows = [row for page in pages for row in page.get("rows") or []]
    board = {**pages[0], "rows": rows, "next": None, "previous": None}
    if args.format == "json":
        write_output(args.out, lambda out: out.write(json.dumps(board, indent=2) + "\n"))
    else:
        write_output(args.out, lambda out: write_csv(out, board_columns(rows), rows))
    if args.out:
        print(f"wrote {len(rows)} row(s) of the {board.get('suite')} board to {args.out}", file=sys.stderr)
    return EXIT_OK


def export_source(target: list[str], fmt: str) -> tuple[str, str]:
    """The API path of an export of ``target`` (a submission id, or a board as ENV FLOW SUBSET) and
    what the message after it calls it."""
    suffix = EXPORT_FORMATS[fmt]
    if len(target) == 1 and target[0].isdigit():
        return f"/api/v1/submissions/{int(target[0])}/attempts.{suffix}", f"submission {int(target[0])}"
    if len(target) == 3:
        env, flow, subset = (quote(part, safe="") for part in target)
        return f"/api/v1/boards/{env}/{flow}/{subset}/attempts.{suffix}", f"the {'/'.join(target)} board"
    raise CliError("export takes a submission id, or a board as ENV FLOW SUBSET (e.g. ENV global mini, the parts of "
                   "the board's address on the site)")


def cmd_export(client: Client, args: argparse.Namespace) -> int:
    """Every attempt of a submission or a board, one row each (CSV, Parquet), or their trajectories (zip)."""
    path, what = export_source(args.target, args.format)
    params = board_params(args) if len(args.target) == 3 else {}
    if args.frames:
        if args.format != "trajectories":
            raise CliError("--frames goes with --format trajectories")
        params["frames"] = "1"

    def waiting(seconds: float) -> None:
        print(f"the site is preparing the {args.format} export of {what}; asking again in {seconds:.0f} s",
              file=sys.stderr)

    if not args.out:
        if args.format != "csv" and sys.stdout.isatty():
            raise CliError(f"a {args.format} export is binary: give --out FILE, or redirect the output")
        sys.stdout.flush()
        client.download(path, params or None, sys.stdout.buffer, wait=args.wait, waiting=waiting)
        return EXIT_OK
    # Written beside the file and renamed once complete: a failed download leaves no half file behind.
    partial = f"{args.out}.part"
    try:
        with open(partial, "wb") as out:
            size = client.download(path, params or None, out, wait=args.wait, waiting=waiting)
        os.replace(partial, args.out)
    except OSError as exc:
        raise CliError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    print(f"wrote the {args.format} export of {what} ({size_text(size)}) to {args.out}", file=sys.stderr)
    return EXIT_OK


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
