"""Reads for submissions, attempts and trajectories.

A submission's progress and its place in the queue, with the time it has left, are
``submissions.progress_selectors``.
"""
from __future__ import annotations

import json
import re
import statistics
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Count, F, Max, Q, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from accounts.models import Team
from evaluators.base import all_plugins, get_plugin
from evaluators.endpoints.credentials import display_url
from evaluators.trajectory import INDEX_NAME, load_trajectory
from scoring.ordering import natural_key
from scoring.stats import AttemptOutcome
from submissions.models import Attempt, EndpointCheck, Submission, UploadFileCheck
from submissions.scheduling import NEVER, Contender, Served

FRAME_NAME = re.compile(r"^(frame_\d{4,6}|state\d{2}_(target|generated))\.png$")
# An artifact is named by the trajectory index, which a model's output never writes into: a plain
# file name is still required so a tampered index cannot reach outside its folder.
ARTIFACT_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.json$")


def queue_for(env: str) -> str:
    """The Celery queue an environment's attempts are sent to: its plug-in's kind of work, as the
    settings route it."""
    try:
        kind = get_plugin(env).queue
    except KeyError:
        return settings.CELERY_TASK_DEFAULT_QUEUE
    if kind is None:
        return settings.CELERY_TASK_DEFAULT_QUEUE
    return settings.MAGEBENCH_QUEUE_ROUTES.get(kind, kind)


def queue_of_attempt(attempt_id: int) -> str | None:
    """The Celery queue an attempt's messages go to; None for an attempt that no longer exists."""
    env = Attempt.objects.filter(id=attempt_id).values_list("submission__environment_id", flat=True).first()
    return None if env is None else queue_for(env)


ACTIVE_SUBMISSIONS = (Submission.Status.QUEUED, Submission.Status.RUNNING)


def due_attempts(now: datetime) -> Q:
    """Attempts a worker may start now: pending ones, and retrying ones whose wait is over, of
    submissions whose endpoint has not asked to be left alone until later."""
    waiting = (Q(status=Attempt.Status.PENDING)
               | Q(status=Attempt.Status.RETRYING, next_try_at__isnull=True)
               | Q(status=Attempt.Status.RETRYING, next_try_at__lte=now))
    return waiting & (Q(submission__calls_resume_at__isnull=True) | Q(submission__calls_resume_at__lte=now))


#: Latest scored attempts per scenario whose median time estimates its next attempt.
SCENARIO_HISTORY = 10


def scenario_seconds(submission_id: int, now: datetime) -> dict[int, float]:
    """The median time of the latest scored attempts of each scenario this submission has due now,
    on its flow, any team's (the scenario fixes the environment); scenarios never scored are absent.

    One query, so a claim can afford it. No fallback to the board's time: every scenario of one
    submission would get the same, which orders nothing among them (``scheduling.longest_first``).
    """
    due = Attempt.objects.filter(due_attempts(now), submission_id=submission_id).values("scenario_id")
    flow = Submission.objects.filter(id=submission_id).values("flow")
    latest = (Attempt.objects
              .filter(scenario_id__in=due, submission__flow__in=flow, status=Attempt.Status.SCORED,
                      duration_seconds__isnull=False)
              .annotate(recent=Window(RowNumber(), partition_by=[F("scenario_id")],
                                      order_by=[F("finished_at").desc(nulls_last=True), F("id").desc()]))
              .filter(recent__lte=SCENARIO_HISTORY)
              .values_list("scenario_id", "duration_seconds"))
    times: dict[int, list[float]] = {}
    for scenario_id, seconds in latest:
        if seconds is not None:  # excluded by the filter; said again for the type
            times.setdefault(scenario_id, []).append(seconds)
    return {scenario_id: statistics.median(values) for scenario_id, values in times.items()}


@dataclass
class DueWork:
    """What one queue could start now, and what the fair order counts across every queue."""

    contenders: list[Contender]
    #: Last starts in epoch seconds.
    served: Served
    #: Attempts with a fresh heartbeat per endpoint URL, for the operators' ceiling across teams.
    running_by_endpoint: dict[str, int]
    #: The same per team and endpoint URL, for each team's own limit.
    running_by_team_endpoint: dict[tuple[int, str], int] = field(default_factory=dict)

    def endpoint_full(self, contender: Contender) -> bool:
        """Whether the contender's endpoint has no room for it by these counts, without reading each
        team's own setting (never above the platform's limit): ``engine`` checks that one, locked."""
        limit = settings.MAGEBENCH_ENDPOINT_CONCURRENCY
        ceiling = settings.MAGEBENCH_ENDPOINT_URL_MAX_CALLS
        team_running = self.running_by_team_endpoint.get((contender.team_id, contender.endpoint), 0)
        return (0 < limit <= team_running) or (0 < ceiling <= self.running_by_endpoint.get(contender.endpoint, 0))


_CONTENDER_FIELDS = ("submission_id", "submission__team_id", "submission__is_baseline",
                     "submission__model__is_baseline", "submission__subset", "submission__created_at",
                     "submission__endpoint_url")


def _contender(row: dict[str, Any]) -> Contender:
    return Contender(submission_id=row["submission_id"], team_id=row["submission__team_id"],
                     baseline=bool(row["submission__is_baseline"] or row["submission__model__is_baseline"]),
                     subset=row["submission__subset"], created_at=row["submission__created_at"],
                     endpoint=row["submission__endpoint_url"] or "")


def _served_now() -> tuple[Served, dict[str, int], dict[tuple[int, str], int]]:
    """Running attempts and latest starts of the active submissions, and fresh runs per endpoint."""
    fresh = timezone.now() - timedelta(seconds=settings.MAGEBENCH_STALLED_AFTER_SECONDS)
    running = Q(status=Attempt.Status.RUNNING)
    rows = (Attempt.objects.filter(submission__status__in=ACTIVE_SUBMISSIONS, started_at__isnull=False)
            .values("submission_id", "submission__team_id", "submission__endpoint_url")
            .annotate(n=Count("id", filter=running), fresh=Count("id", filter=running & Q(heartbeat_at__gte=fresh)),
                      last=Max("started_at")).order_by())
    served = Served()
    by_endpoint: dict[str, int] = {}
    by_team_endpoint: dict[tuple[int, str], int] = {}
    for row in rows:
        team, submission, last = row["submission__team_id"], row["submission_id"], row["last"].timestamp()
        served.running_by_team[team] = served.running_by_team.get(team, 0) + row["n"]
        served.running_by_submission[submission] = row["n"]
        served.last_by_team[team] = max(served.last_by_team.get(team, NEVER), last)
        served.last_by_submission[submission] = last
        if row["submission__endpoint_url"]:
            url = row["submission__endpoint_url"]
            by_endpoint[url] = by_endpoint.get(url, 0) + row["fresh"]
            by_team_endpoint[(team, url)] = by_team_endpoint.get((team, url), 0) + row["fresh"]
    return served, by_endpoint, by_team_endpoint


def queue_contenders(*, queues: Collection[str]) -> DueWork:
    """The submissions with attempts due on these queues now, with what ranks them."""
    envs = [env for env in Submission.objects.filter(status__in=ACTIVE_SUBMISSIONS)
            .values_list("environment_id", flat=True).distinct().order_by() if queue_for(env) in queues]
    rows = (Attempt.objects.filter(due_attempts(timezone.now()), submission__status__in=ACTIVE_SUBMISSIONS,
                                   submission__environment_id__in=envs)
            .values(*_CONTENDER_FIELDS).annotate(n=Count("id")).order_by())
    served, by_endpoint, by_team_endpoint = _served_now()
    return DueWork(contenders=[_contender(row) for row in rows], served=served, running_by_endpoint=by_endpoint,
                   running_by_team_endpoint=by_team_endpoint)


def queue_work(queue: str) -> str:
    """What a queue's workers do, in the words of the queue page."""
    work = ["model calls"] if queue == settings.CELERY_TASK_DEFAULT_QUEUE else []
    work += [plugin.queue_work for plugin in sorted(all_plugins(), key=lambda plugin: (plugin.position, plugin.slug))
             if plugin.queue_work and queue_for(plugin.slug) == queue]
    return " and ".join(work) or queue


@dataclass(frozen=True)
class QueueLoad:
    """One Celery queue now: attempts waiting for it, attempts running on it, workers reading it."""

    queue: str
    work: str
    waiting: int
    running: int
    #: Live workers that read this queue, and any other worker seen running its attempts.
    workers: int
    #: Whether a live worker reads this queue; None when no worker has registered at all.
    read: bool | None = None

    @property
    def unserved(self) -> bool:
        """Work is waiting and no live worker reads this queue: its workers may be down.

        A worker reading several queues and busy on another one's work still serves this one; with
        no registered worker at all, only waiting work with nothing of its kind running is flagged.
        """
        if self.waiting == 0:
            return False
        return not self.read if self.read is not None else self.running == 0


def queue_loads(viewer_team_ids: Collection[int] | None = None) -> list[QueueLoad]:
    """Waiting and running attempts per queue, and the workers serving each.

    With ``viewer_team_ids`` the attempts counted are those of the submissions that viewer may see
    (``visible_entries``): another team's private run must not show up, nor its size, in a stranger's
    counts. None counts everything (staff, the operators' tools).
    """
    from submissions.workers import live_workers

    fresh = timezone.now() - timedelta(seconds=settings.MAGEBENCH_STALLED_AFTER_SECONDS)
    live = Attempt.objects.filter(status__in=Attempt.ACTIVE, submission__status__in=ACTIVE_SUBMISSIONS)
    seen = live if viewer_team_ids is None else live.filter(
        submission__in=Submission.objects.filter(visible_entries(viewer_team_ids)))
    counts: dict[str, dict[str, int]] = {q.name: {"waiting": 0, "running": 0} for q in settings.CELERY_TASK_QUEUES}
    for row in seen.values("submission__environment_id", "status").annotate(n=Count("id")):
        bucket = counts.setdefault(queue_for(row["submission__environment_id"]), {"waiting": 0, "running": 0})
        bucket["running" if row["status"] == Attempt.Status.RUNNING else "waiting"] += row["n"]
    workers: dict[str, set[str]] = {}
    registered = list(live_workers().values_list("hostname", "queues"))
    for hostname, queues in registered:
        for queue in queues:
            workers.setdefault(queue, set()).add(hostname)
    readers = {queue: bool(names) for queue, names in workers.items()}
    for env, worker in (live.filter(status=Attempt.Status.RUNNING, heartbeat_at__gte=fresh)
                        .values_list("submission__environment_id", "worker").distinct()):
        workers.setdefault(queue_for(env), set()).add(worker)
    return [QueueLoad(queue=name, work=queue_work(name), waiting=c["waiting"], running=c["running"],
                      workers=len(workers.get(name, ())),
                      read=readers.get(name, False) if registered else None) for name, c in counts.items()]


def attempt_outcomes(submission_ids: list[int], *, with_breakdown: bool = False) -> dict[int, list[AttemptOutcome]]:
    """Every attempt of these submissions as the board sees it, grouped by submission."""
    fields = ["id", "submission_id", "scenario_id", "repeat", "status", "score", "invalid_action", "repeating_action",
              "duration_seconds", "model_calls", "prompt_tokens", "completion_tokens"]
    if with_breakdown:
        fields.append("details__breakdown")
    grouped: dict[int, list[AttemptOutcome]] = {submission_id: [] for submission_id in submission_ids}
    # An upload's replies are played back here: its calls, tokens and time are not the model's.
    uploads = set(Submission.objects.filter(id__in=submission_ids, source=Submission.Source.UPLOAD)
                  .values_list("id", flat=True))
    rows = Attempt.objects.filter(submission_id__in=submission_ids).order_by().values_list(*fields)
    for (attempt_id, submission_id, scenario_id, repeat, status, score, ia, ra, seconds, calls, prompt, completion,
         *extra) in rows.iterator(chunk_size=5000):
        breakdown = extra[0] if extra and isinstance(extra[0], dict) else None
        grouped[submission_id].append(AttemptOutcome(
            attempt_id=attempt_id, scenario_id=scenario_id, repeat=repeat, scored=status == Attempt.Status.SCORED,
            infra_failed=status == Attempt.Status.INFRA_FAILED, score=score, invalid_action=ia, repeating_action=ra,
            breakdown=breakdown, seconds=seconds, measured=submission_id not in uploads, model_calls=calls,
            prompt_tokens=prompt, completion_tokens=completion))
    return grouped


def submission_attempts(submission: Submission) -> list[Attempt]:
    """A submission's attempts by scenario in natural order (level_2 before level_10), then repeat."""
    attempts = submission.attempts.select_related("scenario").order_by("repeat", "id")
    return sorted(attempts, key=lambda attempt: natural_key(attempt.scenario.key))


@dataclass
class ScenarioRow:
    key: str
    attempts: list[Attempt]

    @property
    def scored(self) -> int:
        return sum(1 for a in self.attempts if a.score is not None)

    @property
    def mean(self) -> float | None:
        scores = [a.score for a in self.attempts if a.score is not None]
        return sum(scores) / len(scores) if scores else None


def scenario_rows(attempts: list[Attempt]) -> list[ScenarioRow]:
    """A submission's attempts grouped per scenario (in the order given), for its results table."""
    rows: dict[int, ScenarioRow] = {}
    for attempt in attempts:
        row = rows.setdefault(attempt.scenario_id, ScenarioRow(key=attempt.scenario.key, attempts=[]))
        row.attempts.append(attempt)
    return list(rows.values())


def trajectory_dir(attempt: Attempt) -> Path | None:
    if not attempt.trajectory_path:
        return None
    root = Path(settings.MEDIA_ROOT).resolve()
    directory = (root / attempt.trajectory_path).resolve()
    if root not in directory.parents:
        return None
    return directory


def attempt_trajectory(attempt: Attempt) -> dict[str, Any] | None:
    directory = trajectory_dir(attempt)
    if directory is None or not (directory / INDEX_NAME).exists():
        return None
    return load_trajectory(directory)


def attempt_trace_path(attempt: Attempt) -> Path | None:
    directory = trajectory_dir(attempt)
    path = directory / "trace.zip" if directory is not None else None
    return path if path is not None and path.is_file() else None


def attempt_frame_path(attempt: Attempt, name: str) -> Path | None:
    directory = trajectory_dir(attempt)
    if directory is None or not FRAME_NAME.match(name):
        return None
    path = directory / name
    return path if path.is_file() else None


def attempt_artifact(attempt: Attempt, name: str) -> dict[str, Any] | None:
    """A JSON document stored beside the trajectory index (e.g. the football engine log), if readable."""
    directory = trajectory_dir(attempt)
    if directory is None or not ARTIFACT_NAME.match(name):
        return None
    path = (directory / name).resolve()
    if path.parent != directory or not path.is_file():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return document if isinstance(document, dict) else None


# --- a team's submissions -----------------------------------------------------------------------

@dataclass(frozen=True)
class TeamSubmission:
    submission: Submission
    #: The mean and standard error as its board computes them; None while nothing is scored.
    mean: float | None
    se: float | None


def team_submissions(team: Team, *, member: bool) -> list[TeamSubmission]:
    """The team's submissions, newest first: all of them for its members, and for anyone else only
    what the public boards could show (published or baseline, and not hidden by the maintainers)."""
    from scoring.stats import summarise_entry  # the board's own summary, for results never stored

    queryset = (Submission.objects.filter(team=team).select_related("model", "environment", "result")
                .defer("result__scenario_scores", "result__first_attempts", "result__scenario_means",
                       "result__best_of_n")
                .order_by("-created_at", "-id"))
    if not member:
        queryset = queryset.filter(Q(is_public=True) | Q(is_baseline=True), hidden=False)
    submissions = list(queryset)
    numbers: dict[int, tuple[float | None, float | None]] = {}
    for submission in submissions:
        # A missing one-to-one row raises an AttributeError subclass, which getattr turns into None.
        result = getattr(submission, "result", None)
        if result is not None:
            numbers[submission.id] = (result.mean, result.se)
    # A submission still running, or one finished before results were stored, is summarised from its attempts.
    missing = [submission.id for submission in submissions if submission.id not in numbers]
    if missing:
        for submission_id, outcomes in attempt_outcomes(missing).items():
            summary = summarise_entry(outcomes)
            numbers[submission_id] = (summary.mean, summary.se)
    return [TeamSubmission(submission, *numbers[submission.id]) for submission in submissions]


def endpoint_limit(submissions: Collection[tuple[int | None, str]]) -> int:
    """Attempts of one team that may call one endpoint at once (0: no limit), given that team's
    submissions on it: the platform's limit, or lower where the team set its own on a submission
    still running against it. Another team's setting on the same URL limits that team's calls only."""
    limit = settings.MAGEBENCH_ENDPOINT_CONCURRENCY
    active = (Submission.Status.QUEUED, Submission.Status.RUNNING)
    own = [value for value, status in submissions if value and status in active]
    if own:
        return min(own) if limit <= 0 else min([limit, *own])
    return limit


def visible_entries(viewer_team_ids: Collection[int] = ()) -> Q:
    """Submissions the boards and lists show to a viewer: public ones and baselines, plus the viewer's
    own teams' private ones; never what the maintainers hid."""
    return (Q(is_public=True) | Q(is_baseline=True) | Q(team_id__in=list(viewer_team_ids))) & Q(hidden=False)


# Endpoint checks ---------------------------------------------------------------------------------

def endpoint_check_stale(check: EndpointCheck, now: datetime | None = None) -> bool:
    """Whether an unfinished check has outlived any worker that could still finish it."""
    limit = timedelta(seconds=settings.MAGEBENCH_ENDPOINT_CHECK_STALE_SECONDS)
    return check.status != EndpointCheck.Status.FINISHED and check.created_at < (now or timezone.now()) - limit


def endpoint_checks_active(team_id: int, now: datetime) -> int:
    """The team's checks waiting for or held by a worker; a stale one (its worker died) does not count."""
    fresh = now - timedelta(seconds=settings.MAGEBENCH_ENDPOINT_CHECK_STALE_SECONDS)
    return EndpointCheck.objects.filter(team_id=team_id, created_at__gte=fresh, status__in=[
        EndpointCheck.Status.QUEUED, EndpointCheck.Status.RUNNING]).count()


def endpoint_checks_in_window(team_id: int, now: datetime) -> tuple[int, datetime | None]:
    """How many checks the team started within the window, and when the oldest of them leaves it."""
    since = now - timedelta(seconds=settings.MAGEBENCH_ENDPOINT_CHECK_WINDOW_SECONDS)
    recent = EndpointCheck.objects.filter(team_id=team_id, created_at__gte=since)
    oldest = recent.order_by("created_at").values_list("created_at", flat=True).first()
    leaves = oldest + timedelta(seconds=settings.MAGEBENCH_ENDPOINT_CHECK_WINDOW_SECONDS) if oldest else None
    return recent.count(), leaves


def endpoint_check_visible(team_ids: Collection[int], check_id: int) -> EndpointCheck | None:
    """A check of one of these teams; None for any other (another team's checks name its endpoint)."""
    return EndpointCheck.objects.select_related("scenario").filter(id=check_id, team_id__in=team_ids).first()


def endpoint_check_shown(check: EndpointCheck) -> dict[str, Any]:
    """A check as the API and the submit page show it. One that no worker finished in time (its
    worker died) reads as finished with that reason, so that no one polls it for ever."""
    state, result = check.status, check.result or None
    if endpoint_check_stale(check):
        state = EndpointCheck.Status.FINISHED
        result = {"ok": False, "reachable": None, "error": {
            "kind": "platform_error", "status": None,
            "message": "no worker finished the test call in time; try again"}}
    return {"id": check.id, "status": state, "env": check.environment_id, "flow": check.flow,
            "subset": check.subset, "suite": check.suite, "endpoint_url": display_url(check.endpoint_url),
            "endpoint_model": check.endpoint_model, "settings": check.settings, "created_at": check.created_at,
            "finished_at": check.finished_at, "result": result if state == EndpointCheck.Status.FINISHED else None}


def upload_check_visible(team_ids: Collection[int], check_id: int) -> UploadFileCheck | None:
    """A stored check of a file by one of these teams; None for any other team's."""
    return UploadFileCheck.objects.filter(id=check_id, team_id__in=team_ids).first()


def upload_check_shown(check: UploadFileCheck, now: datetime | None = None) -> dict[str, Any]:
    """A stored check as the API and the upload page show it. One still pending after
    MAGEBENCH_UPLOAD_CHECK_STALE_SECONDS (its worker died, or its message was lost) reads as invalid,
    saying so, so that no one waits on it for ever."""
    state, problems = check.status, list(check.problems)
    limit = timedelta(seconds=settings.MAGEBENCH_UPLOAD_CHECK_STALE_SECONDS)
    if state == UploadFileCheck.Status.PENDING and check.created_at < (now or timezone.now()) - limit:
        state, problems = UploadFileCheck.Status.INVALID, ["upload: no worker finished the check in time; "
                                                           "check the file again"]
    return {"id": check.id, "status": state, "valid": state == UploadFileCheck.Status.VALID,
            "env": check.environment_id, "flow": check.flow, "subset": check.subset, "suite": check.suite,
            "file_bytes": check.file_bytes, "problems": problems,
            "result": check.result or None, "created_at": check.created_at, "finished_at": check.finished_at}
