"""Every pair of a board's entries: the paired difference of row A against column B on the
scenarios both ran, whether a paired t-test separates them (the board's tie level), and the share
of those scenarios A wins.

The entries are the board's ranked ones and its baselines (the reference every board shows), in the
board's order; a published row has no per-scenario scores to pair. A page of the matrix is a block
of rows against a block of columns (``PAIRS_PER_PAGE`` entries each), so that any pair of a board of
thousands can be reached while one request reads and computes at most two blocks: their stored
per-scenario means are read in one query and every pair computed in one pass
(``scoring.pairs.pair_matrix``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from leaderboard.analysis import ModelRef, _model_refs
from leaderboard.selectors import Board, BoardRow, board_get
from leaderboard.stored import stored_per_scenario
from scoring.ordering import natural_key
from scoring.pairs import TIE_TOLERANCE, means_matrix, pair_matrix
from scoring.stats import TIE_ALPHA

#: Entries in a block of the matrix: a page is at most this many rows by this many columns.
PAIRS_PER_PAGE = 30
#: The orders of the rows and columns a visitor can ask for (the ``order`` query parameter).
PAIR_ORDERS = {"board": "board order", "winrate": "mean win rate", "name": "name"}


@dataclass(frozen=True)
class PairCell:
    """Row entry A against column entry B."""

    a: ModelRef
    b: ModelRef
    n_shared: int
    #: Mean over the shared scenarios of A's per-scenario mean minus B's.
    mean_difference: float | None
    p_value: float | None
    win_rate: float | None

    @property
    def significant(self) -> bool:
        """Separable by the paired t-test at the level the board shades ties with (p < ``TIE_ALPHA``)."""
        return self.n_shared >= 2 and self.p_value is not None and self.p_value < TIE_ALPHA

    @property
    def tone(self) -> str:
        """The cell's colour: the sign of the difference, strong when it is significant."""
        if self.mean_difference is None:
            return "none"
        sign = ("ahead" if self.mean_difference > TIE_TOLERANCE else "behind" if self.mean_difference < -TIE_TOLERANCE
                else "level")
        return f"{sign} sig" if self.significant and sign != "level" else sign

    @property
    def shown_difference(self) -> str:
        if self.mean_difference is None:
            return "—"
        return "0.00" if self.tone == "level" else f"{self.mean_difference:+.2f}"

    @property
    def shown_win_rate(self) -> str:
        return "" if self.win_rate is None else f"{100 * self.win_rate:.0f}%"

    @property
    def summary(self) -> str:
        """The cell in words (its tooltip and accessible name)."""
        if self.mean_difference is None:
            return f"{self.a.label} and {self.b.label} share no scored scenario"
        if self.p_value is None:
            test = "no paired test (fewer than two shared scenarios)"
        else:
            shown = "p < 0.0001" if self.p_value < 0.0001 else f"p = {self.p_value:.4f}"
            test = f"{shown}, {'separable' if self.significant else 'not separable'} at p < {TIE_ALPHA:g}"
        return (f"{self.a.label} − {self.b.label}: {self.shown_difference} over {self.n_shared} shared "
                f"scenario{'s' if self.n_shared != 1 else ''}; {test}; {self.a.label} wins "
                f"{self.shown_win_rate} of them (ties count half)")

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a.submission_id, "b": self.b.submission_id, "shared_scenarios": self.n_shared,
                "mean_difference": self.mean_difference, "p_value": self.p_value,
                "significant": self.significant, "win_rate": self.win_rate}


@dataclass(frozen=True)
class PairRow:
    model: ModelRef
    #: The entry's place in the board's order (1 = first), and its rank (None: a baseline).
    position: int
    rank: int | None
    #: One per column; None where the column is the row's own entry.
    cells: list[PairCell | None]
    #: The entry's mean win rate against the other entries of the page (its rows and its columns).
    mean_win_rate: float | None


@dataclass
class BoardPairs:
    board: Board
    #: How many entries the matrix has in all (every page's).
    entries: int
    rows: list[PairRow]
    columns: list[ModelRef]
    order: str = "board"
    #: Entries in a block (``PAIRS_PER_PAGE``).
    per_page: int = PAIRS_PER_PAGE
    page: int = 1
    cols: int = 1
    pages: int = 1
    row_span: tuple[int, int] = (0, 0)
    column_span: tuple[int, int] = (0, 0)

    def as_dict(self) -> dict[str, Any]:
        """The API's answer: the page's rows and columns, and one object per cell (None: the diagonal)."""
        def entry(model: ModelRef) -> dict[str, Any]:
            return {"submission": model.submission_id, "model": model.model, "team": model.team,
                    "label": model.label, "baseline": model.is_baseline, "mean": model.mean}

        return {"env": self.board.env, "flow": self.board.flow, "subset": self.board.subset, "suite": self.board.suite,
                "entries": self.entries, "per_page": self.per_page, "pages": self.pages, "page": self.page,
                "cols": self.cols, "order": self.order, "alpha": TIE_ALPHA,
                "rows": [{**entry(row.model), "position": row.position, "rank": row.rank,
                          "mean_win_rate": row.mean_win_rate} for row in self.rows],
                "columns": [entry(model) for model in self.columns],
                "cells": [[cell.as_dict() if cell else None for cell in row.cells] for row in self.rows]}


def pair_entries(board: Board) -> list[BoardRow]:
    """The board's rows the matrix pairs: its ranked entries and baselines, in the board's order."""
    return [row for row in board.rows if row.submission_id is not None and row.mean is not None
            and (row.rank is not None or row.is_baseline)]


def _per_scenario_means(rows: list[BoardRow]) -> list[dict[int, float]]:
    """Each row's per-scenario means: its own where the board carries them, else its stored result's
    (one query for all of them)."""
    wanted = [row.submission_id for row in rows
              if row.submission_id is not None and not row.scenario_means and row.result_stamp is not None]
    stored = stored_per_scenario(wanted, "scenario_means")
    means = []
    for row in rows:
        found = stored.get(row.submission_id) if row.submission_id is not None else None
        means.append(found[0] if found is not None else row.scenario_means)
    return means


def _block(total: int, asked: int) -> tuple[int, slice]:
    pages = max(1, math.ceil(total / PAIRS_PER_PAGE))
    page = min(max(asked, 1), pages)
    return page, slice((page - 1) * PAIRS_PER_PAGE, page * PAIRS_PER_PAGE)


def board_pairs_get(*, env: str, flow: str, subset: str, suite: str | None = None, page: int = 1, cols: int = 1,
                    order: str = "board") -> BoardPairs:
    """Rows block ``page`` against columns block ``cols`` of the board's pair matrix (each kept within
    the blocks there are), the rows and columns of each block sorted by ``order`` (``PAIR_ORDERS``;
    "winrate" is each entry's mean win rate against the other entries of the page). Unknown names
    raise KeyError / ValueError like ``board_get``; so does an unknown order."""
    if order not in PAIR_ORDERS:
        raise ValueError("unknown order")
    board = board_get(env=env, flow=flow, subset=subset, suite=suite)
    paired = pair_entries(board)
    refs = _model_refs(paired)
    pages = max(1, math.ceil(len(paired) / PAIRS_PER_PAGE))
    page, row_slice = _block(len(paired), page)
    cols, column_slice = _block(len(paired), cols)
    # The entries of the page (its rows and columns, the same ones when page == cols), by position.
    positions = sorted(set(range(len(paired))[row_slice]) | set(range(len(paired))[column_slice]))
    means = _per_scenario_means([paired[i] for i in positions])
    scenarios = sorted({key for own in means for key in own})
    values = means_matrix(means, scenarios)
    pairs = pair_matrix(values, values)
    at = {position: index for index, position in enumerate(positions)}

    def cell(a: int, b: int) -> PairCell | None:
        if a == b:
            return None
        test = pairs.test(at[a], at[b])
        return PairCell(a=refs[a], b=refs[b], n_shared=test.n_shared, mean_difference=test.mean_difference,
                        p_value=test.p_value, win_rate=pairs.win(at[a], at[b]))

    def mean_win_rate(position: int) -> float | None:
        """The entry's mean win rate against the page's other entries."""
        rates = [rate for other in positions if other != position
                 and (rate := pairs.win(at[position], at[other])) is not None]
        return sum(rates) / len(rates) if rates else None

    win_rates = {position: mean_win_rate(position) for position in positions}

    def ordered(block: slice) -> list[int]:
        shown = list(range(len(paired)))[block]
        if order == "winrate":
            # Best first; an entry sharing no scenario with the others last.
            return sorted(shown, key=lambda i: (win_rates[i] is None, -(win_rates[i] or 0.0), i))
        if order == "name":
            return sorted(shown, key=lambda i: (natural_key(refs[i].label.casefold()), i))
        return shown

    row_positions, column_positions = ordered(row_slice), ordered(column_slice)
    rows = [PairRow(model=refs[a], position=a + 1, rank=paired[a].rank,
                    cells=[cell(a, b) for b in column_positions], mean_win_rate=win_rates[a])
            for a in row_positions]
    return BoardPairs(board=board, entries=len(paired), rows=rows, columns=[refs[b] for b in column_positions],
                      order=order, per_page=PAIRS_PER_PAGE, page=page, cols=cols, pages=pages,
                      row_span=(row_slice.start + 1, min(row_slice.stop, len(paired))),
                      column_span=(column_slice.start + 1, min(column_slice.stop, len(paired))))
