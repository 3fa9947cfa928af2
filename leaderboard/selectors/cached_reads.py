"""The board cache's copies of what the board page, its API and the home page read.

Each is the plain selector's answer, kept under the generation of the board (or of the home page)
it shows (``leaderboard.cache.cached``): a write that changes a board moves that generation on, so
the next read computes it again, and the warm (``leaderboard.warming``) computes it ahead of the
next visitor. Pages render from these; no rendered page is needed to fill them.
"""
from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from leaderboard.selectors.boards import board_get, board_organisations
from leaderboard.selectors.query import BoardFilter
from leaderboard.selectors.ranked import RankedBoard, boards_ranked_get
from leaderboard.selectors.rows import Board

if TYPE_CHECKING:
    from leaderboard.cache import BoardRef

#: Rows of each board the home page shows (the board's page has them all).
HOME_BOARD_ROWS = 10


def board_storable(board: Board, filters: BoardFilter, organisations: list[str] | None = None) -> bool:
    """Whether a board built for a query may be cached: a suite with no scenarios, or an organisation
    no entry has, or a search, is computed for each request instead, so that made-up queries cannot
    fill the cache."""
    if not board.scenario_count:
        return False
    if filters.prompts and filters.prompts not in {generation.version for generation in board.generations
                                                   if generation.entries or generation.current}:
        return False  # a made-up version is computed for its request, as a search is
    if filters.search:
        return False  # any text can be searched for: each search is computed for its request
    if not filters.organisation:
        return True
    known = organisations if organisations is not None else board_organisations_cached(
        env=board.env, flow=board.flow, subset=board.subset, suite=board.suite)
    return filters.organisation.casefold() in {name.casefold() for name in known}


def board_cached(*, env: str, flow: str, subset: str, suite: str | None = None, filters: BoardFilter | None = None,
                 viewer_team_ids: Collection[int] = ()) -> Board:
    """``board_get``'s board for this query and these teams, from the board cache. Unknown names raise
    as ``board_get`` does, and nothing is stored for them."""
    from leaderboard.cache import board_scope, cached

    shown = filters or BoardFilter()
    teams = tuple(sorted(viewer_team_ids))
    return cached("board-data", (env, flow, subset, suite or "", shown, teams),
                  lambda: board_get(env=env, flow=flow, subset=subset, suite=suite, filters=shown,
                                    viewer_team_ids=teams),
                  keep=lambda board: board_storable(board, shown), scope=board_scope(env, flow, subset))


def board_organisations_cached(*, env: str, flow: str, subset: str, suite: str) -> list[str]:
    """``board_organisations``, from the board cache."""
    from leaderboard.cache import board_scope, cached

    return cached("board-organisations", (env, flow, subset, suite),
                  lambda: board_organisations(env=env, flow=flow, subset=subset, suite=suite),
                  scope=board_scope(env, flow, subset))


def boards_ranked_cached(boards: list[BoardRef], *, head: int) -> list[RankedBoard]:
    """``boards_ranked_get``'s boards, from the board cache under the home page's generation (which
    moves on with any board's)."""
    from leaderboard.cache import HOME, cached

    return cached("boards-ranked", (tuple(boards), head), lambda: boards_ranked_get(boards, head=head), scope=HOME)


def home_boards_cached() -> dict[BoardRef, RankedBoard]:
    """Every board the home page shows, each with its first ``HOME_BOARD_ROWS`` rows, in the page's order."""
    from evaluators.base import SUBSETS, all_plugins

    wanted = [(plugin.slug, flow, subset) for plugin in all_plugins() for subset in SUBSETS
              for flow in plugin.flows]
    return dict(zip(wanted, boards_ranked_cached(wanted, head=HOME_BOARD_ROWS), strict=True))
