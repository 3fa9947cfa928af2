"""Per-attempt exports: one row per attempt (CSV or Parquet) and every attempt's trajectory folder in
a zip, for one submission or for every entry of a board (leaderboard/board_exports.py picks those).

Who may see which submission is decided by the caller (accounts.selectors.can_view_submission,
submissions.selectors.visible_entries); this module only reads what it is handed.

Every writer here writes to a file row by row (or member by member), so that a board of 60,000
attempts never sits in memory: they run on a worker (submissions.export_files builds each file once)
and a request only ever serves the finished file.
"""
from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import IO, Any, TextIO

from evaluators.endpoints.credentials import scrub_secrets
from evaluators.paths import shown
from evaluators.trajectory import INDEX_NAME
from magebench_client.csv_safe import write_csv
from scoring.cost import token_cost
from scoring.ordering import natural_key
from submissions.endpoint_privacy import endpoint_marks, struck
from submissions.models import Attempt, Submission
from submissions.selectors import trajectory_dir

#: Column name and Parquet type name ("string", "int64", "float64", "bool", "timestamp"), in order.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("submission", "int64"), ("model", "string"), ("team", "string"), ("env", "string"), ("flow", "string"),
    ("subset", "string"), ("suite", "string"), ("scenario", "string"), ("repeat", "int64"), ("status", "string"),
    ("score", "float64"), ("outcome", "string"), ("error_kind", "string"), ("error_message", "string"),
    ("invalid_action", "bool"), ("repeating_action", "bool"), ("invalid_replies", "int64"),
    ("invalid_decisions", "int64"), ("repetitive_replies", "int64"), ("longest_noop_streak", "int64"),
    ("ia_ra_reasons", "string"), ("parse_errors", "int64"), ("steps", "int64"),
    ("model_calls", "int64"), ("tries", "int64"), ("measured", "bool"), ("prompt_tokens", "int64"),
    ("completion_tokens", "int64"), ("cost_usd", "float64"), ("seconds", "float64"),
    ("seconds_per_call", "float64"), ("started_at", "timestamp"), ("finished_at", "timestamp"),
    ("trajectory", "string"),
)
COLUMN_NAMES = tuple(name for name, _ in COLUMNS)
FORMATS = ("csv", "parquet", "zip")
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "parquet": "application/vnd.apache.parquet",
                 "zip": "application/zip"}
#: Bytes copied from a trajectory file at a time.
CHUNK = 256 * 1024
#: Rows a Parquet row group holds: what its writer keeps in memory at once.
ROW_GROUP = 5000
#: What a frame-free zip leaves out: frames and screenshots, by suffix or by their first bytes.
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg"})
IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff")


def export_submissions(ids: Iterable[int]) -> list[Submission]:
    """These submissions with what every row names (model, team), in the order given."""
    wanted = list(ids)
    found = Submission.objects.select_related("model", "team").in_bulk(wanted)
    return [found[i] for i in wanted if i in found]


def _attempts(submission: Submission) -> list[Attempt]:
    attempts = Attempt.objects.filter(submission=submission).select_related("scenario").order_by("repeat", "id")
    return sorted(attempts, key=lambda attempt: (natural_key(attempt.scenario.key), attempt.repeat, attempt.id))


def _safe_part(text: str) -> str:
    """A path component inside the zip: no separators, no parent references, no control characters."""
    cleaned = re.sub(r"[\x00-\x1f/\\:]+", "_", text).strip(" .")
    return cleaned or "_"


def member_folder(submission: Submission, attempt: Attempt) -> str:
    """Where an attempt's trajectory sits inside the zip (and what its row's ``trajectory`` names)."""
    return f"submission-{submission.id}/{_safe_part(attempt.scenario.key)}/repeat-{attempt.repeat}"


#: The counts behind an attempt's IA/RA flags, as its episode recorded them (details["diagnostics"]).
DIAGNOSTIC_COUNTS = ("invalid_replies", "invalid_decisions", "repetitive_replies", "longest_noop_streak")


def _diagnostics(attempt: Attempt) -> dict[str, Any]:
    """The IA/RA counts and reasons; empty for an attempt that never ran (or ran before they were kept)."""
    found = attempt.details.get("diagnostics") if isinstance(attempt.details, dict) else None
    diagnostics = found if isinstance(found, dict) else {}
    counts = {name: diagnostics[name] if isinstance(diagnostics.get(name), int) else None
              for name in DIAGNOSTIC_COUNTS}
    reasons = diagnostics.get("reasons")
    return {**counts, "ia_ra_reasons": "; ".join(map(str, reasons)) if isinstance(reasons, list) else ""}


def attempt_row(submission: Submission, attempt: Attempt) -> dict[str, Any]:
    """One attempt as an export row: its outcome, its IA/RA flags, its effort and what it cost."""
    # An upload's replies are played back: its calls, tokens and time are not the model's.
    measured = submission.source != Submission.Source.UPLOAD
    prompt = attempt.prompt_tokens if measured else None
    completion = attempt.completion_tokens if measured else None
    seconds = attempt.duration_seconds if measured else None
    model = submission.model
    directory = trajectory_dir(attempt)
    return {
        "submission": submission.id, "model": model.name, "team": submission.team.name,
        "env": submission.environment_id, "flow": submission.flow, "subset": submission.subset,
        "suite": submission.suite, "scenario": attempt.scenario.key, "repeat": attempt.repeat,
        "status": attempt.status, "score": attempt.score, "outcome": attempt.outcome,
        "error_kind": attempt.error_kind,
        # Exports are read by anyone who may see the submission: the endpoint is the team's alone.
        "error_message": struck(scrub_secrets(attempt.error_message), endpoint_marks(submission))
        if attempt.error_message else "",
        "invalid_action": attempt.invalid_action, "repeating_action": attempt.repeating_action,
        **_diagnostics(attempt),
        "parse_errors": attempt.parse_errors, "steps": attempt.steps, "model_calls": attempt.model_calls,
        "tries": attempt.tries, "measured": measured, "prompt_tokens": prompt, "completion_tokens": completion,
        "cost_usd": token_cost(prompt, completion, model.price_input_per_mtok, model.price_output_per_mtok),
        "seconds": seconds,
        "seconds_per_call": seconds / attempt.model_calls if seconds is not None and attempt.model_calls else None,
        "started_at": attempt.started_at, "finished_at": attempt.finished_at,
        "trajectory": member_folder(submission, attempt) if directory is not None and directory.is_dir() else "",
    }


def export_rows(submissions: Iterable[Submission]) -> Iterator[dict[str, Any]]:
    for submission in submissions:
        for attempt in _attempts(submission):
            yield attempt_row(submission, attempt)


def _csv_value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def write_rows_csv(rows: Iterable[dict[str, Any]], out: TextIO) -> None:
    """The rows as spreadsheet-safe CSV (magebench_client.csv_safe, as the board's CSV), one at a time."""
    write_csv(out, COLUMN_NAMES, ({name: _csv_value(value) for name, value in row.items()} for row in rows))


#: How pandas reads each Parquet type back (the schema's "pandas" metadata, as pandas itself writes it):
#: an integer column with empty cells stays a nullable integer (Int64) instead of becoming float64.
PANDAS_TYPES = {"string": ("unicode", "object"), "int64": ("int64", "Int64"), "float64": ("float64", "float64"),
                "bool": ("bool", "bool"), "timestamp": ("datetimetz", "datetime64[us]"),
                "list<string>": ("list[unicode]", "object")}


def pandas_metadata(columns: Iterable[tuple[str, str]]) -> bytes:
    """The "pandas" schema metadata for ``columns`` (name, Parquet type name)."""
    import pyarrow as pa

    described = [{"name": name, "field_name": name, "pandas_type": PANDAS_TYPES[kind][0],
                  "numpy_type": PANDAS_TYPES[kind][1],
                  "metadata": {"timezone": "UTC"} if kind == "timestamp" else None} for name, kind in columns]
    return json.dumps({"index_columns": [], "column_indexes": [], "columns": described,
                       "creator": {"library": "pyarrow", "version": pa.__version__},
                       "pandas_version": "2.2.0"}).encode()


def _parquet_schema() -> Any:
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
             "timestamp": pa.timestamp("us", tz="UTC")}
    return pa.schema([(name, types[kind]) for name, kind in COLUMNS], metadata={b"pandas": pandas_metadata(COLUMNS)})


def write_rows_parquet(rows: Iterable[dict[str, Any]], path: Path) -> None:
    """The rows as one Parquet file with a fixed schema (an empty export still has every column),
    ``ROW_GROUP`` rows at a time: a board of 60,000 attempts built whole reached 323 MiB."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _parquet_schema()
    pending = iter(rows)
    with pq.ParquetWriter(str(path), schema) as writer:
        while batch := list(islice(pending, ROW_GROUP)):
            writer.write_table(pa.Table.from_pydict({name: [row[name] for row in batch] for name in COLUMN_NAMES},
                                                    schema=schema))


# The trajectories zip ------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Member:
    name: str
    path: Path


def _trajectory_files(folder: str, directory: Path) -> Iterator[_Member]:
    """Every regular file of a trajectory folder, never one a link leads outside it."""
    for path in sorted(directory.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        resolved = path.resolve()
        if directory not in resolved.parents:
            continue
        yield _Member(name=f"{folder}/{path.relative_to(directory).as_posix()}", path=resolved)


def _is_image(name: str, head: bytes) -> bool:
    """A frame or screenshot, by its name or by its first bytes (a trace's resources have no suffix)."""
    return Path(name).suffix.lower() in IMAGE_SUFFIXES or head.startswith(IMAGE_MAGIC)


def _member_info(member: _Member) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(member.name,
                           date_time=datetime.fromtimestamp(member.path.stat().st_mtime).timetuple()[:6])
    # Frames and traces are compressed already: compressing them again saves nothing.
    info.compress_type = (zipfile.ZIP_STORED if member.path.suffix.lower() in {*IMAGE_SUFFIXES, ".zip"}
                          else zipfile.ZIP_DEFLATED)
    info.file_size = member.path.stat().st_size
    return info


def _copy(source: IO[bytes], target: IO[bytes]) -> None:
    while block := source.read(CHUNK):
        target.write(block)


def _write_trace_without_images(archive: zipfile.ZipFile, member: _Member) -> None:
    """A trace zip with every image it holds left out: its actions, network log and DOM snapshots stay."""
    info = _member_info(member)
    info.compress_type = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(member.path) as trace, archive.open(info, "w", force_zip64=True) as target, \
            zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as stripped:
        for inner in trace.infolist():
            with trace.open(inner) as source:
                head = source.read(len(max(IMAGE_MAGIC, key=len)))
                if inner.is_dir() or _is_image(inner.filename, head):
                    continue
                with stripped.open(zipfile.ZipInfo(inner.filename, date_time=inner.date_time), "w",
                                   force_zip64=True) as copied:
                    copied.write(head)
                    _copy(source, copied)


def _write_member(archive: zipfile.ZipFile, member: _Member, marks: list[tuple[str, str]], *, frames: bool) -> None:
    if member.path.name == INDEX_NAME:
        # The index as a replay shows it: paths the episode quotes are relative to the data folder,
        # and the team's endpoint struck out.
        text = struck(shown(member.path.read_text(encoding="utf-8")), marks)
        archive.writestr(member.name, text, zipfile.ZIP_DEFLATED)
        return
    with member.path.open("rb") as source:
        head = source.read(len(max(IMAGE_MAGIC, key=len)))
        if not frames and _is_image(member.name, head):
            return
    if not frames and member.path.suffix.lower() == ".zip" and zipfile.is_zipfile(member.path):
        _write_trace_without_images(archive, member)
        return
    with member.path.open("rb") as source, archive.open(_member_info(member), "w") as target:
        _copy(source, target)


def write_trajectories_zip(submissions: list[Submission], out: IO[bytes], *, frames: bool = False) -> None:
    """A zip of ``attempts.csv`` (the rows) and each attempt's trajectory folder: ``trajectory.json``
    (replies, parsed actions, per-step scores) and its trace, with the frames only if ``frames``
    (they are most of its size). Written member by member to ``out``, a file: nothing is held whole."""
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("attempts.csv", "w", force_zip64=True) as member, \
                io.TextIOWrapper(member, encoding="utf-8", newline="") as text:
            write_rows_csv(export_rows(submissions), text)
        for submission in submissions:
            marks = endpoint_marks(submission)
            for attempt in _attempts(submission):
                directory = trajectory_dir(attempt)
                if directory is None or not directory.is_dir():
                    continue
                for found in _trajectory_files(member_folder(submission, attempt), directory):
                    _write_member(archive, found, marks, frames=frames)
