"""Backups at a fixed interval, for as long as the container runs: one JSON line per event."""
from __future__ import annotations

import json
import signal
import sys
import time
from datetime import UTC, datetime
from types import FrameType
from typing import TextIO

from deploy import store
from deploy.settings import Settings


class Stopped(BaseException):
    """SIGTERM or SIGINT: the container is stopping. Not an Exception: no failure handler takes it."""


def log(level: str, message: str, backup: str | None = None, out: TextIO | None = None) -> None:
    line = {"time": datetime.now(UTC).isoformat(timespec="seconds"), "level": level, "message": message,
            "backup": backup}
    stream = out or sys.stdout
    stream.write(json.dumps(line) + "\n")
    stream.flush()


def _stop(signum: int, _frame: FrameType | None) -> None:
    # Once: a second signal must not cut short the cleanup the first one started.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise Stopped(signal.Signals(signum).name)


def first_due(settings: Settings, now: float) -> float:
    """When the first backup is due: at once, unless one younger than the interval exists."""
    backups = store.backups_complete(settings.dest)
    if not backups:
        return now
    return min(now + settings.every_seconds, max(now, backups[0].created.timestamp() + settings.every_seconds))


def tick(settings: Settings) -> None:
    """One backup and a prune; a failure is logged, and the next tick tries again."""
    try:
        backup = store.backup_take(settings)
    except Exception as error:
        log("error", f"backup failed: {error}")
        return
    log("info", f"backup taken ({backup.size()} bytes)", backup.name)
    try:
        removed = store.backups_prune(settings.dest, keep=settings.keep)
    except OSError as error:
        log("error", f"prune failed: {error}")
        return
    for name in removed:
        log("info", "old backup removed", name)


def schedule_run(settings: Settings) -> None:
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    log("info", f"backups every {settings.every_seconds:g} s into {settings.dest}, keeping {settings.keep}")
    try:
        due = first_due(settings, time.time())
        while True:
            time.sleep(max(0.0, due - time.time()))
            tick(settings)
            # The next one an interval after this one was due; after a long pause, an interval from now.
            due = max(due + settings.every_seconds, time.time())
    except Stopped as stop:
        # backup_take removed its partial folder on the way out.
        log("info", f"stopped ({stop})")
