"""Thin Celery tasks: they take ids and call one service."""
from __future__ import annotations

from celery import Task, shared_task
from django.db import InterfaceError, OperationalError

from evaluators.retry import Backoff

#: A database that is restarting fails the claim: the message is sent again later instead of being
#: acknowledged and lost (the attempt is still waiting, so nothing was done twice).
CLAIM_BACKOFF = Backoff(first=2.0, cap=60.0, jitter=1.0)


@shared_task(name="submissions.run_attempt", bind=True, acks_late=True, max_retries=None)
def run_attempt_task(self: Task, attempt_id: int) -> None:
    from submissions.engine import attempt_run
    from submissions.services import attempts_enqueue

    try:
        delay = attempt_run(attempt_id=attempt_id, worker=self.request.hostname or "")
        if delay is not None:
            # An infrastructure failure: try the same attempt again later, never score it.
            attempts_enqueue([attempt_id], countdown=delay)
    except (OperationalError, InterfaceError) as exc:
        raise self.retry(exc=exc, countdown=CLAIM_BACKOFF.delay(self.request.retries + 1)) from exc


@shared_task(name="submissions.watchdog", ignore_result=False)
def watchdog_task() -> dict[str, int]:
    """Celery beat's periodic check for attempts whose worker died or whose message was lost."""
    from submissions.watchdog import watchdog_run

    return watchdog_run()
