"""A worker's heartbeat file, and the container health check that reads it without starting Django.

The worker touches the file each time it refreshes its LiveWorker row (submissions/workers.py). The
check costs a few milliseconds, where starting Django would cost seconds of CPU at every interval:

    python /app/config/heartbeat.py --max-age 120          (exit 0: fresh, 1: stale or missing)

Standard library only, so that it runs as a plain script.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

#: Where a worker's heartbeat file is unless MAGEBENCH_WORKER_HEARTBEAT_FILE says otherwise: outside
#: the shared data volume, so that each worker container has its own.
DEFAULT_HEARTBEAT_FILE = "/tmp/magebench-worker-heartbeat"
HEARTBEAT_FILE_VARIABLE = "MAGEBENCH_WORKER_HEARTBEAT_FILE"


def heartbeat_touch(path: str | Path) -> None:
    """Mark the file as fresh now (created if missing)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()  # an existing file's mtime set to now


def heartbeat_age(path: str | Path) -> float | None:
    """Seconds since the freshest of ``path`` and its siblings ``path.*`` changed (a dbm store, such
    as beat's schedule, may be several files); None when there is none."""
    path = Path(path)
    candidates = [path, *path.parent.glob(f"{path.name}.*")] if path.parent.is_dir() else [path]
    times = []
    for candidate in candidates:
        try:
            times.append(candidate.stat().st_mtime)
        except OSError:
            continue
    return max(0.0, time.time() - max(times)) if times else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Exit 0 if the heartbeat file changed within --max-age seconds.")
    parser.add_argument("--file", default=os.environ.get(HEARTBEAT_FILE_VARIABLE) or DEFAULT_HEARTBEAT_FILE)
    parser.add_argument("--max-age", type=float, default=120.0, help="seconds (default 120)")
    args = parser.parse_args(argv)
    age = heartbeat_age(args.file)
    if age is None:
        print(f"unhealthy: no heartbeat file at {args.file}", file=sys.stderr)
        return 1
    if age > args.max_age:
        print(f"unhealthy: heartbeat {age:.0f} s old (limit {args.max_age:.0f} s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
