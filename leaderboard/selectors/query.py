"""A board's query string: what a visitor filtered and searched it by, and the column they sorted by."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from leaderboard.selectors.rows import BoardRow

PROMPT_VERSION = re.compile(r"[-a-zA-Z0-9_.]{1,64}")


#: Parameter-size buckets for filtering (label, lower bound inclusive, upper bound exclusive).
SIZE_BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("<10B", 0, 10e9), ("10-40B", 10e9, 40e9), ("40-100B", 40e9, 100e9), (">100B", 100e9, float("inf")),
)
UNKNOWN_SIZE = "unknown"


def size_bucket(parameter_count: int | None) -> str:
    if parameter_count is None:
        return UNKNOWN_SIZE
    return next(label for label, low, high in SIZE_BUCKETS if low <= parameter_count < high)


@dataclass(frozen=True)
class BoardFilter:
    """What a visitor narrowed the board to. Baseline rows are always kept: they are the reference."""

    open_weights: bool = False
    size: str = ""
    organisation: str = ""
    best_per_team: bool = False
    #: Rank published (reported) numbers among the platform's own runs; off by default.
    rank_reported: bool = False
    #: Only entries the maintainers checked (reported numbers are not runs, so they go too).
    verified_only: bool = False
    #: Rank entries whose scored scenarios do not cover the board's among complete ones; off by default.
    rank_incomplete: bool = False
    #: Search over model and team names (case-insensitive substring). Unlike the other filters it
    #: keeps the board's ranks, and baselines too only when they match: it finds rows, it does not
    #: redefine the competition.
    search: str = ""
    #: Another prompt set's generation of the board than the current one (its version).
    prompts: str = ""

    @property
    def active(self) -> bool:
        return self != BoardFilter()

    def query(self, *, suite: str) -> str:
        """The query string that selects this filter on ``suite``'s board (``leaderboard.query_params`` reads
        it back)."""
        params = {"suite": suite, "open": "1" if self.open_weights else "", "size": self.size, "org": self.organisation,
                  "best": "1" if self.best_per_team else "", "reported": "1" if self.rank_reported else "",
                  "verified": "1" if self.verified_only else "", "incomplete": "1" if self.rank_incomplete else "",
                  "q": self.search, "prompts": self.prompts}
        return urlencode({name: value for name, value in params.items() if value})

    def keeps(self, row: BoardRow) -> bool:
        if row.is_baseline:
            return True
        if self.open_weights and not row.open_weights:
            return False
        if self.verified_only and not row.verified:
            return False
        if self.size and size_bucket(row.parameter_count) != self.size:
            return False
        return not self.organisation or row.organisation.casefold() == self.organisation.casefold()

    def found(self, rows: list[BoardRow]) -> list[BoardRow]:
        """The rows the search matches (all of them without a search)."""
        needle = self.search.casefold()
        return [row for row in rows if needle in row.search_text] if needle else rows

    def apply(self, rows: list[BoardRow]) -> list[BoardRow]:
        kept = [row for row in rows if self.keeps(row)]
        if not self.best_per_team:
            return kept
        best: dict[str, BoardRow] = {}
        for row in kept:
            if row.is_baseline or row.is_reported or row.mean is None:
                continue
            if row.team not in best or row.mean > (best[row.team].mean or 0.0):
                best[row.team] = row
        return [row for row in kept if row.is_baseline or row.is_reported or best.get(row.team) is row]


def _rank_key(row: BoardRow) -> int | None:
    return row.rank


#: The board's columns a visitor can sort by (the ``sort`` query parameter, named as the table's
#: ``data-col`` headers are), each with its value for a row; a missing value (None) sorts last.
SORT_COLUMNS: dict[str, Callable[[BoardRow], Any]] = {
    "rank": _rank_key,
    "model": lambda row: row.model.casefold(),
    "team": lambda row: row.team.casefold(),
    "date": lambda row: row.submitted_at,
    "score": lambda row: row.mean,
    "se": lambda row: row.se,
    "ci": lambda row: row.ci_low,
    "ranks": lambda row: row.rank_low,
    "ia": lambda row: row.ia_pct,
    "ra": lambda row: row.ra_pct,
    "tokens": lambda row: row.tokens_per_scenario,
    "cost": lambda row: row.cost_per_scenario,
    "attempts": lambda row: None if row.is_reported else row.n_scored,
}
#: Columns whose first click sorts low to high (names, ranks, what a run costs); every other starts
#: high to low.
ASCENDING_FIRST = frozenset({"rank", "ranks", "model", "team", "tokens", "cost"})


@dataclass(frozen=True)
class BoardSort:
    """The column a visitor sorted the board by, and the direction; the default is the ranking's order."""

    column: str = ""
    descending: bool = False

    @classmethod
    def of(cls, column: str, direction: str = "") -> BoardSort:
        """The sort by ``column`` ("" the ranking's order) in ``direction`` ("asc", "desc", or "" for the
        column's first-click direction)."""
        if not column:
            return cls()
        descending = direction == "desc" if direction else column not in ASCENDING_FIRST
        return cls(column=column, descending=descending)

    @property
    def direction(self) -> str:
        return "desc" if self.descending else "asc"

    @property
    def shown_column(self) -> str:
        """The column the rows are in the order of: the score's, best first, unless another was asked for."""
        return self.column or "score"

    @property
    def shown_direction(self) -> str:
        return self.direction if self.column else "desc"

    def apply(self, rows: list[BoardRow]) -> list[BoardRow]:
        if not self.column:
            return rows
        value = SORT_COLUMNS[self.column]
        present = [row for row in rows if value(row) is not None]
        missing = [row for row in rows if value(row) is None]
        # Stable: rows with equal values keep the ranking's order.
        return sorted(present, key=value, reverse=self.descending) + missing


# What each page and API of the boards was asked for, read from its query string once
# (``leaderboard.query_params``) and handed to the views and selectors as it is. A suite of "" is
# the environment's default one.

@dataclass(frozen=True)
class BoardQuery:
    """A board page: its suite, filters and sort, and which page of its rows."""

    suite: str = ""
    filters: BoardFilter = BoardFilter()
    sort: BoardSort = BoardSort()
    page: int = 1


@dataclass(frozen=True)
class HomeQuery:
    """The home page: the set its overview shows, every model a page at a time or the first only, and
    the flow of its summary across environments."""

    overview: str = "mini"
    every_model: bool = False
    page: int = 1
    across: str = "global"


@dataclass(frozen=True)
class AnalysisQuery:
    """A board's analysis: the page of its per-entry tables' rows and of its wide tables' columns, or
    the data of its charts instead of the page."""

    suite: str = ""
    page: int = 1
    cols: int = 1
    charts: bool = False


@dataclass(frozen=True)
class CompareQuery:
    """Two of a board's entries side by side (None: the board's first, or second, entry)."""

    suite: str = ""
    a: int | None = None
    b: int | None = None


@dataclass(frozen=True)
class PairsQuery:
    """A block of a board's matrix of all pairs: rows ``page`` against columns ``cols``, in ``order``."""

    suite: str = ""
    page: int = 1
    cols: int = 1
    order: str = "board"


@dataclass(frozen=True)
class CostQuery:
    """A board's cost chart, or (with ``subset``) every board's of that set; ``axis`` "" is the board's own."""

    suite: str = ""
    subset: str = "mini"
    axis: str = ""
