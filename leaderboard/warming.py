"""Computing, into the board cache, the data anonymous visitors' pages read of the boards that changed.

A warm compares each board's generation (and the home page's) with the one it last warmed, so it
recomputes only what changed since, however many changes came in between. It fills the selectors'
cached reads (``leaderboard.selectors.cached_reads``, and ``analysis_reads`` for the default views of
the analysis, comparison, all-pairs and cost pages) under the keys a visitor's request reads them
by (no filter, no team), and sends the builds of the boards' attempt exports; the pages themselves
are rendered by their first visitor, from that data, without a query for it. No page is rendered
here, and no page module is imported.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from django.core.cache import cache

from evaluators.base import FLOWS, SUBSETS, all_plugins
from leaderboard.attempt_exports import board_exports_warm
from leaderboard.cache import HOME, WARM_PENDING_KEY, BoardRef, board_scope, generation
from leaderboard.selectors import board_cached, board_organisations_cached, home_boards_cached, summary_get
from leaderboard.selectors.analysis_reads import analysis_cached, comparison_cached, cost_cached, pairs_cached

logger = logging.getLogger(__name__)

WARMED_KEY = "boards:warmed:{scope}"


@dataclass
class Warmed:
    """What one warm recomputed: the boards, whether the home page's data, and the reads that failed."""

    boards: list[BoardRef] = field(default_factory=list)
    home: bool = False
    failed: list[str] = field(default_factory=list)


def every_board() -> list[BoardRef]:
    return [(plugin.slug, flow, subset) for plugin in all_plugins() for flow in plugin.flows
            for subset in SUBSETS]


def _run(name: str, read: Callable[[], object], warmed: Warmed) -> None:
    try:
        read()
    except Exception:  # noqa: BLE001 - one read failing must not keep the others cold
        logger.warning("could not warm %s", name, exc_info=True)
        warmed.failed.append(name)


def warm_board(env: str, flow: str, subset: str, warmed: Warmed) -> None:
    """The board's default view (what its page, API answer and CSV export read), its organisations,
    the builds of its frame-free attempt exports sent, and the default views of its analysis,
    comparison, all-pairs and cost pages."""
    board = (env, flow, subset)

    def read() -> None:
        data = board_cached(env=env, flow=flow, subset=subset)
        board_organisations_cached(env=env, flow=flow, subset=subset, suite=data.suite)
        # The attempt exports are built by workers of their own (a board of 60,000 attempts takes
        # minutes), so that a visitor's download is usually ready; the board's older files go.
        board_exports_warm(board, [row.submission_id for row in data.rows])

    _run(f"board {board}", read, warmed)
    # Each of the board's other pages on its own: one failing leaves the others warm.
    for name, page_read in (("analysis", analysis_cached), ("compare", comparison_cached), ("pairs", pairs_cached),
                            ("cost", cost_cached)):
        _run(f"{name} {board}", partial(page_read, env=env, flow=flow, subset=subset), warmed)


def warm_home(warmed: Warmed) -> None:
    """Every board's head the home page shows, and its summaries across environments."""
    def read() -> None:
        ranked = home_boards_cached()
        for subset in SUBSETS:
            for flow in FLOWS:
                summary_get(flow=flow, subset=subset, ranked=ranked)

    _run("home", read, warmed)


def _stale(scope: str) -> tuple[bool, tuple[int, ...]]:
    """Whether ``scope`` changed since it was last warmed, and its generation now."""
    now = generation(scope)
    return cache.get(WARMED_KEY.format(scope=scope)) != now, now


def warm_boards(*, everything: bool = False) -> Warmed:
    """Recompute the cached reads of every board changed since its last warm, and the home page's if
    any did (``everything``: all of them). A read computed while its board changed again is not
    stored (``leaderboard.cache.cached``); that change sends a warm of its own."""
    # Cleared first: a change from here on sends another warm rather than waiting on this one.
    cache.delete(WARM_PENDING_KEY)
    warmed = Warmed()
    for env, flow, subset in every_board():
        scope = board_scope(env, flow, subset)
        stale, now = _stale(scope)
        if stale or everything:
            warm_board(env, flow, subset, warmed)
            warmed.boards.append((env, flow, subset))
            cache.set(WARMED_KEY.format(scope=scope), now, timeout=None)
    stale, now = _stale(HOME)
    if stale or everything:
        warm_home(warmed)
        warmed.home = True
        cache.set(WARMED_KEY.format(scope=HOME), now, timeout=None)
    return warmed
