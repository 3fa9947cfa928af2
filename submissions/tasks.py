"""Thin Celery tasks: they take ids and call one service."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="submissions.run_attempt", acks_late=True)
def run_attempt_task(attempt_id: int) -> None:
    from submissions.services import attempt_run

    delay = attempt_run(attempt_id=attempt_id)
    if delay is not None:
        # An infrastructure failure: try the same attempt again later, never score it.
        run_attempt_task.apply_async((attempt_id,), countdown=delay)
