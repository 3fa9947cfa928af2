"""Checks of large files on a worker: the request stores the file and a pending check and answers at
once; a worker reads the file as an upload would be read, records what it found and deletes the file.

A web process reading a file of tens of megabytes is one fewer for everyone else's pages, however
well the reading is bounded; a worker's time is what the queue shares out.
"""
from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path

from celery import current_app
from django.conf import settings as django_settings
from django.db import transaction
from django.utils import timezone

from accounts.models import Team
from submissions.models import UploadFileCheck
from submissions.services import SubmissionError
from submissions.upload_services import UploadRejected, upload_board, upload_check

logger = logging.getLogger(__name__)

#: The task that runs a stored check (``submissions.tasks``), sent by name like the others.
RUN_UPLOAD_CHECK_TASK = "submissions.run_upload_check"
#: Where the files of waiting checks are kept, under MEDIA_ROOT (never served: no URL names them).
CHECK_FILES = Path("upload-checks")


def upload_check_is_deferred(size: int) -> bool:
    """Whether a file of ``size`` bytes is checked by a worker rather than within the request."""
    return size > django_settings.MAGEBENCH_UPLOAD_CHECK_ASYNC_BYTES


def upload_check_create(*, team: Team, env: str, flow: str, subset: str, data: bytes, suite: str | None = None,
                        created_by: int | None = None) -> UploadFileCheck:
    """Store the file and a pending check of it, and queue the check once both are stored.

    The board is checked first (SubmissionError, nothing written), as a check in the request would.
    """
    environment, suite = upload_board(env=env, flow=flow, subset=subset, suite=suite)
    relative = CHECK_FILES / f"{uuid.uuid4().hex}.upload"
    stored = django_settings.MEDIA_ROOT / relative
    stored.parent.mkdir(parents=True, exist_ok=True)
    partial = stored.with_suffix(".partial")
    partial.write_bytes(data)
    os.replace(partial, stored)
    try:
        with transaction.atomic():
            check = UploadFileCheck.objects.create(
                team=team, created_by_id=created_by, environment=environment, flow=flow, subset=subset,
                suite=suite, file_path=str(relative), file_bytes=len(data))
            check_id = check.id
            transaction.on_commit(lambda: upload_check_enqueue(check_id=check_id))
    except BaseException:
        stored.unlink(missing_ok=True)
        raise
    return check


def upload_check_enqueue(*, check_id: int) -> None:
    """Send the check to the workers; a broker that cannot be reached ends it at once, saying so."""
    from kombu.exceptions import KombuError
    from kombu.exceptions import OperationalError as BrokerError

    try:
        current_app.signature(RUN_UPLOAD_CHECK_TASK).apply_async((check_id,))
    except (BrokerError, KombuError, OSError) as exc:
        logger.warning("could not queue upload check %s: %s", check_id, exc)
        _finish(check_id, status=UploadFileCheck.Status.INVALID,
                problems=["upload: the site could not queue the check; try again in a minute"])


def upload_check_run(*, check_id: int) -> None:
    """Check the stored file of a pending check and record the outcome; a check already done (its
    message delivered twice) is left as it is."""
    check = UploadFileCheck.objects.filter(id=check_id, status=UploadFileCheck.Status.PENDING).first()
    if check is None or not check.file_path:
        return
    stored = django_settings.MEDIA_ROOT / check.file_path
    try:
        data = stored.read_bytes()
    except FileNotFoundError:
        _finish(check_id, status=UploadFileCheck.Status.INVALID,
                problems=["upload: the file was lost before it was checked; check it again"])
        return
    try:
        found = upload_check(env=check.environment_id, flow=check.flow, subset=check.subset, suite=check.suite,
                             data=data, on_worker=True)
    except UploadRejected as exc:
        _finish(check_id, status=UploadFileCheck.Status.INVALID, problems=exc.problems)
    except SubmissionError as exc:  # the board went away while the check waited
        _finish(check_id, status=UploadFileCheck.Status.INVALID, problems=[f"upload: {exc}"])
    else:
        _finish(check_id, status=UploadFileCheck.Status.VALID, result={
            "suite": found.suite, "runs": found.runs, "scenarios": found.scenarios, "repeats": found.repeats,
            "missing_scenarios": found.missing_scenarios})


def _finish(check_id: int, *, status: str, problems: list[str] | None = None, result: dict | None = None) -> None:
    path = UploadFileCheck.objects.filter(id=check_id).values_list("file_path", flat=True).first()
    UploadFileCheck.objects.filter(id=check_id, status=UploadFileCheck.Status.PENDING).update(
        status=status, problems=problems or [], result=result or {}, file_path="", finished_at=timezone.now())
    if path:
        (django_settings.MEDIA_ROOT / path).unlink(missing_ok=True)
