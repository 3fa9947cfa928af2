"""The official WebUI evaluator, run from an official checkout in a subprocess of its own.

The checkout is never part of this repository: its folder (and the folder its dependencies were
installed to) are given to the benches that call it on their command lines.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench._official.runs import official_env

#: One official evaluation may take this long before its process group is stopped (chromedriver
#: has been seen to stop answering on some pages).
OFFICIAL_TIMEOUT = 600

# The official entry point as its WebUI environment calls it; the time is that of the call alone,
# without the interpreter's start and imports.
_EVALUATE = """
import json, sys, time
from env.utils.WebUI_utils import evaluate_different_interaction
started = time.perf_counter()
result, _ = evaluate_different_interaction(sys.argv[1], sys.argv[2], sys.argv[3])
print("AES " + json.dumps([result, time.perf_counter() - started]))
"""


@dataclass(frozen=True)
class OfficialEvaluation:
    #: AES in %, None when there is none (``failure`` says why).
    aes: float | None
    #: Seconds the evaluator's call took; the timeout (a lower bound) when it was stopped.
    seconds: float
    failure: str = ""
    stopped: bool = False


def evaluate_officially(code: Path, deps: Path | None, page: Path, folder: Path) -> OfficialEvaluation:
    """The official evaluator's AES of the reply in ``folder`` against the page in ``page``."""
    argv = [sys.executable, "-c", _EVALUATE, str(page / "index.html"), str(folder / "index.html"),
            str(page / "actions.py")]
    # A session of its own, so that a stopped evaluation takes its chromedrivers and browsers with it.
    process = subprocess.Popen(argv, cwd=code, env=official_env(deps), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=OFFICIAL_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return OfficialEvaluation(None, float(OFFICIAL_TIMEOUT), f"stopped after {OFFICIAL_TIMEOUT} s", stopped=True)
    for line in reversed(output.splitlines()):
        if line.startswith("AES "):
            aes, seconds = json.loads(line[4:])
            return OfficialEvaluation(100.0 * float(aes), float(seconds))
    last = next((line for line in reversed(output.splitlines()) if line.strip()), "no output")
    return OfficialEvaluation(None, 0.0, f"failed: {last.strip()[:160]}")


def add_official_arguments(parser: argparse.ArgumentParser) -> None:
    """The command-line options that name the official checkout and its dependencies."""
    parser.add_argument("--official-code", type=Path, required=True,
                        help="an official MageBench checkout's folder (env/utils/WebUI_utils.py)")
    parser.add_argument("--official-deps", type=Path, help="its dependencies' folder (pip install --target)")


def official_folders(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[Path, Path | None]:
    """The checkout and dependency folders the options name, the checkout refused without the evaluator."""
    code = args.official_code.resolve()
    if not (code / "env" / "utils" / "WebUI_utils.py").is_file():
        parser.error(f"{code} has no env/utils/WebUI_utils.py")
    return code, args.official_deps.resolve() if args.official_deps else None


def chosen_pages(root: Path, names: list[str]) -> list[Path]:
    """The page folders named (default: every page folder under ``root``)."""
    if names:
        return [root / name for name in names]
    return sorted(p for p in root.iterdir() if (p / "index.html").exists())
