"""The attempt engine: claim the fairest waiting attempt, run it with heartbeats, record what happened.

Every write of a running try names its try number, so a try that was handed to another worker can
never write over it; a finished episode's result waits out a database restart before it is written.
"""
from __future__ import annotations

import contextlib
import logging
import socket
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from django.conf import settings as django_settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction
from django.db.models import Case, F, IntegerField, QuerySet, Value, When
from django.utils import timezone

from catalogue.prompt_sets import prompt_sets_for_run
from catalogue.selectors import scenario_spec
from config.logs import log_context
from evaluators.agents.flows import Cancelled
from evaluators.endpoints.errors import InfraError
from evaluators.retry import Backoff, call_with_retries
from evaluators.runner import EnvironmentFailure, run_attempt
from submissions.breaker import breaker_record_failure, breaker_reset
from submissions.endpoints import endpoint_client
from submissions.models import Attempt, Submission
from submissions.pacing import EndpointPacer, endpoint_hold
from submissions.rescoring import replay_recorded, self_report
from submissions.scheduling import Contender, fair_order, longest_first
from submissions.selectors import due_attempts, endpoint_limit, queue_contenders, queue_for, scenario_seconds
from submissions.services import (
    attempts_enqueue,
    submission_listed_models_record,
    submission_refresh_status,
    submissions_prepare_marked,
)
from submissions.shutdown import STOPPED_KIND, STOPPED_MESSAGE, stop_requested

logger = logging.getLogger(__name__)
T = TypeVar("T")


#: A restarting database: look again soon, then every few seconds (for MAGEBENCH_DB_OUTAGE_SECONDS).
DATABASE_BACKOFF = Backoff(first=0.5, cap=5.0)


class Superseded(Cancelled):
    """This worker no longer owns the attempt: the watchdog gave it to another worker (this one was
    paused or cut off for too long). Its result must not be written."""


class WorkerStopping(Cancelled):
    """This worker is stopping (SIGTERM, Ctrl-C): the attempt goes back to the queue, unscored."""


class Paused(Cancelled):
    """The submission was paused (its breaker tripped): the attempt goes back to wait, unscored."""


def _owned(attempt: Attempt) -> QuerySet[Attempt]:
    """The attempt's row while this try still owns it: every write of a running try goes through it,
    so a try that was given up on and handed to another worker can never write over the new one."""
    return Attempt.objects.filter(id=attempt.id, status=Attempt.Status.RUNNING, tries=attempt.tries)


@dataclass
class _Heartbeat:
    attempt: Attempt
    last: float = field(default_factory=time.monotonic)  # the claim itself was the first beat

    def __call__(self, progress: dict[str, Any]) -> None:
        self._beat(steps=progress.get("steps", 0), model_calls=progress.get("model_calls", 0))

    def keep_alive(self) -> None:
        """A beat while the attempt waits between requests: nothing has progressed."""
        self._beat()

    def _beat(self, **progress: int) -> None:
        if stop_requested():
            raise WorkerStopping()
        now = time.monotonic()
        if now - self.last < django_settings.MAGEBENCH_HEARTBEAT_EVERY_SECONDS:
            return
        self.last = now
        try:
            beat = _owned(self.attempt).update(heartbeat_at=timezone.now(), **progress)
            status = Submission.objects.filter(id=self.attempt.submission_id).values_list("status", flat=True).first()
        except (OperationalError, InterfaceError) as exc:
            # The database is restarting: keep playing, the next beat or the final write reconnects.
            logger.warning("attempt %s: heartbeat skipped, database unavailable: %s", self.attempt.id, exc)
            _reconnect()
            return
        if status == Submission.Status.CANCELLED:
            raise Cancelled()
        if status == Submission.Status.PAUSED:
            raise Paused()
        if beat == 0:
            raise Superseded()


def _reconnect() -> None:
    with contextlib.suppress(DatabaseError):
        connection.close()


def _with_database(write: Callable[[], T], *, what: str) -> T:
    """Run ``write`` (autocommit ORM calls), waiting out a database restart of up to
    MAGEBENCH_DB_OUTAGE_SECONDS instead of losing a finished episode's result."""

    def waiting(exc: Exception, failures: int, pause: float) -> None:
        logger.warning("%s: database unavailable, trying again in %.1fs: %s", what, pause, exc)
        _reconnect()

    return call_with_retries(write, retry_if=lambda exc: isinstance(exc, (OperationalError, InterfaceError)),
                             backoff=DATABASE_BACKOFF, budget_seconds=django_settings.MAGEBENCH_DB_OUTAGE_SECONDS,
                             on_retry=waiting)


class EndpointBusy(Exception):
    """The attempt's endpoint already serves as many attempts as the platform allows at once."""


def _endpoint_has_room(attempt_id: int) -> bool:
    """Whether one more attempt may call this attempt's endpoint now (uploads call none)."""
    row = Submission.objects.filter(attempts__id=attempt_id).values_list("endpoint_url", "team_id").first()
    return row is None or _endpoint_room(row[0] or "", team_id=row[1])


def _endpoint_room(url: str, *, team_id: int) -> bool:
    """Whether one more of this team's attempts may call this endpoint now: within the team's own
    limit (``endpoint_limit``; another team's setting on the same URL limits that team only) and,
    when the operators set one, the URL's ceiling across teams (MAGEBENCH_ENDPOINT_URL_MAX_CALLS).

    The submissions whose attempts are counted are locked for the check and the claim, so two
    workers cannot both take the last free place (on SQLite, writes are serialised anyway).
    """
    if not url:
        return True
    ceiling = django_settings.MAGEBENCH_ENDPOINT_URL_MAX_CALLS
    on_url = Submission.objects.select_for_update().filter(endpoint_url=url)
    locked = list((on_url if ceiling > 0 else on_url.filter(team_id=team_id)).values_list(
        "team_id", "endpoint_concurrency", "status"))
    limit = endpoint_limit([(value, status) for team, value, status in locked if team == team_id])
    fresh = timezone.now() - timedelta(seconds=django_settings.MAGEBENCH_STALLED_AFTER_SECONDS)
    running = Attempt.objects.filter(submission__endpoint_url=url, status=Attempt.Status.RUNNING,
                                     heartbeat_at__gte=fresh)
    if limit > 0 and running.filter(submission__team_id=team_id).count() >= limit:
        return False
    return ceiling <= 0 or running.count() < ceiling



def attempt_claim(*, attempt_id: int, worker: str = "") -> Attempt | None:
    """Atomically move a waiting attempt to running; None when another worker has it or it is done.

    Raises EndpointBusy when its endpoint is at its concurrency limit: the attempt stays waiting.
    """
    with transaction.atomic():
        if not _endpoint_has_room(attempt_id):
            raise EndpointBusy()
        return _claim(attempt_id, worker or socket.gethostname())


def _claim(attempt_id: int, worker: str) -> Attempt | None:
    now = timezone.now()
    claimed = Attempt.objects.filter(
        id=attempt_id,
        status__in=[Attempt.Status.PENDING, Attempt.Status.RETRYING],
        submission__status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING],
    ).update(status=Attempt.Status.RUNNING, started_at=now, heartbeat_at=now, tries=F("tries") + 1,
             worker=worker[:200], next_try_at=None)
    if claimed != 1:
        return None
    attempt = Attempt.objects.select_related("submission", "scenario").get(id=attempt_id)
    Submission.objects.filter(id=attempt.submission_id, status=Submission.Status.QUEUED).update(
        status=Submission.Status.RUNNING, started_at=now)
    return attempt


def _claim_next_of(contender: Contender, worker: str) -> Attempt | None:
    """Atomically move one due attempt of this submission to running; None if others took them all.

    Raises EndpointBusy when its endpoint is at its concurrency limit.
    """
    # Estimated before any row is locked, so the lock lasts no longer than it did.
    longest = _longest_first_order(scenario_seconds(contender.submission_id, timezone.now()))
    with transaction.atomic():
        if contender.endpoint and not _endpoint_room(contender.endpoint, team_id=contender.team_id):
            raise EndpointBusy()
        # Rows another worker is claiming are skipped rather than waited for (PostgreSQL; elsewhere
        # the conditional update below is what keeps a claim single). One row is locked at a time:
        # locking a batch would hide the rest of it from a worker whose message then finds nothing
        # due, and a message that finds nothing is dropped, leaving its attempt without one.
        tried: list[int] = []
        for _ in range(CLAIM_CANDIDATES):
            attempt_id = (Attempt.objects.select_for_update(skip_locked=True)
                          .filter(due_attempts(timezone.now()), submission_id=contender.submission_id)
                          .exclude(id__in=tried).order_by(*longest, "id").values_list("id", flat=True).first())
            if attempt_id is None:
                break
            attempt = _claim(attempt_id, worker)
            if attempt is not None:
                return attempt
            tried.append(attempt_id)
    return None


def _longest_first_order(seconds: dict[int, float]) -> list[Case]:
    """The claim's sort key before ``id`` (the creation order): the attempt's scenario's rank by
    ``scheduling.longest_first``, 0 for a scenario with no estimate (served first); none when no
    scenario has one."""
    ranks = longest_first(seconds)
    if not ranks:
        return []
    return [Case(*(When(scenario_id=scenario_id, then=Value(rank)) for scenario_id, rank in ranks.items()),
                 default=Value(0), output_field=IntegerField())]


#: Due attempts of one submission tried in turn before moving on to the next submission.
CLAIM_CANDIDATES = 5


@dataclass(frozen=True)
class NextClaim:
    """What a free worker found on its queue: the attempt it now runs (if any), and whether due
    attempts were left waiting because their endpoint is at its concurrency limit."""

    attempt: Attempt | None
    endpoint_busy: bool = False


def attempt_claim_next(*, queues: Collection[str], worker: str = "") -> NextClaim:
    """Atomically move the fairest attempt due on these Celery queues to running (scheduling.fair_key).

    A claim lost to another worker moves on to the next submission in the order.
    """
    worker = worker or socket.gethostname()
    due = queue_contenders(queues=queues)
    blocked = False
    for contender in fair_order(due.contenders, due.served):
        if contender.endpoint and due.endpoint_full(contender):
            blocked = True
            continue
        try:
            attempt = _claim_next_of(contender, worker)
        except EndpointBusy:
            blocked = True
            continue
        if attempt is not None:
            return NextClaim(attempt, blocked)
    return NextClaim(None, blocked)


def attempt_run_next(*, queue: str, worker: str = "", hint: int | None = None, reads: Collection[str] = ()) -> None:
    """Run the fairest attempt due now on the queues this worker reads (``queue``, the message's
    own, and ``reads``), and send again the messages that keep every due attempt's turn.

    Messages are interchangeable: each one runs whatever is due first when a worker is free, so
    the order in which they were sent does not decide who is served. Every waiting attempt has
    sent one, so each queue always holds at least as many messages as it has attempts due; one
    that finds nothing does nothing. A worker reading several queues serves them all by one
    order (so the demo's single worker fills every mini board before any full set); running
    another queue's attempt on this message sends one on this queue again at once, to keep its
    count. ``hint`` is the attempt the message was sent for (and names its queue).
    """
    if stop_requested():
        # A stopping worker starts nothing: the turn goes back for another worker.
        if hint is not None:
            attempts_enqueue([hint])
        return
    queues = {queue, *reads}
    # A run queued meanwhile gets its attempts before this turn is given: its preparation's own
    # message waits behind every turn sent before it, and so would its place in the fair order.
    submissions_prepare_marked(queues=queues)
    claim = attempt_claim_next(queues=queues, worker=worker)
    if claim.attempt is not None:
        if hint is not None and queue_for(claim.attempt.submission.environment_id) != queue:
            attempts_enqueue([hint])
        delay = _attempt_play(claim.attempt)
        if delay is not None:
            # An infrastructure failure: the same attempt is due again after the delay, never scored.
            attempts_enqueue([claim.attempt.id], countdown=delay)
        return
    if hint is None:
        return
    if claim.endpoint_busy:
        # Not a failure and not a try: the team's server is busy with our other attempts.
        attempts_enqueue([hint], countdown=django_settings.MAGEBENCH_ENDPOINT_BUSY_RETRY_SECONDS)
        return
    # A message that came early for its retry (e.g. sent again by the watchdog) is kept for then.
    now = timezone.now()
    retry_at = Attempt.objects.filter(id=hint, status=Attempt.Status.RETRYING, next_try_at__gt=now,
                                      submission__status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING],
                                      ).values_list("next_try_at", flat=True).first()
    if retry_at is not None:
        attempts_enqueue([hint], countdown=(retry_at - now).total_seconds())
        return
    # A claim skips rows locked by anyone: another worker claiming them, or a short write such as
    # attempts_enqueue stamping queued_at on the attempts it has just sent. Attempts still due then go
    # untaken while this message was their turn: it comes back shortly instead of being dropped.
    if queue_contenders(queues=queues).contenders:
        attempts_enqueue([hint], countdown=LOCKED_RETRY_SECONDS)


#: How soon a message that found every due attempt locked by someone else tries again.
LOCKED_RETRY_SECONDS = 0.5


def attempt_run(*, attempt_id: int, worker: str = "") -> float | None:
    """Run one attempt. Returns a delay in seconds when it must be tried again later.

    Safe to call for any attempt at any time, as often as a broker delivers it: only a waiting
    attempt is claimed, and only the try that claimed it may write its result.
    """
    try:
        attempt = attempt_claim(attempt_id=attempt_id, worker=worker)
    except EndpointBusy:
        # Not a failure and not a try: the team's server is busy with our other attempts.
        return django_settings.MAGEBENCH_ENDPOINT_BUSY_RETRY_SECONDS
    if attempt is None:
        return None
    return _attempt_play(attempt)


def _attempt_play(attempt: Attempt) -> float | None:
    """Play a claimed attempt to its end and record it; a delay when it must be tried again later."""
    # Every line logged meanwhile, by any module, names the attempt and its submission (config.logs).
    with log_context(attempt_id=attempt.id, submission_id=attempt.submission_id):
        return _attempt_play_and_record(attempt)


def _attempt_play_and_record(attempt: Attempt) -> float | None:
    submission = attempt.submission
    relative = Path("trajectories") / str(submission.id) / str(attempt.id) / f"try-{attempt.tries}"
    started = time.monotonic()
    try:
        settings = submission.evaluation_settings
        prompts = prompt_sets_for_run(submission.environment_id, submission.suite, submission.flow,
                                      settings.prompt_version)
        if attempt.recorded is not None:
            result = replay_recorded(
                scenario=scenario_spec(attempt.scenario), flow=submission.flow, settings=settings,
                recorded=attempt.recorded, out_dir=django_settings.MEDIA_ROOT / relative,
                progress=_Heartbeat(attempt), prompts=prompts)
        else:
            heartbeat = _Heartbeat(attempt)
            pacer = EndpointPacer(submission_id=submission.id, keep_alive=heartbeat.keep_alive,
                                  longest=django_settings.MAGEBENCH_ENDPOINT_MAX_RETRY_AFTER)
            client = endpoint_client(submission, pacer=pacer)
            try:
                result = run_attempt(
                    scenario=scenario_spec(attempt.scenario), flow=submission.flow, settings=settings,
                    model=client, out_dir=django_settings.MEDIA_ROOT / relative, progress=heartbeat,
                    prompts=prompts,
                )
            finally:
                _listed_models_keep(submission, client.listed_models)
    except (WorkerStopping, Paused) as stop:
        _hand_back(attempt, stopping=isinstance(stop, WorkerStopping))
        return None
    except Superseded:
        logger.warning("attempt %s try %s: another worker has taken it over; dropping this try's result",
                       attempt.id, attempt.tries)
        return None
    except Cancelled:
        _write_then_refresh(attempt, lambda: _owned(attempt).update(
            status=Attempt.Status.CANCELLED, finished_at=timezone.now(), trajectory_path=str(relative)))
        return None
    except (InfraError, EnvironmentFailure, ValueError) as exc:
        elapsed = time.monotonic() - started
        return _with_database(partial(_attempt_infra_failure, attempt, exc, relative, elapsed),
                              what=f"attempt {attempt.id}")
    diagnostics = result.diagnostics
    # The board's seconds are the model's and the environment's, not the platform's retries and waits.
    elapsed = max(0.0, time.monotonic() - started - result.platform_wait_seconds)

    def record() -> None:
        written = _owned(attempt).update(
            status=Attempt.Status.SCORED, score=result.score, outcome=result.outcome[:32], steps=result.steps,
            model_calls=result.model_calls, invalid_action=diagnostics.invalid_action,
            repeating_action=diagnostics.repeating_action, parse_errors=diagnostics.parse_errors,
            details={**result.details, "diagnostics": diagnostics.as_dict(), **result.extra,
                     "endpoint_retries": result.endpoint_retries, "replies_cut": result.replies_cut,
                     "refusals": result.refusals, "platform_wait_seconds": result.platform_wait_seconds,
                     **self_report(submission.environment_id, attempt.recorded or {}, result.score)},
            error_kind="", error_message="", prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens, trajectory_path=str(relative),
            finished_at=timezone.now(), heartbeat_at=timezone.now(), duration_seconds=elapsed,
        )
        # Zero rows is also what a second go sees when the first one's commit landed but its answer
        # was lost to the outage: only a row in another try's hands means the result was dropped.
        if written == 0 and not _landed(attempt, Attempt.Status.SCORED):
            logger.warning("attempt %s try %s finished after another worker took it over; not recorded",
                           attempt.id, attempt.tries)
        elif written:
            # One line per scored attempt: with its ids (log_context), what an operator follows a run by.
            logger.info("attempt %s try %s scored %s in %.1f s, %s model calls", attempt.id, attempt.tries,
                        result.score, elapsed, result.model_calls)

    _write_then_refresh(attempt, record)
    _with_database(partial(breaker_reset, submission_id=attempt.submission_id),
                   what=f"submission {attempt.submission_id}")
    return None


def _listed_models_keep(submission: Submission, listed: list[str] | None) -> None:
    """What the endpoint listed at /models, kept with the submission (asked when no model id was given)."""
    if listed is None:
        return
    try:
        submission_listed_models_record(submission_id=submission.id, listed=listed)
    except DatabaseError:  # the list is asked again by the next attempt; the attempt's own outcome comes first
        logger.warning("submission %s: the endpoint's model list was not kept", submission.id, exc_info=True)


def _hand_back(attempt: Attempt, *, stopping: bool = True) -> None:
    """Give a stopped try's attempt back to the queue; it keeps its try count, so this try can write no more.
    A paused submission's attempt waits for the resume, which queues it again."""
    marks = {"error_kind": STOPPED_KIND, "error_message": STOPPED_MESSAGE} if stopping else {}

    def write() -> int:
        return _owned(attempt).update(status=Attempt.Status.RETRYING, next_try_at=None, heartbeat_at=timezone.now(),
                                      **marks)

    if _with_database(write, what=f"attempt {attempt.id}") and stopping:
        logger.warning("attempt %s try %s: the worker is stopping; queued again", attempt.id, attempt.tries)
        attempts_enqueue([attempt.id])


def _write_then_refresh(attempt: Attempt, write: Callable[[], object]) -> None:
    """A try's last write, then its submission's status; each waits out a database restart."""
    _with_database(write, what=f"attempt {attempt.id}")
    _with_database(lambda: submission_refresh_status(submission_id=attempt.submission_id),
                   what=f"submission {attempt.submission_id}")


def _landed(attempt: Attempt, status: str) -> bool:
    return Attempt.objects.filter(id=attempt.id, tries=attempt.tries, status=status).exists()


def _attempt_infra_failure(attempt: Attempt, exc: Exception, relative: Path, elapsed: float) -> float | None:
    kind = getattr(exc, "kind", "configuration_error")
    message = str(exc)[:2000]
    permanent = isinstance(exc, InfraError) and exc.permanent
    give_up = permanent or attempt.tries >= django_settings.MAGEBENCH_INFRA_MAX_TRIES
    server_wait = exc.retry_after if isinstance(exc, InfraError) and exc.retry_after else 0.0
    # The server's wait, when it named one, over the platform's own: asking earlier is refused again.
    delay = max(Backoff(first=django_settings.MAGEBENCH_INFRA_RETRY_BASE_SECONDS).delay(attempt.tries), server_wait)
    fields: dict[str, Any] = {
        "error_kind": kind, "error_message": message, "trajectory_path": str(relative),
        "duration_seconds": elapsed, "heartbeat_at": timezone.now(),
    }
    if give_up:
        fields.update(status=Attempt.Status.INFRA_FAILED, finished_at=timezone.now())
    else:
        fields.update(status=Attempt.Status.RETRYING, next_try_at=timezone.now() + timedelta(seconds=delay))
    if _owned(attempt).update(**fields) == 0 and not _landed(attempt, fields["status"]):
        return None  # another worker has this attempt now; its outcome is that worker's to record
    logger.warning("attempt %s: %s (%s), try %s%s", attempt.id, kind, message, attempt.tries,
                   "; giving up" if give_up else f"; retrying in {delay:.1f}s")
    if server_wait and not give_up:
        endpoint_hold(submission_id=attempt.submission_id, seconds=server_wait)
    if isinstance(exc, InfraError):
        breaker_record_failure(submission_id=attempt.submission_id, attempt_id=attempt.id, error=exc)
    submission_refresh_status(submission_id=attempt.submission_id)
    return None if give_up else delay
