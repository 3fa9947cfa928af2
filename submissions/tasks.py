"""Thin Celery tasks: they take ids and call one service."""
from __future__ import annotations

from celery import Task, shared_task
from django.db import InterfaceError, OperationalError

from config.logs import log_context
from evaluators.retry import Backoff
from submissions.endpoint_checks import RUN_ENDPOINT_CHECK_TASK
from submissions.export_files import BUILD_EXPORT_TASK
from submissions.services import PREPARE_SUBMISSION_TASK, RUN_ATTEMPT_TASK

#: A database that is restarting fails the claim: the message is sent again later instead of being
#: acknowledged and lost (the attempt is still waiting, so nothing was done twice).
CLAIM_BACKOFF = Backoff(first=2.0, cap=60.0, jitter=1.0)


@shared_task(name=RUN_ATTEMPT_TASK, bind=True, acks_late=True, max_retries=None)
def run_attempt_task(self: Task, attempt_id: int) -> None:
    """Run the fairest attempt due on the queues this worker reads, starting from the queue of
    ``attempt_id`` (which need not be the attempt run: messages are interchangeable, see
    engine.attempt_run_next). Infrastructure failures are tried again later, never scored."""
    from django.conf import settings

    from submissions.engine import attempt_run_next
    from submissions.selectors import queue_of_attempt

    try:
        delivered_on = (self.request.delivery_info or {}).get("routing_key") or settings.CELERY_TASK_DEFAULT_QUEUE
        # The queues this worker reads (-Q), which its pool processes inherit from the main one.
        reads = list(self.app.amqp.queues.consume_from or ())
        attempt_run_next(queue=queue_of_attempt(attempt_id) or delivered_on, worker=self.request.hostname or "",
                         hint=attempt_id, reads=reads)
    except (OperationalError, InterfaceError) as exc:
        raise self.retry(exc=exc, countdown=CLAIM_BACKOFF.delay(self.request.retries + 1)) from exc


@shared_task(name=RUN_ENDPOINT_CHECK_TASK, acks_late=True)
def run_endpoint_check_task(check_id: int) -> None:
    """Make an endpoint check's one request on a worker of its environment's queue. A message
    delivered twice does nothing the second time: only a waiting check is taken."""
    from submissions.endpoint_checks import endpoint_check_run

    endpoint_check_run(check_id=check_id)


@shared_task(name=PREPARE_SUBMISSION_TASK, bind=True, acks_late=True, max_retries=None)
def prepare_submission_task(self: Task, submission_id: int) -> None:
    """Create a queued run's attempts and send their turns, off the request that queued it. A
    message delivered twice, or after a worker took the job on its own, finds nothing left to do."""
    from submissions.services import submission_prepare

    try:
        with log_context(submission_id=submission_id):
            submission_prepare(submission_id=submission_id)
    except (OperationalError, InterfaceError) as exc:
        raise self.retry(exc=exc, countdown=CLAIM_BACKOFF.delay(self.request.retries + 1)) from exc


@shared_task(name="submissions.run_upload_check", acks_late=True)
def run_upload_check_task(check_id: int) -> None:
    """Check a stored file as an upload would be checked; a check already done is left alone."""
    from submissions.upload_checks import upload_check_run

    upload_check_run(check_id=check_id)


@shared_task(name="submissions.watchdog", ignore_result=False)
def watchdog_task() -> dict[str, int]:
    """Celery beat's periodic check for attempts whose worker died or whose message was lost."""
    from submissions.watchdog import watchdog_run

    return watchdog_run()


@shared_task(name=BUILD_EXPORT_TASK, acks_late=True)
def build_export_task(spec: dict[str, object]) -> str:
    """Build one per-attempt export file (submissions.export_files); a file already built is kept."""
    from submissions.export_files import ExportSpec, export_file_build

    return str(export_file_build(ExportSpec.from_message(spec)))
