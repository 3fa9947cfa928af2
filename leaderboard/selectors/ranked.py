"""The boards as the home page shows them, read from their stored rankings where those are current."""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace

from django.db.models import Q

from evaluators.base import get_plugin
from leaderboard.models import StoredBoardRanking
from leaderboard.selectors.boards import board_get
from leaderboard.selectors.overview import OverviewEntry
from leaderboard.selectors.rows import Board

#: One logger for every board read, named after the package.
logger = logging.getLogger(__package__)


@dataclass
class RankedBoard:
    """A board's default view (anonymous visitors, its default suite and current prompt set, no
    filter) as the home page reads it: the board with its first rows only (``entries`` counts them
    all), and what the overview reads of every row. Read from a stored ranking, the board carries
    neither its prompt set nor its generations (the home page shows neither)."""

    board: Board
    overview: list[OverviewEntry]


def _ranked_from(ranking: StoredBoardRanking, head: int) -> RankedBoard | None:
    """A stored ranking as the board it holds, with its first ``head`` rows (parsed: the others are
    left as text); None when it cannot be read as this code writes it (ranked again instead)."""
    from leaderboard.stored import ranking_row_load

    plugin = get_plugin(ranking.env)
    try:
        rows = [ranking_row_load(line) for line in ranking.rows.split("\n", head)[:head] if line]
        overview = [OverviewEntry(*cell) for cell in json.loads(ranking.cells)]
        return RankedBoard(
            board=Board(env=ranking.env, title=plugin.title, score_label=plugin.score_label, flow=ranking.flow,
                        subset=ranking.subset, suite=ranking.suite, scenario_count=ranking.board["scenario_count"],
                        has_action_diagnostics=plugin.has_action_diagnostics, breakdown_keys=plugin.breakdown_keys,
                        rows=rows, checked_scenarios=ranking.board["checked_scenarios"],
                        flagged_scenarios=list(ranking.board["flagged_scenarios"]), note=ranking.board["note"],
                        entries=ranking.entries),
            overview=overview)
    except (ValueError, TypeError, KeyError):
        logger.warning("could not read the stored ranking of %s/%s/%s", ranking.env, ranking.flow, ranking.subset,
                       exc_info=True)
        return None


def boards_ranked_get(boards: list[tuple[str, str, str]], *, head: int) -> list[RankedBoard]:
    """Each board's default view with its first ``head`` rows, in the order asked, read from its
    stored ranking (``StoredBoardRanking``) where that is current: one query for the boards'
    generations, one for every ranking. A board whose ranking is absent or stale is ranked now, as
    its page ranks it, and stored (``leaderboard.stored.board_rankings_store``); its rows are
    ``board_get``'s either way, field for field."""
    from datetime import timedelta

    from django.conf import settings
    from django.utils import timezone

    from leaderboard.stored import board_rankings_store, ranking_fingerprint, ranking_generations, rankings_uncommitted

    if not boards:
        return []
    # The generations first: a ranking stored before a write that moved them on is never read.
    generations = ranking_generations(boards)
    wanted = Q()
    for env, flow, subset in boards:
        wanted |= Q(env=env, flow=flow, subset=subset)
    # A ranking is kept no longer than a cached page, so that a change no write announced (a renamed
    # team) shows within the same time; with the board cache off (0), every build ranks the boards.
    age = settings.MAGEBENCH_BOARD_CACHE_SECONDS
    oldest = timezone.now() - timedelta(seconds=age) if age > 0 else None
    # Inside a write's transaction the generations have not moved yet: what it changed is ranked again.
    uncommitted = rankings_uncommitted(boards)
    stored = {(ranking.env, ranking.flow, ranking.subset): ranking
              for ranking in StoredBoardRanking.objects.filter(wanted)}
    ranked = []
    ranked_now: list[tuple[Board, tuple[int, int]]] = []
    for env, flow, subset in boards:
        ranking = stored.get((env, flow, subset))
        current = (ranking is not None and oldest is not None and ranking.computed_at >= oldest
                   and (ranking.everything_generation, ranking.board_generation) == generations[(env, flow, subset)]
                   and ranking.fingerprint == ranking_fingerprint(env, flow)
                   and (env, flow, subset) not in uncommitted)
        found = _ranked_from(ranking, head) if ranking is not None and current else None
        if found is None:
            board = board_get(env=env, flow=flow, subset=subset)
            # Stored as of the generations read above, before it was ranked.
            ranked_now.append((board, generations[(env, flow, subset)]))
            found = RankedBoard(board=replace(board, rows=board.rows[:head], entries=len(board.rows)),
                                overview=OverviewEntry.of_rows(board.rows))
        ranked.append(found)
    # Every row of them: the boards returned are copies holding the head only.
    board_rankings_store(ranked_now)
    return ranked
