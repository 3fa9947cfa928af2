"""Dated, immutable snapshots of the public boards: the data release researchers cite.

A snapshot of a board (environment, flow, subset, suite) is what an anonymous visitor sees of it by
default (public entries, baselines and reported results; the suite's current prompt set; no filter),
written once into a folder of its own under ``MAGEBENCH_SNAPSHOT_ROOT``::

    <env>-<flow>-<subset>-<suite>/<version>/
        README.md                      the dataset card (leaderboard.dataset_card)
        data/board.parquet             one row per entry, typed by the column dictionary
        data/attempts.parquet          one row per attempt of those entries (submissions.exports)
        magebench-<board>-<version>.zip   the card and both Parquet files

Its content hash is the sha256 of a canonical serialisation (JSON, one line per row, keys sorted) of
the board's metadata, rows and attempts, computed while the files are written: a board whose hash
equals its latest snapshot's gets no new version, whatever the Parquet writer's version. The folder
is written beside its final name and renamed once complete, then made read-only, and the database
row (``BoardSnapshot``) is never changed. Made by ``manage.py snapshot_boards`` or the beat-scheduled
task, never by a request.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import uuid
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalogue.selectors import board_suites
from evaluators.base import SUBSETS, all_plugins, get_plugin
from leaderboard.columns import Column, board_columns
from leaderboard.dataset_card import ATTEMPTS_FILE, BOARD_FILE, CARD, card_markdown
from leaderboard.models import BoardSnapshot
from leaderboard.selectors import Board, board_get
from leaderboard.selectors.snapshots import snapshot_latest, snapshot_latest_forget
from submissions.exports import COLUMN_NAMES as ATTEMPT_COLUMN_NAMES
from submissions.exports import export_rows, export_submissions, pandas_metadata, write_rows_parquet

logger = logging.getLogger(__name__)

#: Bytes read at a time when hashing a file.
CHUNK = 1024 * 1024


@dataclass(frozen=True)
class BoardRef:
    env: str
    flow: str
    subset: str
    suite: str

    @property
    def name(self) -> str:
        return f"{self.env}-{self.flow}-{self.subset}-{self.suite}"


def snapshot_root() -> Path:
    return Path(settings.MAGEBENCH_SNAPSHOT_ROOT)


def snapshot_folder(snapshot: BoardSnapshot) -> Path:
    return snapshot_root() / snapshot.board_name / snapshot.version


def zip_name(board: str, version: str) -> str:
    return f"magebench-{board}-{version}.zip"


def public_boards() -> list[BoardRef]:
    """Every board a visitor can pick: each environment's flows and subsets, in each of its suites."""
    return [BoardRef(plugin.slug, flow, subset, suite) for plugin in all_plugins()
            for suite in board_suites(plugin.slug) for flow in plugin.flows for subset in SUBSETS]


# The canonical serialisation --------------------------------------------------------------------

def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"not serialisable: {type(value).__name__}")


def canonical_line(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_plain).encode() + b"\n"


def _hashed(rows: Iterable[dict[str, Any]], digest: Any, counter: list[int]) -> Iterator[dict[str, Any]]:
    """The rows as they come, each fed to ``digest`` first (the attempts are written as they are read)."""
    for row in rows:
        digest.update(canonical_line(row))
        counter[0] += 1
        yield row


# The board's rows as typed Parquet ---------------------------------------------------------------

def _arrow_type(kind: str) -> Any:
    import pyarrow as pa

    return {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
            "timestamp": pa.timestamp("us", tz="UTC"), "list<string>": pa.list_(pa.string())}[kind]


def _typed(column: Column, value: Any) -> Any:
    if value is None:
        return [] if column.type == "list<string>" else None
    if column.type == "timestamp" and isinstance(value, str):
        return datetime.fromisoformat(value)
    if column.type == "list<string>":
        return [str(item) for item in value]
    if column.type == "string":
        return str(value)
    return value


def board_rows(board: Board) -> list[dict[str, Any]]:
    """The board's rows as the export writes them, every column of its environment's boards present."""
    columns = board_columns(get_plugin(board.env))
    rows = [row.as_dict() for row in board.rows]
    return [{column.name: row.get(column.name) for column in columns} for row in rows]


def write_board_parquet(board: Board, rows: list[dict[str, Any]], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = board_columns(get_plugin(board.env))
    described = pandas_metadata((column.name, column.type) for column in columns)
    schema = pa.schema([pa.field(column.name, _arrow_type(column.type), nullable=column.nullable)
                        for column in columns], metadata={b"pandas": described})
    table = pa.Table.from_pydict({column.name: [_typed(column, row[column.name]) for row in rows]
                                  for column in columns}, schema=schema)
    pq.write_table(table, str(path))


# Making a snapshot --------------------------------------------------------------------------------

@contextlib.contextmanager
def _board_lock(folder: Path) -> Iterator[None]:
    """Held while a board's snapshot is made: a second maker (another worker) waits, then finds it made."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def next_version(ref: BoardRef, day: date) -> str:
    """The day, then the board's count of snapshots made that day plus one: "2026-11-29.1"."""
    made = BoardSnapshot.objects.filter(env=ref.env, flow=ref.flow, subset=ref.subset, suite=ref.suite,
                                        version__startswith=f"{day.isoformat()}.").count()
    return f"{day.isoformat()}.{made + 1}"


def _file_entry(folder: Path, name: str) -> dict[str, Any]:
    digest = hashlib.sha256()
    with (folder / name).open("rb") as source:
        while block := source.read(CHUNK):
            digest.update(block)
    return {"name": name, "size": (folder / name).stat().st_size, "sha256": digest.hexdigest()}


def _metadata(board: Board) -> dict[str, Any]:
    return {"env": board.env, "flow": board.flow, "subset": board.subset, "suite": board.suite,
            "scenarios": board.scenario_count, "prompt_version": board.prompts.version if board.prompts else "",
            "board_columns": [column.name for column in board_columns(get_plugin(board.env))],
            "attempt_columns": list(ATTEMPT_COLUMN_NAMES)}


@dataclass(frozen=True)
class _Written:
    content_hash: str
    entries: int
    attempts: int


def _write_data(board: Board, part: Path) -> _Written:
    """Both Parquet files into ``part``; the content hash over the metadata, rows and attempts."""
    digest = hashlib.sha256(canonical_line(_metadata(board)))
    rows = board_rows(board)
    for row in rows:
        digest.update(canonical_line(row))
    (part / "data").mkdir(parents=True)
    write_board_parquet(board, rows, part / BOARD_FILE)
    digest.update(b"attempts\n")
    counted = [0]
    submissions = export_submissions(row.submission_id for row in board.rows if row.submission_id is not None)
    write_rows_parquet(_hashed(export_rows(submissions), digest, counted), part / ATTEMPTS_FILE)
    return _Written(content_hash=digest.hexdigest(), entries=len(rows), attempts=counted[0])


def _write_release(board: Board, part: Path, snapshot: BoardSnapshot) -> None:
    """The card and the zip, once the data and the version are known; then every file's size and hash."""
    data = [_file_entry(part, BOARD_FILE), _file_entry(part, ATTEMPTS_FILE)]
    snapshot.files = data  # what the card lists
    (part / CARD).write_text(card_markdown(board, snapshot), encoding="utf-8")
    names = [CARD, BOARD_FILE, ATTEMPTS_FILE]
    archive_name = zip_name(snapshot.board_name, snapshot.version)
    with zipfile.ZipFile(part / archive_name, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in names:
            # Parquet is compressed already.
            archive.write(part / name, name, zipfile.ZIP_STORED if name.endswith(".parquet") else zipfile.ZIP_DEFLATED)
    snapshot.files = [_file_entry(part, CARD), *data, _file_entry(part, archive_name)]


def _read_only(folder: Path) -> None:
    for path in folder.rglob("*"):
        path.chmod(0o555 if path.is_dir() else 0o444)
    folder.chmod(0o555)


def board_snapshot_make(ref: BoardRef, *, now: datetime | None = None) -> BoardSnapshot | None:
    """A new snapshot of the board, or None when it has no rows or its content equals its latest
    snapshot's (its files and row are then left as they are)."""
    try:
        board = board_get(env=ref.env, flow=ref.flow, subset=ref.subset, suite=ref.suite)
    except (KeyError, ValueError):
        return None
    if not board.rows:
        return None
    made_at = now or timezone.now()
    board_folder = snapshot_root() / ref.name
    with _board_lock(board_folder):
        part = board_folder / f".part-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            written = _write_data(board, part)
            latest = snapshot_latest(ref.env, ref.flow, ref.subset, ref.suite)
            if latest is not None and latest.content_hash == written.content_hash:
                return None
            snapshot = BoardSnapshot(env=ref.env, flow=ref.flow, subset=ref.subset, suite=ref.suite,
                                     version=next_version(ref, timezone.localdate(made_at)),
                                     content_hash=written.content_hash, created_at=made_at,
                                     prompt_version=board.prompts.version if board.prompts else "",
                                     scenarios=board.scenario_count, entries=written.entries,
                                     attempts=written.attempts)
            _write_release(board, part, snapshot)
            final = board_folder / snapshot.version
            with transaction.atomic():
                snapshot.save()
                # A folder of this name is never replaced: the rename fails and so does the row.
                os.rename(part, final)
            _read_only(final)
            snapshot_latest_forget(ref.env, ref.flow, ref.subset, ref.suite)
            return snapshot
        finally:
            if part.exists():
                shutil.rmtree(part, ignore_errors=True)


def boards_snapshot(refs: Iterable[BoardRef] | None = None, *, now: datetime | None = None) -> list[BoardSnapshot]:
    """A snapshot of every public board (or of ``refs``) whose content changed since its latest one; a
    board that fails is logged and skipped."""
    made = []
    for ref in refs if refs is not None else public_boards():
        try:
            snapshot = board_snapshot_make(ref, now=now)
        except Exception:  # noqa: BLE001 - one board failing must not keep the others from their release
            logger.warning("could not snapshot %s", ref.name, exc_info=True)
            continue
        if snapshot is not None:
            made.append(snapshot)
    return made
