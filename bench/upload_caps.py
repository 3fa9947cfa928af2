"""Upload caps: how long the site spends on a hostile file and on the largest legitimate one.

Three JSONL files are checked by the parser the site uses (``submissions.uploads.parse_upload``),
each with the caps of the default settings and, for comparison, with the caps lifted (the quick
test of a line, ``submissions.uploads.line_shape``, stays in both):

* hostile: 200,000 short lines (17 MB), every one a schema-valid run of one scenario;
* largest legitimate: 483 scenarios × 20 repeats, one short reply each (9,660 lines);
* many replies: 483 scenarios × 20 repeats × 50 replies (Sokoban Online's max_loop), 483,000 replies.

It prints the seconds each check took and how it ended (the runs read, or the first problem).
No database is needed: the scenarios are made-up keys.

Usage: .venv/bin/python bench/upload_caps.py [--skip-uncapped]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.base import default_environments, load_plugins  # noqa: E402
from submissions.uploads import UploadError, UploadLimits, parse_upload  # noqa: E402

FULL_SET = 483
MAX_REPEATS = 20
REPLY = "### Actions\nUp"
UNCAPPED = UploadLimits(max_lines=10**9, max_runs=10**9, max_replies_per_run=10**9, max_replies=10**9)
CAPPED = UploadLimits(max_seconds=20.0)


def _file(lines: int, replies: int) -> tuple[bytes, set[str]]:
    scenarios = [f"{n}-Sokoban-small-v0" for n in range(FULL_SET)]
    rows = (json.dumps({"scenario": scenarios[n // MAX_REPEATS % FULL_SET], "repeat": n % MAX_REPEATS,
                        "replies": [REPLY] * replies}) for n in range(lines))
    return "\n".join(rows).encode(), set(scenarios)


def _check(data: bytes, scenarios: set[str], limits: UploadLimits) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        runs = parse_upload(data, env="sokoban", flow="online", scenarios=scenarios, max_repeats=MAX_REPEATS,
                            limits=limits)
        outcome = f"{len(runs)} runs read"
    except UploadError as exc:
        outcome = f"refused: {exc.problems[-1]}"[:160]
    return time.perf_counter() - start, outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-uncapped", action="store_true", help="only the checks with the default caps")
    args = parser.parse_args()
    load_plugins(default_environments())
    files = {
        "hostile, 200,000 lines": _file(200_000, 1),
        "legitimate, 9,660 runs": _file(FULL_SET * MAX_REPEATS, 1),
        "legitimate, 483,000 replies": _file(FULL_SET * MAX_REPEATS, 50),
    }
    print(f"{'file':30} {'MB':>6} {'caps':>9} {'seconds':>8}  outcome")
    for name, (data, scenarios) in files.items():
        runs = [("default", CAPPED)] + ([] if args.skip_uncapped else [("lifted", UNCAPPED)])
        for label, limits in runs:
            seconds, outcome = _check(data, scenarios, limits)
            print(f"{name:30} {len(data) / 1e6:6.1f} {label:>9} {seconds:8.2f}  {outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
