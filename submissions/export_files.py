"""Per-attempt export files: each built once, by a worker, into the data folder, then served as a file.

A sync web worker is killed once a request outlives its timeout, even while it streams, and a board of
60,000 attempts takes longer than that to read. So a request never builds: it serves the finished file,
or sends one build (``export_requested``) and answers at once. A file's name is the hash of everything
in it: the format and options, the exact submissions (those the visitor may see) and the version of
their data the caller names (its board's generation), so a visitor is only ever served a file built
from the very submissions they may see, and a file is never served once its data changed.

Files are grouped by board, named after the board's generation first: each build removes the
board's files of older generations (``export_files_prune``), so the disk holds about one generation
of each board's exports.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.cache import cache

from submissions.exports import (
    FORMATS,
    export_rows,
    export_submissions,
    write_rows_csv,
    write_rows_parquet,
    write_trajectories_zip,
)

logger = logging.getLogger(__name__)

#: The Celery task that builds one file (submissions.tasks), sent by name.
BUILD_EXPORT_TASK = "submissions.build_export"
PENDING_KEY = "exports:pending:{digest}"
SLOT_KEY = "exports:slot:{index}"
#: Temporary files of a build that died are removed by the next prune once they are this old.
STALE_PART_SECONDS = 3600


@dataclass(frozen=True)
class ExportSpec:
    """What one export file holds; its name is the hash of all of it."""

    fmt: str
    submission_ids: tuple[int, ...]
    #: The board the submissions are on, as env-flow-subset: the folder its files share.
    board: str
    #: The board's generation the rows were read at, as numbers joined by dots (each only ever grows):
    #: files of older generations are removed.
    generation: str
    #: Anything else the rows depend on (an unfinished submission's progress).
    stamp: str = ""
    #: Whether the zip holds the frames (PNG/JPEG) too.
    frames: bool = False

    def __post_init__(self) -> None:
        if self.fmt not in FORMATS:
            raise ValueError(f"an export is one of: {', '.join(FORMATS)}")
        if _generation(self.generation) is None:
            raise ValueError(f"a generation is numbers joined by dots, not {self.generation!r}")

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:40]

    @property
    def path(self) -> Path:
        return board_folder(self.board) / f"{self.generation}-{self.digest}.{self.fmt}"

    def message(self) -> dict[str, Any]:
        """The spec as a task's JSON arguments."""
        return {**asdict(self), "submission_ids": list(self.submission_ids)}

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> ExportSpec:
        return cls(**{**message, "submission_ids": tuple(int(i) for i in message["submission_ids"])})


def _generation(text: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in text.split("."))
    except ValueError:
        return None


def export_root() -> Path:
    return Path(settings.MAGEBENCH_EXPORT_ROOT)


def board_folder(board: str) -> Path:
    return export_root() / re.sub(r"[^A-Za-z0-9_.-]+", "-", board)


def export_ready(spec: ExportSpec) -> Path | None:
    """The built file, if it is there."""
    path = spec.path
    return path if path.is_file() else None


def export_requested(spec: ExportSpec) -> Path | None:
    """The built file; or, when it is not built yet, None once one build of it has been sent (however
    many requests ask for it meanwhile)."""
    ready = export_ready(spec)
    if ready is not None:
        _build_done(spec.digest)
        return ready
    export_build_send(spec)
    return None


def export_build_send(spec: ExportSpec) -> bool:
    """Send a build of ``spec`` unless one is waiting or running, or ``MAGEBENCH_EXPORT_MAX_BUILDS``
    others are (the next request asks again); whether this call sent it."""
    key = PENDING_KEY.format(digest=spec.digest)
    try:
        # Expires on its own, so a build lost with its worker does not hold every later one back.
        if not cache.add(key, 1, timeout=settings.MAGEBENCH_EXPORT_PENDING_SECONDS):
            return False
        if not _slot_taken(spec.digest):
            cache.delete(key)
            return False
    except Exception:  # noqa: BLE001 - no cache: the file lock still keeps builds from repeating work
        logger.warning("cache unavailable; sending the export build anyway", exc_info=True)
    try:
        _send_build(spec)
    except Exception:  # noqa: BLE001 - the visitor is asked to come back; their next request sends it again
        logger.warning("could not send an export build", exc_info=True)
        _build_done(spec.digest)
        return False
    return True


def _slot_taken(digest: str) -> bool:
    """One of the few builds that may wait or run at once, taken for ``digest``: queries made up by the
    thousand (each search is a file of its own) must not fill the queue that also runs attempts."""
    return any(cache.add(SLOT_KEY.format(index=index), digest, timeout=settings.MAGEBENCH_EXPORT_PENDING_SECONDS)
               for index in range(settings.MAGEBENCH_EXPORT_MAX_BUILDS))


def _build_done(digest: str) -> None:
    """Free the build's slot and its pending mark (the worker does; a request finding the file does too,
    for a worker that shares no cache with it)."""
    with contextlib.suppress(Exception):
        if cache.get(PENDING_KEY.format(digest=digest)) is None:
            return
        cache.delete(PENDING_KEY.format(digest=digest))
        for index in range(settings.MAGEBENCH_EXPORT_MAX_BUILDS):
            if cache.get(SLOT_KEY.format(index=index)) == digest:
                cache.delete(SLOT_KEY.format(index=index))


def _send_build(spec: ExportSpec) -> None:
    # retry=False: a broker that is down fails at once instead of holding the request.
    current_app.signature(BUILD_EXPORT_TASK).apply_async(kwargs={"spec": spec.message()}, queue=export_queue(),
                                                         retry=False)


def export_queue() -> str:
    """The site's own light queue, unless the operator routes exports elsewhere ("exports=QUEUE")."""
    return settings.MAGEBENCH_QUEUE_ROUTES.get("exports", settings.CELERY_TASK_DEFAULT_QUEUE)


@contextlib.contextmanager
def _build_lock(spec: ExportSpec) -> Iterator[None]:
    """Held while ``spec`` is built: a second build of it (another worker) waits, then finds it built."""
    lock_path = spec.path.with_name(f".{spec.path.name}.lock")
    with lock_path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def export_file_build(spec: ExportSpec) -> Path:
    """Build the file of ``spec`` (once: a file already built is kept) and return its path.

    Written beside its final name and renamed once complete, so that a request never serves half a
    file; rows are read submission by submission and written as they come (bounded memory)."""
    path = spec.path
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with _build_lock(spec):
            if path.is_file():
                return path
            part = path.with_name(f".{path.name}.{os.getpid()}.part")
            try:
                _write(spec, part)
                os.replace(part, path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    part.unlink()
            with contextlib.suppress(FileNotFoundError):
                spec.path.with_name(f".{spec.path.name}.lock").unlink()
        export_files_prune(spec.board, spec.generation)
    finally:
        _build_done(spec.digest)
    return path


def _write(spec: ExportSpec, part: Path) -> None:
    submissions = export_submissions(spec.submission_ids)
    if spec.fmt == "csv":
        with part.open("w", encoding="utf-8", newline="") as out:
            write_rows_csv(export_rows(submissions), out)
    elif spec.fmt == "parquet":
        write_rows_parquet(export_rows(submissions), part)
    else:
        with part.open("wb") as binary:
            write_trajectories_zip(submissions, binary, frames=spec.frames)


def export_files_prune(board: str, generation: str) -> int:
    """Remove the board's files of generations before ``generation`` (never a later one: a build of
    an older generation may finish after a newer one), and temporary files of builds that died; how
    many files were removed."""
    folder = board_folder(board)
    if not folder.is_dir():
        return 0
    current = _generation(generation)
    removed = 0
    now = time.time()
    for path in folder.iterdir():
        # A build's lock and temporary files are named after its file, with a leading dot.
        made_at = _generation(path.name.lstrip(".").split("-", 1)[0])
        older = made_at is not None and current is not None and made_at < current
        if older or (path.name.endswith(".part") and now - path.stat().st_mtime > STALE_PART_SECONDS):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
    return removed
