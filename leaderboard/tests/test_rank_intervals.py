"""Ranks a reader can trust: equal means share a rank ("1, 1, 3"), and each ranked entry shows the
range of ranks it takes over bootstrap resamples of the board's scenarios, computed once for a set
of entries and read back from ``StoredRankIntervals``."""
from __future__ import annotations

import pytest

from leaderboard.models import StoredRankIntervals
from leaderboard.selectors import BoardFilter, board_get
from leaderboard.tests.board_entries import finished_entry
from scoring.stats import bootstrap_rank_intervals, competition_ranks
from submissions.models import ModelEntry


def test_equal_means_share_the_best_rank_of_their_group_and_the_next_rank_is_skipped():
    assert competition_ranks([100.0, 100.0, 90.0]) == [1, 1, 3]
    assert competition_ranks([90.0, 100.0, 100.0, 80.0]) == [3, 1, 1, 4]
    # The same mean summed in another order differs in its last bits: still equal.
    assert competition_ranks([sum([0.1] * 10), 1.0, 0.5]) == [1, 1, 3]
    assert competition_ranks([50.0, 50.01]) == [2, 1]
    assert competition_ranks([]) == []


def test_rank_intervals_are_the_same_on_every_call_and_narrow_where_the_order_is_clear():
    strong = {scenario: 90.0 + scenario % 3 for scenario in range(12)}
    close_a = {scenario: 40.0 + (scenario % 4) * 5 for scenario in range(12)}
    close_b = {scenario: 40.0 + ((scenario + 2) % 4) * 5 for scenario in range(12)}
    weak = {scenario: float(scenario % 2) for scenario in range(12)}
    entries = [strong, close_a, close_b, weak]
    first = bootstrap_rank_intervals(entries)
    assert first == bootstrap_rank_intervals(entries)  # a fixed seed: pages never disagree
    assert first[0] == (1, 1) and first[3] == (4, 4)
    # Two entries with the same scores in another order cannot be told apart: each may be 2nd or 3rd.
    assert first[1] == first[2] == (2, 3)


def test_identical_entries_take_the_same_rank_on_every_resample_and_an_entry_without_scenarios_has_none():
    same = {1: 100.0, 2: 100.0, 3: 100.0}
    assert bootstrap_rank_intervals([same, dict(same), {1: 10.0, 2: 20.0, 3: 30.0}, {}]) == [
        (1, 1), (1, 1), (3, 3), None]
    assert bootstrap_rank_intervals([{1: 5.0}]) == [None]  # one scenario: nothing to resample


@pytest.mark.django_db
def test_a_board_ranks_equal_scores_equally_and_shows_each_entrys_stored_rank_interval(stored_lab):
    perfect_a = ModelEntry.objects.create(team=stored_lab, name="Perfect A")
    perfect_b = ModelEntry.objects.create(team=stored_lab, name="Perfect B")
    middling = ModelEntry.objects.create(team=stored_lab, name="Middling")
    finished_entry(stored_lab, perfect_a, [100.0] * 10)
    finished_entry(stored_lab, perfect_b, [100.0] * 10)
    finished_entry(stored_lab, middling, [40.0, 60.0] * 5)
    board = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    ranks = {row.model: (row.rank, row.rank_low, row.rank_high) for row in board.rows if not row.is_baseline}
    assert ranks == {"Perfect A": (1, 1, 1), "Perfect B": (1, 1, 1), "Middling": (3, 3, 3)}
    assert [row.rank for row in board.rows] == [1, 1, 3]
    assert StoredRankIntervals.objects.count() == 1

    # Read back, not computed again: what is stored is what the next build shows.
    StoredRankIntervals.objects.update(intervals=[[1, 2], [1, 2], [2, 3]])
    again = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    assert [(row.rank_low, row.rank_high) for row in again.rows] == [(1, 2), (1, 2), (2, 3)]
    # A filter that ranks other entries has its own intervals; a search keeps the board's.
    searched = board_get(env="sokoban", flow="global", subset="mini", suite="fixture",
                         filters=BoardFilter(search="middling"))
    assert [(row.model, row.rank, row.rank_low) for row in searched.rows] == [("Middling", 3, 2)]
    board_get(env="sokoban", flow="global", subset="mini", suite="fixture", filters=BoardFilter(open_weights=True))
    assert StoredRankIntervals.objects.count() == 1  # no open-weights entry: nothing ranked, nothing stored

    # A new entry is another set of entries: its intervals are computed, and it ranks in them.
    finished_entry(stored_lab, ModelEntry.objects.create(team=stored_lab, name="Lower"), [30.0] * 10)
    fresh = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    assert [(row.model, row.rank, row.rank_low, row.rank_high) for row in fresh.rows][-1] == ("Lower", 4, 4, 4)
    assert StoredRankIntervals.objects.count() == 2
    exported = fresh.rows[0].as_dict()
    assert (exported["rank"], exported["rank95_low"], exported["rank95_high"]) == (1, 1, 1)
