"""How long the demo takes to fill every mini board with its baseline rows, measured over HTTP.

    scripts/demo &                      # PORT=8000 by default
    .venv/bin/python bench/demo_fill.py [--url http://127.0.0.1:8000] [--timeout 1800]

Waits for the site to answer, then polls the queue API until no baseline run of a mini set is
waiting or running, printing when each mini board's last run finished (seconds since the site came
up) and how many rows each mini board then shows. Only measured numbers are printed.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from typing import Any


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read().decode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--every", type=float, default=2.0, help="seconds between polls")
    args = parser.parse_args()
    base = args.url.rstrip("/")
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            queue = get(f"{base}/api/v1/queue/")
            break
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                print("the site never came up", file=sys.stderr)
                return 1
            time.sleep(0.5)
    up = time.monotonic()
    print("site up; polling the queue", flush=True)
    boards: set[tuple[str, str]] = set()
    finished: dict[tuple[str, str], float] = {}
    while time.monotonic() < deadline:
        waiting: set[tuple[str, str]] = set()
        for item in queue["active"]:
            board = item.get("board") or {}
            if board.get("subset") == "mini":
                waiting.add((board["env"], board["flow"]))
        for item in queue["recent"]:
            board = item.get("board") or {}
            if board.get("subset") == "mini":
                boards.add((board["env"], board["flow"]))
        boards |= waiting
        now = time.monotonic() - up
        for board in sorted(boards - waiting - set(finished)):
            finished[board] = now
            print(f"{now:7.1f} s  {board[0]}/{board[1]}/mini: every baseline run finished", flush=True)
        if boards and not waiting:
            break
        time.sleep(args.every)
        queue = get(f"{base}/api/v1/queue/")
    else:
        print(f"timed out after {args.timeout:.0f} s; still waiting: {sorted(boards - set(finished))}")
        return 1
    for env, flow in sorted(boards):
        rows = get(f"{base}/api/v1/boards/{env}/{flow}/mini/")
        entries = rows.get("entries", rows.get("rows", rows)) if isinstance(rows, dict) else rows
        print(f"{env}/{flow}/mini: {len(entries) if isinstance(entries, list) else '?'} rows")
    print(f"every mini board filled {max(finished.values()):.1f} s after the site came up")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
