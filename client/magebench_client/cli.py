"""The command line: its options, which command runs, and how each failure ends the program."""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any

import magebench_client
from magebench_client.api import DOWNLOAD_WAIT, ApiError, Client, Unreachable
from magebench_client.commands import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_REFUSED,
    EXIT_UNREACHABLE,
    EXPORT_FORMATS,
    CliError,
    cmd_action,
    cmd_board,
    cmd_check,
    cmd_export,
    cmd_follow,
    cmd_me,
    cmd_results,
    cmd_status,
    cmd_submit_endpoint,
    cmd_test_endpoint,
    cmd_upload,
)

DEFAULT_URL = "http://127.0.0.1:8000"
#: The scenario sets a board is ranked on. The client imports nothing of the site, so it names them itself;
#: a test keeps them equal to the site's (``evaluators.declarations.SUBSETS``).
SUBSETS = ("mini", "full")
#: Commands that act on one submission and print what it became.
ACTIONS = ("cancel", "resume", "rerun", "publish")


def parse_setting(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    # Numbers and booleans keep their type; anything else is sent as the text given.
    try:
        return name.strip(), json.loads(value)
    except ValueError:
        return name.strip(), value


def submission_options() -> argparse.ArgumentParser:
    """What an endpoint submission and an upload both describe: the model, the board and who submits."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--model", required=True, help="model name shown on the board")
    parser.add_argument("--env", required=True, help="environment slug, as listed by the site")
    parser.add_argument("--flow", required=True, help="agent flow the environment plays, as listed by the site")
    parser.add_argument("--subset", required=True, choices=SUBSETS)
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


def board_filters() -> argparse.ArgumentParser:
    """The board's filters, for the commands that read a board."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--suite")
    parser.add_argument("--verified", action="store_true", help="verified entries only")
    parser.add_argument("--open", action="store_true", help="open-weight models only")
    parser.add_argument("--best", action="store_true", help="one best entry per team")
    parser.add_argument("--size", help="parameter bucket: <10B, 10-40B, 40-100B, >100B, unknown")
    parser.add_argument("--org", help="organisation")
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="magebench", description=(magebench_client.__doc__ or "").split("\n\n")[0],
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

    probe = commands.add_parser(
        "test-endpoint", help="send the endpoint one real request, the first an attempt would send, and show "
                              "what it answered",
        description="The site sends the endpoint the first request the board's first attempt would send (same "
                    "prompts, image and request settings) and shows whether it was reached, the model id, latency, "
                    "tokens, the reply and the actions the environment's parser read in it, or the failure and the "
                    "setting that fixes it. Exit code 0 when the reply parsed into valid actions, 2 otherwise.")
    probe.add_argument("endpoint", metavar="URL", help="base URL (…/v1) or the chat-completions URL")
    probe.add_argument("--model", default="", metavar="ID",
                       help="model id sent to the endpoint (default: the first one it lists at /models)")
    probe.add_argument("--env", required=True, help="environment slug, as listed by the site")
    probe.add_argument("--flow", required=True, help="agent flow the environment plays, as listed by the site")
    probe.add_argument("--subset", choices=SUBSETS, default="mini", help="board whose first scenario is used")
    probe.add_argument("--suite", help="scenario suite (the site's default when left out)")
    probe.add_argument("--team", help="slug or name of your team (needed only if you belong to several)")
    probe.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the endpoint's API key")
    probe.add_argument("--setting", type=parse_setting, action="append", metavar="NAME=VALUE",
                       help="evaluation or request setting, e.g. token_limit_parameter=max_completion_tokens")
    probe.add_argument("--interval", type=float, default=1.0, help="seconds between polls")
    probe.set_defaults(handler=cmd_test_endpoint)

    upload = commands.add_parser("upload", parents=[shared], help="upload a zip of MageBench output or a JSONL file")
    upload.add_argument("file")
    upload.set_defaults(handler=cmd_upload)

    check = commands.add_parser("check", help="check a zip or JSONL file of outputs as an upload would be, "
                                              "storing nothing and using no quota")
    check.add_argument("file")
    check.add_argument("--env", required=True, help="environment slug, as listed by the site")
    check.add_argument("--flow", required=True, help="agent flow the environment plays, as listed by the site")
    check.add_argument("--subset", required=True, choices=SUBSETS)
    check.add_argument("--suite", help="scenario suite (the site's default when left out)")
    check.add_argument("--interval", type=float, default=1.0,
                       help="seconds between polls of a large file's check, which a worker makes")
    check.set_defaults(handler=cmd_check)

    follow_cmd = commands.add_parser("follow", help="show progress until the submission finishes")
    follow_cmd.add_argument("id", type=int)
    follow_cmd.add_argument("--interval", type=float, default=2.0, help="seconds between polls")
    follow_cmd.set_defaults(handler=cmd_follow)

    status = commands.add_parser("status", help="a one-shot summary of a submission")
    status.add_argument("id", type=int)
    status.set_defaults(handler=cmd_status)

    results = commands.add_parser(
        "results", help="download a submission and its attempts",
        description="json: the submission as the API returns it. csv: its rows of the per-attempt table that "
                    "export writes (the same columns, named and valued the same), a few of its columns unless "
                    "--all-columns.")
    results.add_argument("id", type=int)
    results.add_argument("--out", help="file to write (default: standard output)")
    results.add_argument("--format", choices=["json", "csv"], default="json")
    results.add_argument("--all-columns", action="store_true",
                         help="csv: every column of the per-attempt export, not only the terminal's few")
    results.add_argument("--wait", type=float, default=DOWNLOAD_WAIT, metavar="SECONDS",
                         help=f"csv: longest wait for the site to prepare the table (default {DOWNLOAD_WAIT:.0f})")
    results.set_defaults(handler=cmd_results)

    board = commands.add_parser("board", parents=[board_filters()], help="download a board")
    board.add_argument("env")
    board.add_argument("flow")
    board.add_argument("subset")
    board.add_argument("--format", choices=["csv", "json"], default="csv")
    board.add_argument("--out", help="file to write (default: standard output)")
    board.set_defaults(handler=cmd_board)

    export = commands.add_parser(
        "export", parents=[board_filters()],
        help="every attempt of a submission or a board: one row each (csv, parquet) or their trajectories (a zip)",
        description="Export every attempt of a submission (magebench export 42) or of a board's entries "
                    "(magebench export ENV global mini, ENV the environment as in the board's address): "
                    "scenario, repeat, score, outcome, error, IA/RA, "
                    "tokens, cost and seconds, one row each, as CSV or Parquet; or a zip of each attempt's "
                    "trajectory (replies, parsed actions, per-step scores, trace; frames with --frames). The "
                    "site builds each file once: until it is ready the command waits as the site asks "
                    "(Retry-After). A token shows its team's private submissions too.")
    export.add_argument("target", nargs="+", metavar="TARGET",
                        help="a submission id (42), or a board as ENV FLOW SUBSET (the parts of its address "
                             "on the site)")
    export.add_argument("--format", choices=list(EXPORT_FORMATS), default="csv")
    export.add_argument("--out", help="file to write (default: standard output, not a terminal for binary formats)")
    export.add_argument("--frames", action="store_true",
                        help="trajectories only: add every frame (PNG/JPEG images), most of the zip's size")
    export.add_argument("--wait", type=float, default=DOWNLOAD_WAIT, metavar="SECONDS",
                        help=f"longest wait in all for the site to prepare the file (default {DOWNLOAD_WAIT:.0f})")
    export.set_defaults(handler=cmd_export)

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
    """Run the command ``argv`` names (default: the program's arguments); its exit code."""
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
