"""What a change to the boards sets off: the cached pages dropped, the stored rankings and aggregates
brought up to date, the changed pages warmed again.

The apps below the boards send ``catalogue.changes.shown_results_changed`` after their writes; the
boards' app config connects it here. The cache itself knows nothing of what the boards store.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction

from catalogue.selectors import default_suite
from evaluators.base import get_plugin
from leaderboard.cache import BoardRef, bump_cache, bump_database, scopes_of, warm_soon
from leaderboard.selectors import Board, board_get
from leaderboard.stored import (
    board_median,
    board_rankings_store,
    entry_aggregates,
    ranking_generations,
    rankings_changing,
    suite_scenarios_get,
)
from submissions.models import Submission

logger = logging.getLogger(__name__)


def boards_changed(*boards: BoardRef) -> None:
    """Call after any write that changes a board: with the boards it changes (``(env, flow, subset)``),
    whose entries and the home page's are then dropped; with none, every board's are.

    The cache's counters move on now, so that the writer, and anyone reading inside its transaction,
    sees the change; every counter moves on once the transaction commits, so that a page another
    process built from the data before the commit is dropped too, and the changed boards' stored
    aggregates (their paired tests, analyses and medians) are brought up to date. The database's counters move only
    then, in statements of their own: a lock on them held to the end of every writer's transaction
    would queue the workers finishing submissions behind one another. Once committed, the changed
    boards' data is computed again in the background where that helps (``warm_soon``).
    """
    scopes = scopes_of(boards)
    bump_cache(scopes)
    rankings_changing(boards)  # their stored rankings are not read inside this transaction

    def committed() -> None:
        bump_cache(scopes)
        bump_database(scopes)
        if boards:
            # What the changed boards' pages compute over all their entries is stored now, by the
            # writer, so that the first page built after the change reads it (leaderboard.stored).
            boards_store(boards)
        warm_soon()

    # robust: the write is committed whatever happens to the counters or the broker.
    transaction.on_commit(committed, robust=True)


def board_ranking_refresh(env: str, flow: str, subset: str) -> Board:
    """Rank the board's default view from its entries and store it; the board, every row of it."""
    generations = ranking_generations([(env, flow, subset)])[(env, flow, subset)]
    board = board_get(env=env, flow=flow, subset=subset)
    board_rankings_store([(board, generations)])
    return board


def board_store(env: str, flow: str, subset: str, suite: str) -> None:
    """Compute and store whatever the default view of the board (anonymous visitors, the current
    prompt set) is missing: its ranking where ``suite`` is the default one, its paired tests against
    the leader, its entries' analysis aggregates, and, where the plug-in has no fixed threshold, its
    median."""
    plugin = get_plugin(env)
    if suite == default_suite(env):
        # The ranking and the other aggregates are the same board's: built once for both.
        board = board_ranking_refresh(env, flow, subset)
    else:
        board = board_get(env=env, flow=flow, subset=subset, suite=suite)
    if not any(row.submission_id is not None for row in board.rows):
        return
    entry_aggregates(board.rows, suite_scenarios_get(env, suite), plugin.tag_groups, subset,
                     panels=plugin.analysis_panels)
    if plugin.fail_threshold is None:
        board_median(board)


def boards_store(boards: Iterable[BoardRef]) -> None:
    """``board_store`` for every suite with entries on each of ``boards``, and each board's ranking
    (its default suite's, entries or none); a board that fails is logged and skipped (its pages
    compute what is missing when they are built)."""
    for env, flow, subset in sorted(set(boards)):
        suites = list(Submission.objects.filter(environment_id=env, flow=flow, subset=subset,
                                                status__in=(Submission.Status.COMPLETED, Submission.Status.INCOMPLETE))
                      .order_by("suite").values_list("suite", flat=True).distinct())
        try:
            if default_suite(env) not in suites:
                # No entry on the default suite (the last one hidden, or reported numbers only): its
                # ranking changed all the same, and the home page reads it.
                board_ranking_refresh(env, flow, subset)
        except Exception:  # noqa: BLE001 - as below
            logger.warning("could not store the ranking of %s/%s/%s", env, flow, subset, exc_info=True)
        for suite in suites:
            try:
                board_store(env, flow, subset, suite)
            except Exception:  # noqa: BLE001 - a write that changed the board is committed whatever happens here
                logger.warning("could not store the aggregates of %s/%s/%s/%s", env, flow, subset, suite,
                               exc_info=True)
