"""Reads for submissions, attempts and trajectories."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Avg, Count, Max, Q, QuerySet

from evaluators.trajectory import INDEX_NAME, load_trajectory
from leaderboard.stats import AttemptOutcome
from submissions.models import Attempt, Submission

FRAME_NAME = re.compile(r"^(frame_\d{4,6}|state\d{2}_(target|generated))\.png$")
# An artifact is named by the trajectory index, which a model's output never writes into: a plain
# file name is still required so a tampered index cannot reach outside its folder.
ARTIFACT_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.json$")


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

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0

    @property
    def eta_seconds(self) -> float | None:
        remaining = self.pending + self.running + self.retrying
        if not remaining or not self.mean_seconds:
            return None
        return remaining * self.mean_seconds


def submission_progress(submission: Submission) -> Progress:
    c = submission.attempts.aggregate(
        total=Count("id"),
        scored=Count("id", filter=Q(status=Attempt.Status.SCORED)),
        running=Count("id", filter=Q(status=Attempt.Status.RUNNING)),
        retrying=Count("id", filter=Q(status=Attempt.Status.RETRYING)),
        pending=Count("id", filter=Q(status=Attempt.Status.PENDING)),
        failed=Count("id", filter=Q(status=Attempt.Status.INFRA_FAILED)),
        cancelled=Count("id", filter=Q(status=Attempt.Status.CANCELLED)),
        heartbeat=Max("heartbeat_at"),
        seconds=Avg("duration_seconds", filter=Q(status=Attempt.Status.SCORED)),
    )
    return Progress(total=c["total"], done=c["scored"] + c["failed"] + c["cancelled"], scored=c["scored"],
                    running=c["running"], retrying=c["retrying"], pending=c["pending"], infra_failed=c["failed"],
                    cancelled=c["cancelled"], last_heartbeat=c["heartbeat"], mean_seconds=c["seconds"])


def queue_list(limit: int = 50) -> list[tuple[Submission, Progress]]:
    active = list(Submission.objects.filter(status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING])
                  .select_related("model", "team", "environment").order_by("created_at"))
    recent = list(Submission.objects.exclude(status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING])
                  .select_related("model", "team", "environment").order_by("-created_at")[:limit])
    return [(s, submission_progress(s)) for s in active + recent]


def attempt_outcomes(submission_ids: list[int], *, with_breakdown: bool = False) -> dict[int, list[AttemptOutcome]]:
    """Every attempt of these submissions as the board sees it, grouped by submission."""
    fields = ["id", "submission_id", "scenario_id", "repeat", "status", "score", "invalid_action", "repeating_action"]
    if with_breakdown:
        fields.append("details__breakdown")
    grouped: dict[int, list[AttemptOutcome]] = {submission_id: [] for submission_id in submission_ids}
    rows = Attempt.objects.filter(submission_id__in=submission_ids).order_by().values_list(*fields)
    for attempt_id, submission_id, scenario_id, repeat, status, score, ia, ra, *extra in rows.iterator(chunk_size=5000):
        breakdown = extra[0] if extra and isinstance(extra[0], dict) else None
        grouped[submission_id].append(AttemptOutcome(
            attempt_id=attempt_id, scenario_id=scenario_id, repeat=repeat, scored=status == Attempt.Status.SCORED,
            infra_failed=status == Attempt.Status.INFRA_FAILED, score=score, invalid_action=ia, repeating_action=ra,
            breakdown=breakdown))
    return grouped


def submission_attempts(submission: Submission) -> QuerySet[Attempt]:
    return submission.attempts.select_related("scenario").order_by("scenario__key", "repeat")


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
