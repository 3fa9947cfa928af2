"""What a chaos run records (events, outages, web answers, submissions), its checks and its report."""
from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

#: Seconds after the database is back during which a server error still counts as the database's.
DB_DOWN_GRACE = 5.0
#: Submission statuses that are over.
FINISHED = ("completed", "incomplete", "cancelled")


@dataclass
class Record:
    """Times are seconds since the chaos started."""

    events: list[tuple[float, str, str]] = field(default_factory=list)
    #: (from, to): the database down or its connections terminated (from == to then).
    db_down: list[tuple[float, float]] = field(default_factory=list)
    web_down: list[tuple[float, float]] = field(default_factory=list)
    requests: int = 0
    refused: int = 0
    server_errors: list[tuple[float, str, int]] = field(default_factory=list)
    submitted: dict[str, int] = field(default_factory=dict)
    submit_failures: int = 0


@dataclass
class Checks:
    lines: list[str] = field(default_factory=list)
    failed: int = 0

    def check(self, ok: bool, text: str) -> None:
        self.lines.append(f"[{'ok' if ok else 'FAIL'}] {text}")
        self.failed += 0 if ok else 1


def refused_results(logs: Iterable[str]) -> int:
    """Second results the try guard refused, as the workers' logs say."""
    return sum(text.count("not recorded") + text.count("dropping this try's result") for text in logs)


def check_server_errors(record: Record, checks: Checks) -> None:
    outside = [e for e in record.server_errors
               if not any(start <= e[0] <= end + DB_DOWN_GRACE for start, end in record.db_down)]
    checks.check(not outside, f"no server error outside the database's downtime (plus {DB_DOWN_GRACE:.0f} s): "
                              f"{len(outside)} of {len(record.server_errors)} 5xx {outside[:5]}")


def report(args: argparse.Namespace, stack: str, kinds: tuple[str, ...], record: Record, stop_seconds: list[float],
           chaos_seconds: float, drained: float, figures: list[str], checks: Checks) -> list[str]:
    counts = {kind: sum(1 for _, k, _ in record.events if k == kind) for kind in kinds}
    stops = stop_seconds
    lines = [f"# Chaos run: --stack {args.stack} --minutes {args.minutes} --seed {args.seed} --workers {args.workers} "
             f"--submit-pause {args.submit_pause[0]:g} {args.submit_pause[1]:g}",
             f"stack: {stack}",
             f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; chaos lasted {chaos_seconds / 60:.1f} min, "
             f"then the queue drained in {drained:.0f} s; load average at the end {os.getloadavg()[0]:.2f} "
             f"on {os.cpu_count()} cores (shared machine)",
             f"submissions made by team: {record.submitted}; refused while the database or the web process was "
             f"down (the team got an error, nothing was stored): {record.submit_failures}",
             f"chaos events ({len(record.events)}): {counts}",
             "worker SIGTERM to gone (s): " + (", ".join(f"{s:.1f}" for s in stops) or "none")
             + (f"; max {max(stops):.1f}" if stops else ""),
             f"web requests answered: {record.requests}, refused while the web process restarted: {record.refused}, "
             f"5xx: {len(record.server_errors)}",
             *figures, "", "## checks", *checks.lines, "", "## events"]
    lines += [f"{at:7.1f}s {kind:14} {what}" for at, kind, what in record.events]
    return lines
