"""The home page's overview: one column per environment and flow, each model's best entry per column."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evaluators.base import all_plugins
from leaderboard.selectors.boards import board_get
from leaderboard.selectors.rows import Board, BoardRow

if TYPE_CHECKING:
    from leaderboard.selectors.ranked import RankedBoard


@dataclass
class OverviewCell:
    mean: float | None
    se: float | None
    submission_id: int | None
    incomplete: bool


@dataclass
class OverviewRow:
    model: str
    team: str
    is_baseline: bool
    cells: list[OverviewCell | None]
    model_id: int | None = None


@dataclass
class Overview:
    """One column per environment × flow, like the paper's Table 1; each model's best entry per cell."""

    subset: str
    columns: list[Board]
    rows: list[OverviewRow]


@dataclass(frozen=True)
class OverviewEntry:
    """What the overview reads of a board's row: a row with a score, run here (no reported number)."""

    team: str
    model: str
    model_id: int | None
    is_baseline: bool
    mean: float
    se: float | None
    submission_id: int | None
    incomplete: bool

    @classmethod
    def of_rows(cls, rows: list[BoardRow]) -> list[OverviewEntry]:
        from leaderboard.stored import ranking_cells

        return [cls(*cell) for cell in ranking_cells(rows)]


def overview_get(*, subset: str = "mini", boards: list[Board] | None = None) -> Overview:
    """``boards`` already built by the caller (default suites) are reused instead of read again."""
    known = {(b.env, b.flow, b.subset): b for b in boards or []}
    columns = [known.get((plugin.slug, flow, subset)) or board_get(env=plugin.slug, flow=flow, subset=subset)
               for plugin in all_plugins() for flow in plugin.flows]
    return _overview(subset, columns, [OverviewEntry.of_rows(board.rows) for board in columns])


def overview_of(subset: str, ranked: list[RankedBoard]) -> Overview:
    """The overview of boards read by ``boards_ranked_get`` (one per column, in the columns' order):
    the same as ``overview_get``'s of the same boards, from what they stored of every row."""
    return _overview(subset, [board.board for board in ranked], [board.overview for board in ranked])


def _overview(subset: str, columns: list[Board], entries: list[list[OverviewEntry]]) -> Overview:
    by_model: dict[tuple[str, str], OverviewRow] = {}
    for index, column in enumerate(entries):
        for row in column:
            key = (row.team, row.model)
            entry = by_model.setdefault(key, OverviewRow(row.model, row.team, row.is_baseline, [None] * len(columns),
                                                            row.model_id))
            current = entry.cells[index]
            if current is None or (current.mean is not None and row.mean > current.mean):
                entry.cells[index] = OverviewCell(row.mean, row.se, row.submission_id, row.incomplete)
    rows = sorted(by_model.values(), key=lambda r: (r.is_baseline, r.model.casefold()))
    return Overview(subset=subset, columns=columns, rows=rows)
