"""How far a submission has got: its attempts counted by state and, while it waits or runs, its place
in the queue and the time it has left.

Apart from ``submissions.selectors`` because the time left is a job of its own: each submission's
observed time per attempt (or its board's, or its environment's), the live workers' slots and the
endpoints' limits, fed to one play of the fair schedule forward (``scheduling.simulate``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from django.conf import settings
from django.db.models import Avg, Count, F, FloatField, Max, OuterRef, Q, Subquery, Window
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, RowNumber
from django.utils import timezone

from catalogue.models import Scenario
from evaluators.endpoints.credentials import scrub_secrets
from submissions.models import Attempt, Submission
from submissions.scheduling import NEVER, Contender, SimOutcome, SimSubmission, SimWorker, simulate
from submissions.selectors import ACTIVE_SUBMISSIONS, endpoint_limit, queue_for


@dataclass
class Progress:
    total: int
    done: int
    scored: int
    running: int
    retrying: int
    pending: int
    infra_failed: int
    cancelled: int
    last_heartbeat: Any
    mean_seconds: float | None
    #: The platform's seconds per scored attempt (retries, rate-limit waits), which ``mean_seconds``
    #: leaves out and a time left must count.
    mean_wait_seconds: float | None = None

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0

    def resumable(self, *, active: bool) -> bool:
        """Whether resuming would queue anything: a running submission's waiting attempts are
        already queued, so only those retrying are worth sending again; a finished one's failed,
        cancelled and stuck attempts are."""
        if active:
            return self.retrying > 0
        return self.infra_failed + self.cancelled + self.pending + self.retrying > 0


_PROGRESS_COUNTS = dict(
    total=Count("id"),
    scored=Count("id", filter=Q(status=Attempt.Status.SCORED)),
    running=Count("id", filter=Q(status=Attempt.Status.RUNNING)),
    retrying=Count("id", filter=Q(status=Attempt.Status.RETRYING)),
    pending=Count("id", filter=Q(status=Attempt.Status.PENDING)),
    failed=Count("id", filter=Q(status=Attempt.Status.INFRA_FAILED)),
    cancelled=Count("id", filter=Q(status=Attempt.Status.CANCELLED)),
    heartbeat=Max("heartbeat_at"),
    seconds=Avg("duration_seconds", filter=Q(status=Attempt.Status.SCORED)),
    waits=Avg(Cast(KeyTextTransform("platform_wait_seconds", "details"), FloatField()),
              filter=Q(status=Attempt.Status.SCORED)),
)


def _progress(c: dict[str, Any]) -> Progress:
    return Progress(total=c["total"], done=c["scored"] + c["failed"] + c["cancelled"], scored=c["scored"],
                    running=c["running"], retrying=c["retrying"], pending=c["pending"], infra_failed=c["failed"],
                    cancelled=c["cancelled"], last_heartbeat=c["heartbeat"], mean_seconds=c["seconds"],
                    mean_wait_seconds=c.get("waits"))


def submission_progress(submission: Submission) -> Progress:
    counts = submission.attempts.aggregate(**_PROGRESS_COUNTS)
    if not counts["total"] and submission.prepare_requested_at is not None:
        # A run whose attempts a worker has yet to create waits with all of them.
        planned = _planned_attempts([submission]).get(submission.id, 0)
        counts |= {"total": planned, "pending": planned}
    return _progress(counts)


def submission_attempt_count(submission: Submission) -> int:
    """The submission's attempts, counting those of a new run a worker has yet to create (its
    board's scenarios × repeats)."""
    count = submission.attempts.count()
    if count or submission.prepare_requested_at is None or submission.source != Submission.Source.ENDPOINT:
        return count
    scenarios = Scenario.objects.filter(environment_id=submission.environment_id, suite=submission.suite,
                                        **Scenario.subset_filter(submission.subset)).count()
    return scenarios * submission.evaluation_settings.repeats


@dataclass
class QueueItem:
    submission: Submission
    progress: Progress
    #: 1 for the submission expected to finish first under the fair schedule; None once finished.
    position: int | None = None
    #: Seconds until this submission should finish, from a simulation of the fair schedule.
    eta_seconds: float | None = None
    #: Where the per-attempt time of the ETA came from: "this submission", "recent runs of this team
    #: on this board" (or "in this environment"), "recent runs of this board" or "... of this environment".
    eta_basis: str = ""
    #: True when work served before it has no observed time yet, so the ETA counts it as nothing
    #: and is a lower bound.
    eta_at_least: bool = False
    #: Why there is no ETA, when there is none for an active submission.
    eta_missing: str = ""
    #: The latest infrastructure error of an attempt (retrying or failed), as "kind: message".
    last_error: str = ""


#: Finished submissions per board whose attempt times stand in for a submission that has none yet.
ETA_HISTORY = 20


def _board_seconds(boards: set[tuple[str, str, str]]) -> dict[tuple[str, str, str], float]:
    """Mean attempt time of the latest finished submissions of each board (environment, flow, subset)."""
    from submissions.models import SubmissionResult

    seconds: dict[tuple[str, str, str], float] = {}
    for env, flow, subset in boards:
        values = [v for v in SubmissionResult.objects
                  .filter(submission__environment_id=env, submission__flow=flow, submission__subset=subset,
                          mean_seconds__isnull=False)
                  .order_by("-computed_at").values_list("mean_seconds", flat=True)[:ETA_HISTORY] if v is not None]
        if values:
            seconds[(env, flow, subset)] = sum(values) / len(values)
    return seconds


def _environment_seconds(envs: set[str]) -> dict[str, float]:
    """Mean attempt time of the latest finished submissions of each environment, any board."""
    from submissions.models import SubmissionResult

    seconds: dict[str, float] = {}
    for env in envs:
        values = [v for v in SubmissionResult.objects.filter(submission__environment_id=env, mean_seconds__isnull=False)
                  .order_by("-computed_at").values_list("mean_seconds", flat=True)[:ETA_HISTORY] if v is not None]
        if values:
            seconds[env] = sum(values) / len(values)
    return seconds


def _team_seconds(rest: list[Submission]) -> tuple[dict[tuple[int, str, str, str], float],
                                                  dict[tuple[int, str], float]]:
    """Mean attempt time of each team's own latest finished submissions, per board and per
    environment, in one query: a team's model is what decides how long its attempts take."""
    from submissions.models import SubmissionResult

    if not rest:
        return {}, {}
    latest = (SubmissionResult.objects
              .filter(submission__team_id__in={s.team_id for s in rest},
                      submission__environment_id__in={s.environment_id for s in rest}, mean_seconds__isnull=False)
              .annotate(recent=Window(RowNumber(), partition_by=[F("submission__team_id"),
                                                                 F("submission__environment_id")],
                                      order_by=F("computed_at").desc()))
              .filter(recent__lte=ETA_HISTORY)
              .values_list("submission__team_id", "submission__environment_id", "submission__flow",
                           "submission__subset", "mean_seconds"))
    by_board: dict[tuple[int, str, str, str], list[float]] = {}
    by_env: dict[tuple[int, str], list[float]] = {}
    for team, env, flow, subset, seconds in latest:
        if seconds is None:
            continue
        by_board.setdefault((team, env, flow, subset), []).append(seconds)
        by_env.setdefault((team, env), []).append(seconds)
    return ({key: sum(v) / len(v) for key, v in by_board.items()},
            {key: sum(v) / len(v) for key, v in by_env.items()})


def _per_attempt(items: list[QueueItem]) -> dict[int, tuple[float | None, str]]:
    """Each active submission's expected seconds per attempt and where that number comes from:
    its own attempts, else its team's recent runs (of this board, then of this environment), else
    anyone's recent runs of this board, then of this environment."""
    # The wall time of an attempt: the model's and the environment's, and what the platform waited.
    known: dict[int, tuple[float | None, str]] = {
        item.submission.id: (item.progress.mean_seconds + (item.progress.mean_wait_seconds or 0.0), "this submission")
        for item in items if item.progress.mean_seconds is not None}
    rest = [item.submission for item in items if item.submission.id not in known]
    team_boards, team_envs = _team_seconds(rest)
    for s in rest:
        if (s.team_id, s.environment_id, s.flow, s.subset) in team_boards:
            known[s.id] = (team_boards[(s.team_id, s.environment_id, s.flow, s.subset)],
                           "recent runs of this team on this board")
        elif (s.team_id, s.environment_id) in team_envs:
            known[s.id] = (team_envs[(s.team_id, s.environment_id)], "recent runs of this team in this environment")
    rest = [s for s in rest if s.id not in known]
    boards = _board_seconds({(s.environment_id, s.flow, s.subset) for s in rest})
    envs = _environment_seconds({s.environment_id for s in rest
                                 if (s.environment_id, s.flow, s.subset) not in boards})
    for s in rest:
        if (s.environment_id, s.flow, s.subset) in boards:
            known[s.id] = (boards[(s.environment_id, s.flow, s.subset)], "recent runs of this board")
        elif s.environment_id in envs:
            known[s.id] = (envs[s.environment_id], "recent runs of this environment")
        else:
            known[s.id] = (None, "")
    return known


#: The slots of a site whose workers keep no record (none has registered yet): one worker reading
#: every queue, as wide as what runs now.
UNREGISTERED = ""


def _sim_workers(running_total: int) -> tuple[list[SimWorker], bool]:
    """The live workers as the simulation's slots, and whether they come from the registry."""
    from submissions.workers import live_workers

    workers = [SimWorker(name=w.hostname, queues=list(w.queues), slots=w.concurrency) for w in live_workers()]
    if workers:
        return workers, True
    return [SimWorker(name=UNREGISTERED, queues=[q.name for q in settings.CELERY_TASK_QUEUES],
                      slots=max(1, running_total))], False


def _held(due_in: list[float], waiting: int, resume_at: datetime | None, now: datetime) -> list[float]:
    """When each waiting attempt may start, once the endpoint's own wait (its Retry-After, held for
    every attempt on it) is counted: none starts before it ends."""
    hold = (resume_at - now).total_seconds() if resume_at is not None else 0.0
    if hold <= 0:
        return due_in
    return [max(hold, due) for due in due_in] + [hold] * (waiting - len(due_in))


def _estimate(items: list[QueueItem]) -> None:
    """Fill in each active item's ETA by playing the fair schedule forward (scheduling.simulate)."""
    if not items:
        return
    now = timezone.now()
    per_attempt = _per_attempt(items)
    ids = [i.submission.id for i in items]
    running: dict[int, list[tuple[datetime | None, str]]] = {}
    # Attempts waiting to retry after an infrastructure error are not served before their time.
    due_in: dict[int, list[float]] = {}
    for submission_id, status, started_at, worker, next_try_at in (
            Attempt.objects.filter(Q(status=Attempt.Status.RUNNING)
                                   | Q(status=Attempt.Status.RETRYING, next_try_at__gt=now), submission_id__in=ids)
            .values_list("submission_id", "status", "started_at", "worker", "next_try_at")):
        if status == Attempt.Status.RUNNING:
            running.setdefault(submission_id, []).append((started_at, worker))
        elif next_try_at is not None:  # always, by the filter; the column itself may be empty
            due_in.setdefault(submission_id, []).append((next_try_at - now).total_seconds())
    # When each submission and team last had an attempt started, in seconds from now (the fair
    # order's turn-taking).
    last_started = {sid: (last - now).total_seconds() for sid, last in (
        Attempt.objects.filter(submission_id__in=ids, started_at__isnull=False).values("submission_id")
        .annotate(last=Max("started_at")).order_by().values_list("submission_id", "last"))}
    last_by_team: dict[int, float] = {}
    for item in items:
        if item.submission.id in last_started:
            team = item.submission.team_id
            last_by_team[team] = max(last_by_team.get(team, NEVER), last_started[item.submission.id])
    workers, registered = _sim_workers(sum(len(r) for r in running.values()))
    sims = []
    for item in items:
        s = item.submission
        seconds, _ = per_attempt[s.id]
        runs = running.get(s.id, [])
        left = [max(0.0, (seconds or 0.0) - ((now - started).total_seconds() if started else 0.0))
                for started, _ in runs]
        waiting = item.progress.pending + item.progress.retrying
        sims.append(SimSubmission(
            contender=Contender(submission_id=s.id, team_id=s.team_id, baseline=s.is_baseline or s.model.is_baseline,
                                subset=s.subset, created_at=s.created_at, endpoint=s.endpoint_url),
            queue=queue_for(s.environment_id), waiting=waiting,
            due_in=_held(due_in.get(s.id, []), waiting, s.calls_resume_at, now),
            running_left=left, running_on=[worker if registered else UNREGISTERED for _, worker in runs],
            per_attempt=seconds, last_started=last_started.get(s.id)))
    own: dict[tuple[int, str], list[tuple[int | None, str]]] = {}
    for item in items:
        own.setdefault((item.submission.team_id, item.submission.endpoint_url), []).append(
            (item.submission.endpoint_concurrency, item.submission.status))
    outcomes = simulate(sims, workers, endpoint_limit=settings.MAGEBENCH_ENDPOINT_CONCURRENCY,
                        last_by_team=last_by_team,
                        endpoint_limits={key: endpoint_limit(rows) for key, rows in own.items() if key[1]},
                        url_ceiling=settings.MAGEBENCH_ENDPOINT_URL_MAX_CALLS)
    for item in items:
        outcome = outcomes.get(item.submission.id, SimOutcome())
        seconds, basis = per_attempt[item.submission.id]
        item.eta_basis = basis
        if seconds is None:
            item.eta_missing = "no attempt of this board has finished yet"
        elif outcome.finish is None:
            item.eta_missing = "no live worker reads its queue"
        else:
            item.eta_seconds = outcome.finish
            item.eta_at_least = outcome.at_least
    order = {i.submission.id: ((outcomes[i.submission.id].finish is None,
                                outcomes[i.submission.id].finish or 0.0, i.submission.created_at, i.submission.id))
             for i in items}
    items.sort(key=lambda i: order[i.submission.id])
    for position, item in enumerate(items, start=1):
        item.position = position


def queue_list(limit: int = 50) -> list[QueueItem]:
    """Active submissions in the order they are expected to finish under the fair schedule, then
    the latest finished ones. Each active one's ETA comes from playing the schedule forward over
    the live workers' slots, with each submission's observed time per attempt."""
    latest_error = Attempt.objects.filter(submission=OuterRef("pk")).exclude(error_kind="").order_by("-id")
    base = (Submission.objects.select_related("model", "team", "environment")
            .annotate(error_kind=Subquery(latest_error.values("error_kind")[:1]),
                      error_message=Subquery(latest_error.values("error_message")[:1])))
    active = list(base.filter(status__in=ACTIVE_SUBMISSIONS).order_by("created_at", "id"))
    recent = list(base.exclude(status__in=ACTIVE_SUBMISSIONS).order_by("-created_at")[:limit])
    submissions = active + recent
    rows = cast(Iterable[dict[str, Any]], Attempt.objects.filter(submission_id__in=[s.id for s in submissions])
                .values("submission_id").annotate(**_PROGRESS_COUNTS).order_by())
    counts = {row.pop("submission_id"): row for row in rows}
    empty = {key: 0 for key in _PROGRESS_COUNTS} | {"heartbeat": None, "seconds": None, "waits": None}
    # A run whose attempts a worker has yet to create waits with all of them.
    for submission_id, planned in _planned_attempts([s for s in active if s.id not in counts]).items():
        counts[submission_id] = empty | {"total": planned, "pending": planned}
    items = [QueueItem(submission=s, progress=_progress(counts.get(s.id, empty)),
                       # Errors stored before URLs with credentials were refused may quote one.
                       last_error=scrub_secrets(f"{s.error_kind}: {s.error_message}") if s.error_kind else "")
             for s in submissions]
    waiting = items[:len(active)]
    _estimate(waiting)
    return waiting + items[len(active):]


def _planned_attempts(submissions: list[Submission]) -> dict[int, int]:
    """The attempts of new endpoint runs a worker has yet to create (their board's scenarios ×
    repeats), by submission, counted in one query."""
    waiting = [s for s in submissions if s.prepare_requested_at is not None and s.source == Submission.Source.ENDPOINT]
    if not waiting:
        return {}
    boards = Q()
    for s in waiting:
        boards |= Q(environment_id=s.environment_id, suite=s.suite)
    sizes: dict[tuple[str, str, str], int] = {}
    for env, suite, mini, full in (Scenario.objects.filter(boards).values("environment_id", "suite").annotate(
            mini=Count("id", filter=Q(in_mini=True)), full=Count("id", filter=Q(in_full=True))).order_by()
            .values_list("environment_id", "suite", "mini", "full")):
        sizes[(env, suite, "mini")], sizes[(env, suite, "full")] = mini, full
    return {s.id: sizes.get((s.environment_id, s.suite, s.subset), 0) * s.evaluation_settings.repeats
            for s in waiting}


def queue_seen_by(can_view: Callable[[Submission], bool], limit: int = 50) -> list[tuple[QueueItem, bool]]:
    """The queue as one visitor sees it: each item, and whether they may see what it is.

    A private submission they may not see keeps its place while it waits or runs (a row with its
    position and nothing else); once finished it has no place to keep and is left out.
    """
    seen = [(item, can_view(item.submission)) for item in queue_list(limit=limit)]
    return [(item, visible) for item, visible in seen if visible or item.position is not None]


def queue_item(submission: Submission) -> QueueItem | None:
    """The submission's place in the queue, or None once it has finished."""
    return next((item for item in queue_list(limit=0) if item.submission.id == submission.id), None)
