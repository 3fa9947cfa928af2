"""An endpoint's "come back later", kept for every attempt of the team on that endpoint.

A provider's Retry-After is about its endpoint and key, not about the one request it refused: every
request sent before it ends is refused again and counted against the team. So the wait is written
on the team's running submissions on that URL (``calls_resume_at``): no attempt of theirs is
claimed before it ends, and attempts already playing wait in place before their next request
(keeping their heartbeat, and stopping if the submission is cancelled or paused meanwhile) rather
than throwing away the episode they have paid for.
"""
from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import DatabaseError, InterfaceError, OperationalError, connection
from django.utils import timezone

from submissions.models import Submission
from submissions.selectors import ACTIVE_SUBMISSIONS

logger = logging.getLogger(__name__)
#: How often a waiting attempt shows it is alive (and notices a cancel or a pause).
BEAT_EVERY = 2.0


def endpoint_hold(*, submission_id: int, seconds: float) -> None:
    """No attempt of the team's submissions on this endpoint starts or asks within ``seconds``."""
    until = timezone.now() + timedelta(seconds=seconds)
    row = Submission.objects.filter(id=submission_id).values("team_id", "endpoint_url").first()
    if row is None or not row["endpoint_url"]:
        return
    (Submission.objects.filter(team_id=row["team_id"], endpoint_url=row["endpoint_url"], status__in=ACTIVE_SUBMISSIONS)
     .exclude(calls_resume_at__gte=until).update(calls_resume_at=until))


@dataclass
class EndpointPacer:
    """The worker's side of a hold (``evaluators.endpoints.client.Pacer``) for one attempt.

    ``keep_alive`` refreshes the attempt's heartbeat while it waits and raises to stop it (a cancel,
    a pause); ``longest`` bounds one wait (MAGEBENCH_ENDPOINT_MAX_RETRY_AFTER).
    """

    submission_id: int
    keep_alive: Callable[[], None]
    longest: float
    sleep: Callable[[float], None] = field(default=time.sleep)

    def wait(self) -> float:
        try:
            resume_at = (Submission.objects.filter(id=self.submission_id)
                         .values_list("calls_resume_at", flat=True).first())
        except (OperationalError, InterfaceError) as exc:
            # The database is restarting: a hold cannot be read, and losing the episode over it would
            # cost more than one request that may come early. The next request or beat reconnects.
            logger.warning("submission %s: endpoint hold not read, database unavailable: %s", self.submission_id, exc)
            with contextlib.suppress(DatabaseError):
                connection.close()
            return 0.0
        left = min((resume_at - timezone.now()).total_seconds(), self.longest) if resume_at else 0.0
        waited = 0.0
        while left - waited > 0:
            pause = min(BEAT_EVERY, left - waited)
            self.sleep(pause)
            waited += pause
            self.keep_alive()
        return waited

    def hold(self, seconds: float) -> None:
        try:
            endpoint_hold(submission_id=self.submission_id, seconds=seconds)
        except (OperationalError, InterfaceError) as exc:
            # This attempt still waits out the Retry-After itself; only the others cannot be told.
            logger.warning("submission %s: endpoint hold not written, database unavailable: %s", self.submission_id,
                           exc)
            with contextlib.suppress(DatabaseError):
                connection.close()
