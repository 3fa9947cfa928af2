"""The submission's breaker: stop calling an endpoint that fails the same way attempt after attempt.

A spent quota, a revoked key, a refused parameter or an endpoint that is down fail every attempt
alike; retrying each attempt in turn only bills the team (a quota error on a 93-attempt set cost
1,488 requests) or keeps a worker busy for an hour. Once one cause has ended tries of
MAGEBENCH_BREAKER_ATTEMPTS different attempts with nothing else happening in between, the
submission is paused with that cause in words; resuming it starts the count again."""
from __future__ import annotations

import logging

from django.conf import settings as django_settings
from django.db import transaction

from evaluators.endpoints.errors import InfraError
from submissions.models import Submission
from submissions.selectors import ACTIVE_SUBMISSIONS

logger = logging.getLogger(__name__)



def breaker_record_failure(*, submission_id: int, attempt_id: int, error: InfraError) -> bool:
    """Count a try that ``error`` ended; pause the submission once the same cause has ended tries of
    enough attempts in a row. True when this call paused it."""
    cause = error.cause_key
    with transaction.atomic():
        row = (Submission.objects.select_for_update().filter(id=submission_id)
               .values("status", "breaker_cause", "breaker_attempts").first())
        if row is None:
            return False
        attempts = list(row["breaker_attempts"]) if row["breaker_cause"] == cause else []
        if attempt_id not in attempts:
            attempts.append(attempt_id)
        trip = len(attempts) >= django_settings.MAGEBENCH_BREAKER_ATTEMPTS and row["status"] in ACTIVE_SUBMISSIONS
        fields: dict[str, object] = {"breaker_cause": cause, "breaker_attempts": attempts[-50:]}
        if trip:
            fields.update(status=Submission.Status.PAUSED, status_reason=pause_reason(error, len(attempts)))
        Submission.objects.filter(id=submission_id).update(**fields)
    if trip:
        logger.warning("submission %s paused: %s", submission_id, error)
    return trip


def pause_reason(error: InfraError, attempts: int) -> str:
    """The paused submission's reason: the cause in the provider's words, and what to do."""
    return (f"paused after the same failure ended tries of {attempts} attempts in a row, so that no more "
            f"requests are spent on it: {error.kind}: {error.message[:600].rstrip('.')}. Fix the cause (quota, key, "
            "model id, request settings or the server), then resume the submission.")


def breaker_reset(*, submission_id: int) -> None:
    """Something other than that failure happened (a scored attempt): the count starts again."""
    Submission.objects.filter(id=submission_id).exclude(breaker_cause="").update(breaker_cause="",
                                                                                  breaker_attempts=[])
