"""The database's numbers in /metrics: one GROUP BY each, over what the workers have recorded.

Model calls and provider failures happen in the worker containers; the attempt rows are where they
meet. ``Attempt.error_kind`` is the kind of failure that ended an attempt's latest try (the endpoint
client classifies provider failures into evaluators.endpoints.errors.KINDS; the engine records the
kind and clears it when a later try scores): no row is kept per call, so the counts are of attempts.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Sum

from submissions.models import Attempt, LiveWorker, Submission


@dataclass(frozen=True)
class AttemptGroup:
    env: str
    status: str
    error_kind: str
    attempts: int
    model_calls: int


def attempt_groups() -> list[AttemptGroup]:
    """Attempts by environment, status and the kind of their latest failure, with their model calls."""
    rows = (Attempt.objects.order_by().values("submission__environment_id", "status", "error_kind")
            .annotate(attempts=Count("id"), calls=Sum("model_calls")))
    return [AttemptGroup(env=row["submission__environment_id"], status=row["status"], error_kind=row["error_kind"],
                         attempts=row["attempts"], model_calls=row["calls"] or 0) for row in rows]


def submission_counts() -> dict[str, int]:
    """Submissions by status."""
    rows = Submission.objects.order_by().values("status").annotate(n=Count("id"))
    return {row["status"]: row["n"] for row in rows}


@dataclass(frozen=True)
class WorkerBeat:
    hostname: str
    queues: list[str]
    concurrency: int
    last_seen: datetime


def worker_beats() -> list[WorkerBeat]:
    """Every registered worker, live or gone stale (a stale one is what an operator looks for)."""
    return [WorkerBeat(hostname=w.hostname, queues=list(w.queues), concurrency=w.concurrency, last_seen=w.last_seen)
            for w in LiveWorker.objects.order_by("hostname")]
