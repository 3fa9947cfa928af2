"""Thin Celery tasks: they take ids and call one service."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="submissions.run_attempt", acks_late=True)
def run_attempt_task(attempt_id: int) -> None:
    from submissions.services import attempt_run

    from submissions.services import attempts_enqueue

    delay = attempt_run(attempt_id=attempt_id)
    if delay is not None:
        # An infrastructure failure: try the same attempt again later, never score it.
        attempts_enqueue([attempt_id], countdown=delay)


@shared_task(name="submissions.watchdog")
def watchdog_task() -> dict[str, int]:
    """Celery beat's periodic check for attempts whose worker died (see attempts_requeue_stalled)."""
    from django.conf import settings
    from django.db import transaction

    from submissions.services import attempts_requeue_stalled

    with transaction.atomic():
        return attempts_requeue_stalled(stalled_after_seconds=settings.MAGEBENCH_STALLED_AFTER_SECONDS,
                                        include_waiting=False)
