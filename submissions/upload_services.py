"""Uploads of outputs produced offline: a file read within its size limit, checked completely, then
stored as a submission whose attempts are re-scored from the recorded runs.

Apart from ``services`` because a file's checks (its limits, its runs, the problems listed back)
are a job of their own, which a check storing nothing and a worker's check of a large file share
with the upload itself.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings as django_settings
from django.db import transaction
from django.utils import timezone

from accounts.models import Team
from catalogue.models import Environment, Scenario
from catalogue.prompt_sets import prompt_set_current
from submissions.models import Attempt, ModelEntry, Submission
from submissions.rescoring import recorded_run, rescoring_label, upload_settings
from submissions.services import (
    ModelSpec,
    SubmissionError,
    board_check,
    board_of,
    model_check,
    model_write,
    quota_check,
    submission_prepare_start,
)
from submissions.uploads import UploadedRun, UploadError, UploadLimits, parse_upload


class UploadRejected(SubmissionError):
    """An upload with problems; ``problems`` lists every one of them ("where: message")."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("the upload was refused:\n" + "\n".join(problems))
        self.problems = problems


MAX_UPLOAD_REPEATS = 20


def submission_create_upload(*, model: ModelEntry | ModelSpec, env: str, flow: str, subset: str, data: bytes,
                             suite: str | None = None, is_public: bool = True, enforce_quota: bool = False,
                             created_by: int | None = None, prepare_in_worker: bool = False) -> Submission:
    """Validate an upload completely, then store it and queue its re-scoring in one go.

    Nothing is stored for an upload with any problem, nor for a team without quota left (checked
    once the file is known to be valid, and again as it is stored). Scenarios of the subset the
    upload leaves out are listed on the submission, which stays ``incomplete`` until a full upload
    replaces it.
    """
    board_check(env, flow, subset)
    environment, suite, scenarios = _board_scenarios(env, subset, suite)
    model_check(model)
    by_key = {scenario.key: scenario for scenario in scenarios}
    runs = _upload_runs(data, env=env, flow=flow, scenario_keys=set(by_key))
    # After the file's check: a team out of quota still learns what is wrong with its file, and
    # fixes it while it waits (parsing is bounded by the upload's size limits either way).
    if enforce_quota and isinstance(model.team, Team):
        quota_check(team=model.team, user_id=created_by)
    digest = hashlib.sha256(data).hexdigest()
    frozen = upload_settings(env, flow, subset=subset, overrides={"repeats": max(run.repeat for run in runs) + 1})
    frozen = frozen.with_prompt_version(prompt_set_current(env, suite, flow).version)
    relative = Path("uploads") / f"{digest}.{'zip' if data[:2] == b'PK' else 'jsonl'}"
    with transaction.atomic():
        entry = model_write(model, enforce_quota=enforce_quota, user_id=created_by)
        submission = Submission.objects.create(
            team=entry.team, model=entry, environment=environment, flow=flow, subset=subset, suite=suite,
            created_by_id=created_by, source=Submission.Source.UPLOAD, settings=frozen.to_dict(),
            upload_path=str(relative), is_public=is_public,
            rescoring=rescoring_label(env), upload_sha256=digest,
            missing_scenarios=sorted(set(by_key) - {run.scenario for run in runs}),
            prepare_requested_at=timezone.now())
        Attempt.objects.bulk_create(
            Attempt(submission=submission, scenario=by_key[run.scenario], repeat=run.repeat,
                    recorded=recorded_run(run, env=env, flow=flow))
            for run in runs)
        # Last, so that a refusal above leaves no file behind; a failed write undoes the rows.
        _upload_store(data, relative)
        # A message per attempt is a broker round trip each: a worker sends them (prepare_in_worker).
        submission_prepare_start(submission, in_worker=prepare_in_worker)
    return submission


def _upload_runs(data: bytes, *, env: str, flow: str, scenario_keys: set[str],
                 on_worker: bool = False) -> list[UploadedRun]:
    """Every run of the file, or UploadRejected listing every problem in it."""
    try:
        return parse_upload(data, env=env, flow=flow, scenarios=scenario_keys, max_repeats=MAX_UPLOAD_REPEATS,
                            limits=upload_limits(on_worker=on_worker))
    except UploadError as exc:
        raise UploadRejected([f"{p.where}: {p.message}" for p in exc.problems]) from None


def _board_scenarios(env: str, subset: str, suite: str | None) -> tuple[Environment, str, list[Scenario]]:
    environment, suite, scenarios = board_of(env, subset, suite)
    return environment, suite, list(scenarios)


@dataclass(frozen=True)
class UploadCheck:
    """What an upload would hold, found by the same checks as a real upload."""

    suite: str
    runs: int
    scenarios: int
    repeats: int
    missing_scenarios: list[str]


def upload_check(*, env: str, flow: str, subset: str, data: bytes, suite: str | None = None,
                 on_worker: bool = False) -> UploadCheck:
    """Check a file exactly as ``submission_create_upload`` would, storing nothing and using no quota:
    UploadRejected lists its problems, SubmissionError names a board that does not exist. A worker's
    check (``on_worker``) has the worker's time budget."""
    board_check(env, flow, subset)
    _, suite, scenarios = _board_scenarios(env, subset, suite)
    keys = {scenario.key for scenario in scenarios}
    runs = _upload_runs(data, env=env, flow=flow, scenario_keys=keys, on_worker=on_worker)
    covered = {run.scenario for run in runs}
    return UploadCheck(suite=suite, runs=len(runs), scenarios=len(covered),
                       repeats=max((run.repeat for run in runs), default=-1) + 1,
                       missing_scenarios=sorted(keys - covered))


def upload_board(*, env: str, flow: str, subset: str, suite: str | None) -> tuple[Environment, str]:
    """The board a file is for and its suite; SubmissionError when there is none."""
    board_check(env, flow, subset)
    environment, suite, _ = board_of(env, subset, suite)
    return environment, suite


def _upload_store(data: bytes, relative: Path) -> None:
    stored = django_settings.MEDIA_ROOT / relative
    if stored.exists():
        return  # content-addressed: a second identical upload reuses the file
    stored.parent.mkdir(parents=True, exist_ok=True)
    partial = stored.with_suffix(".partial")
    partial.write_bytes(data)
    os.replace(partial, stored)


def upload_read(file: Any) -> bytes:
    """An uploaded file's bytes, refused before reading when it is over the size limit."""
    limit = django_settings.MAGEBENCH_UPLOAD_MAX_BYTES
    if file.size > limit:
        raise SubmissionError(f"the file is {file.size} bytes; the limit is {limit}")
    return file.read()


def upload_limits(*, on_worker: bool = False) -> UploadLimits:
    """The limits of the settings; a worker's check has its own, longer, time budget."""
    return UploadLimits(
        max_upload_bytes=django_settings.MAGEBENCH_UPLOAD_MAX_BYTES,
        max_lines=django_settings.MAGEBENCH_UPLOAD_MAX_LINES, max_runs=django_settings.MAGEBENCH_UPLOAD_MAX_RUNS,
        max_replies_per_run=django_settings.MAGEBENCH_UPLOAD_MAX_REPLIES_PER_RUN,
        max_replies=django_settings.MAGEBENCH_UPLOAD_MAX_REPLIES,
        max_seconds=(django_settings.MAGEBENCH_UPLOAD_WORKER_CHECK_SECONDS if on_worker
                     else django_settings.MAGEBENCH_UPLOAD_CHECK_SECONDS))
