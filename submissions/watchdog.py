"""The watchdog: queue again what no worker is doing (a dead worker's attempts, lost messages)."""
from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime, timedelta

from django.conf import settings as django_settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from submissions.models import Attempt, Submission
from submissions.services import attempts_enqueue_on_commit, submission_refresh_status, submissions_prepare_marked

logger = logging.getLogger(__name__)


def _of_active_submissions() -> QuerySet[Attempt]:
    return Attempt.objects.filter(submission__status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING])


def attempts_requeue_stalled(*, stalled_after_seconds: float, include_waiting: bool = True) -> dict[str, int]:
    """Queue again what no worker is doing: running attempts whose heartbeat stopped, waiting ones
    whose message could not be sent, and (with ``include_waiting``) every waiting one, for when the
    broker lost its messages.

    A stalled attempt that has used all its tries is failed with the reason instead: a scenario that
    kills its worker every time must not be retried for ever. Safe to call at any time: claiming is
    atomic, so a message for an attempt that is already being run or has finished does nothing.
    """
    now = timezone.now()
    cutoff = now - timedelta(seconds=stalled_after_seconds)
    active = _of_active_submissions()
    stalled = active.filter(status=Attempt.Status.RUNNING, heartbeat_at__lt=cutoff)
    max_tries = django_settings.MAGEBENCH_INFRA_MAX_TRIES
    given_up = list(stalled.filter(tries__gte=max_tries).values_list("id", "submission_id"))
    Attempt.objects.filter(id__in=[a for a, _ in given_up], status=Attempt.Status.RUNNING).update(
        status=Attempt.Status.INFRA_FAILED, error_kind="worker_lost", finished_at=now,
        error_message=f"the worker running this attempt stopped on each of its {max_tries} tries")
    stalled_ids = list(stalled.exclude(id__in=[a for a, _ in given_up]).values_list("id", flat=True))
    Attempt.objects.filter(id__in=stalled_ids, status=Attempt.Status.RUNNING).update(
        status=Attempt.Status.RETRYING, error_kind="worker_lost",
        error_message="the worker running this attempt stopped; queued again")
    for submission_id in {s for _, s in given_up}:
        submission_refresh_status(submission_id=submission_id)
    waiting = active.filter(status__in=[Attempt.Status.PENDING, Attempt.Status.RETRYING])
    if include_waiting:
        unsent: list[int] = list(waiting.values_list("id", flat=True))
    else:
        # A send that failed left queued_at empty; a moment's grace lets a commit's own send finish.
        grace = now - timedelta(seconds=UNSENT_GRACE_SECONDS)
        unsent = list(waiting.filter(queued_at__isnull=True, created_at__lt=grace).values_list("id", flat=True))
    queued = sorted(set(stalled_ids) | set(unsent))
    attempts_enqueue_on_commit(queued)
    return {"stalled": len(stalled_ids), "failed": len(given_up), "queued": len(queued)}


#: How long a new attempt may wait for its first message before the watchdog sends one itself.
UNSENT_GRACE_SECONDS = 30.0


#: A key the watchdog keeps in a Redis broker. Redis without persistence comes back from a restart
#: empty: the key's absence is how the watchdog learns that every queued message was lost.
BROKER_MARKER_KEY = "magebench:broker-marker"


def broker_lost_messages() -> bool:
    """Whether the broker has been emptied since the last call (the first call ever also says yes,
    which only re-sends the waiting attempts once). Brokers other than Redis keep their messages."""
    url = django_settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://")):
        return False
    import redis

    client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
    try:
        return bool(client.set(BROKER_MARKER_KEY, timezone.now().isoformat(), nx=True))
    finally:
        client.close()


def attempts_resend_idle_turns(*, idle_after_seconds: float) -> int:
    """Send again the turns of queues whose attempts wait while no one runs any of them.

    A worker killed while it held messages (taken ahead, or kept for a later retry) takes those
    turns with it until the broker hands them out again, an hour later. On a queue a live worker
    reads, with nothing of it running and every attempt due on it sent longer ago than
    ``idle_after_seconds``, no message can be left: a free worker would have run one long since.
    Each of those attempts gets a message again (an extra one finds nothing to do).
    """
    from submissions.selectors import queue_for
    from submissions.workers import live_workers

    now = timezone.now()
    cutoff = now - timedelta(seconds=idle_after_seconds)
    active = _of_active_submissions()
    due = active.filter(status__in=[Attempt.Status.PENDING, Attempt.Status.RETRYING]).filter(
        Q(next_try_at__isnull=True) | Q(next_try_at__lte=now))
    waiting: dict[str, list[tuple[int, datetime | None]]] = defaultdict(list)
    for attempt_id, env, queued_at in due.values_list("id", "submission__environment_id", "queued_at"):
        waiting[queue_for(env)].append((attempt_id, queued_at))
    if not waiting:
        return 0
    running = {queue_for(env) for env in active.filter(status=Attempt.Status.RUNNING)
               .values_list("submission__environment_id", flat=True).distinct()}
    read = {queue for worker in live_workers() for queue in worker.queues}
    idle = [attempt_id for queue, attempts in waiting.items() if queue in read and queue not in running
            and all(queued_at is not None and queued_at < cutoff for _, queued_at in attempts)
            for attempt_id, _ in attempts]
    if idle:
        logger.warning("%d attempt(s) wait on queues no one is running: sending their turns again", len(idle))
        attempts_enqueue_on_commit(idle)
    return len(idle)


def watchdog_run() -> dict[str, int]:
    """One round of the watchdog (Celery beat runs it every MAGEBENCH_WATCHDOG_EVERY_SECONDS)."""
    lost = broker_lost_messages()
    if lost:
        logger.warning("the broker holds none of our messages (restarted empty?): sending every waiting attempt again")
    stalled_after = django_settings.MAGEBENCH_STALLED_AFTER_SECONDS
    prepared = submissions_prepare_stalled(grace_seconds=0.0 if lost else UNSENT_GRACE_SECONDS)
    with transaction.atomic():
        counts = attempts_requeue_stalled(stalled_after_seconds=stalled_after, include_waiting=lost)
        resent = 0 if lost else attempts_resend_idle_turns(idle_after_seconds=stalled_after)
    return {**counts, "broker_emptied": int(lost), "idle_resent": resent, "prepared": prepared}


def submissions_prepare_stalled(*, grace_seconds: float) -> int:
    """Prepare the queued runs no worker prepared within ``grace_seconds`` (their message was lost,
    or the worker preparing one died): how many submissions that was."""
    cutoff = timezone.now() - timedelta(seconds=grace_seconds)
    stalled = Submission.objects.filter(status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING],
                                        prepare_requested_at__lt=cutoff).count()
    if stalled:
        logger.warning("%d queued submission(s) not prepared by a worker: preparing them now", stalled)
        submissions_prepare_marked(requested_before=cutoff)
    return stalled
