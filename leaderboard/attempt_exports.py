"""Which per-attempt export file (submissions.export_files) a visitor gets of a board or a submission,
its download links with their sizes, and the builds set off when a board changes.

A file is named after its board's generation: every write that changes what the board shows moves it
on, so a file is never served once its rows changed; the warm of a changed board sends its default
files to be built, and each build removes the board's files of older generations.
"""
from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from typing import Any

from django.db.models import Count, Max
from django.urls import reverse

from leaderboard.cache import board_scope, shared_generation
from magebench_client.output import size_text
from submissions.export_files import ExportSpec, export_build_send, export_ready
from submissions.models import Attempt, Submission
from submissions.selectors import visible_entries

#: The frame-free formats a board's warm builds ahead; a zip with frames (most of the disk a board's
#: exports take) is built when asked for.
WARMED_FORMATS = ("csv", "parquet", "zip")
#: The links a page shows: label, format, frames.
LINKS = (("CSV", "csv", False), ("Parquet", "parquet", False), ("trajectories", "zip", False),
         ("trajectories with frames", "zip", True))


def _board(env: str, flow: str, subset: str) -> str:
    return f"{env}-{flow}-{subset}"


class GenerationUnknown(Exception):
    """The board cache (which keeps the generations) cannot be reached: no file can be named."""


def board_generation(env: str, flow: str, subset: str) -> str:
    try:
        return ".".join(map(str, shared_generation(board_scope(env, flow, subset))))
    except Exception as exc:  # noqa: BLE001 - the cache is down (Redis): the pages still serve, without exports
        raise GenerationUnknown("the board cache cannot be reached") from exc


def board_export_spec(board: tuple[str, str, str], entries: Iterable[int | None],
                      team_ids: Collection[int], fmt: str, *, frames: bool = False) -> ExportSpec:
    """The file of the attempts of a board's ``entries`` (the submissions of its query's rows, in
    their order), as a viewer of ``team_ids`` may see it."""
    ids = [i for i in entries if i is not None]
    # The board already shows the visitor only what they may see; asked again here, so that an
    # export can never carry more than the visible entries even if the board's rows changed.
    visible = set(Submission.objects.filter(visible_entries(team_ids), id__in=ids).values_list("id", flat=True))
    return ExportSpec(fmt=fmt, submission_ids=tuple(i for i in ids if i in visible), board=_board(*board),
                      generation=board_generation(*board), frames=frames and fmt == "zip")


def board_page_export(board: tuple[str, str, str], entries: Iterable[int | None]) -> ExportSpec | None:
    """The CSV export of a board page's entries (already those its visitor sees), for its links; none
    when the board's generation cannot be read."""
    try:
        return ExportSpec(fmt="csv", submission_ids=tuple(i for i in entries if i is not None), board=_board(*board),
                          generation=board_generation(*board))
    except GenerationUnknown:
        return None


def payload_entries(payload: dict[str, Any]) -> list[int | None]:
    """The submissions of a board API answer's rows."""
    return [row.get("submission") for row in payload["rows"]]


def submission_export_spec(submission: Submission, fmt: str, *, frames: bool = False) -> ExportSpec:
    """The file of one submission's attempts. An unfinished one's rows change with every attempt that
    ends, before its board does: how many have ended, and when the last did, are part of its name."""
    ended = Attempt.objects.filter(submission=submission, finished_at__isnull=False).aggregate(
        n=Count("id"), last=Max("finished_at"))
    stamp = f"{submission.status}:{ended['n']}:{ended['last'].isoformat() if ended['last'] else ''}"
    env, flow, subset = submission.environment_id, submission.flow, submission.subset
    return ExportSpec(fmt=fmt, submission_ids=(submission.id,), board=_board(env, flow, subset),
                      generation=board_generation(env, flow, subset), stamp=stamp, frames=frames and fmt == "zip")


@dataclass(frozen=True)
class ExportLink:
    """A download link: what it is, where, and the size of its file once built."""

    label: str
    href: str
    size: int | None
    frames: bool = False

    @property
    def size_text(self) -> str:
        # Not built yet: the first request sends its build (a board's frame-free ones are sent when it changes).
        return size_text(self.size) if self.size is not None else "built on first download"


def _href(url: str, fmt: str, query: str, frames: bool) -> str:
    params = "&".join(part for part in (query, "frames=1" if frames else "") if part)
    return url.replace("FORMAT", fmt) + (f"?{params}" if params else "")


def export_links(specs: dict[str, ExportSpec], url: str, query: str = "") -> list[ExportLink]:
    """Links to these files (label: spec), each on ``url`` with its format and ``query``."""
    links = []
    for label, spec in specs.items():
        ready = export_ready(spec)
        links.append(ExportLink(label=label, href=_href(url, spec.fmt, query, spec.frames),
                                size=ready.stat().st_size if ready is not None else None, frames=spec.frames))
    return links


def board_export_links(board: tuple[str, str, str], export: ExportSpec | None, query: str) -> list[ExportLink]:
    """A board page's export links; with no export (its generation unknown), without sizes."""
    url = reverse("api-board-attempts-export", args=[*board, "FORMAT"])
    if export is None:
        return [ExportLink(label=label, href=_href(url, fmt, query, frames), size=None, frames=frames)
                for label, fmt, frames in LINKS]
    return export_links({label: replace(export, fmt=fmt, frames=frames) for label, fmt, frames in LINKS}, url, query)


def submission_export_links(submission: Submission) -> list[ExportLink]:
    url = reverse("api-submission-export", args=[submission.id, "FORMAT"])
    try:
        first = submission_export_spec(submission, "csv")
    except GenerationUnknown:
        return [ExportLink(label=label, href=_href(url, fmt, "", frames), size=None, frames=frames)
                for label, fmt, frames in LINKS]
    return export_links({label: replace(first, fmt=fmt, frames=frames) for label, fmt, frames in LINKS}, url)


def board_exports_warm(board: tuple[str, str, str], entries: Iterable[int | None]) -> list[str]:
    """Send the builds of the board's default frame-free exports (what an anonymous visitor gets of
    ``entries``, its rows' submissions), which remove its older generations' files; the formats sent."""
    spec = board_export_spec(board, entries, (), "csv")
    return [fmt for fmt in WARMED_FORMATS if export_build_send(replace(spec, fmt=fmt))]
