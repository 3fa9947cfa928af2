"""The board cache's copies of what a board's analysis, comparison, all-pairs and cost pages read by default.

Each is the default view an anonymous visitor opens first (no suite, first page, the board's order,
the cost page's own axis), kept under the board's generation (``leaderboard.cache.cached``) as the
board's own data is (``cached_reads``): a write that changes the board moves it on, so the next read
computes it again, and the warm (``leaderboard.warming``) computes it ahead of the next visitor. Any
other query of these pages is computed for its request (its rendered page is still cached).
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Protocol, TypeVar

from leaderboard.selectors.board_cost import BoardCost, board_cost_get
from leaderboard.selectors.rows import Board

if TYPE_CHECKING:
    from leaderboard.analysis import BoardAnalysis, BoardComparison
    from leaderboard.pairs import BoardPairs

#: Entries of the analysis page's per-entry tables on one page (its views' ``ANALYSIS_ROWS_PER_PAGE``).
ANALYSIS_ROWS = 25


class _OfABoard(Protocol):
    @property
    def board(self) -> Board: ...


V = TypeVar("V", bound=_OfABoard)


def _default_view(name: str, env: str, flow: str, subset: str, compute: Callable[[], V], *extra: Hashable) -> V:
    """``compute()``'s answer from the board cache, under the board's generation; kept only for a
    board with scenarios (unknown names raise as ``board_get`` does, and nothing is stored for them)."""
    from leaderboard.cache import board_scope, cached

    return cached(name, (env, flow, subset, *extra), compute, keep=lambda view: bool(view.board.scenario_count),
                  scope=board_scope(env, flow, subset))


def analysis_cached(*, env: str, flow: str, subset: str) -> BoardAnalysis:
    """The first page of the board's analysis (``board_analysis_get``)."""
    from leaderboard.analysis import board_analysis_get

    return _default_view("analysis-data", env, flow, subset, lambda: board_analysis_get(
        env=env, flow=flow, subset=subset, page=1, per_page=ANALYSIS_ROWS), ANALYSIS_ROWS)


def comparison_cached(*, env: str, flow: str, subset: str) -> BoardComparison:
    """The board's first entry against its second (``board_compare_get``)."""
    from leaderboard.analysis import board_compare_get

    return _default_view("compare-data", env, flow, subset,
                         lambda: board_compare_get(env=env, flow=flow, subset=subset))


def pairs_cached(*, env: str, flow: str, subset: str) -> BoardPairs:
    """The first block of the board's pair matrix, in the board's order (``board_pairs_get``)."""
    from leaderboard.pairs import board_pairs_get

    return _default_view("pairs-data", env, flow, subset, lambda: board_pairs_get(env=env, flow=flow, subset=subset))


def cost_cached(*, env: str, flow: str, subset: str) -> BoardCost:
    """The board's cost view on its own axis (``board_cost_get``)."""
    return _default_view("cost-data", env, flow, subset, lambda: board_cost_get(env=env, flow=flow, subset=subset))
