import math

import pytest

from leaderboard.stats import summarise


def test_it_averages_all_attempts_and_takes_the_error_over_scenario_means():
    # scenario a: 40, 60 -> 50 ; scenario b: 70 -> 70 ; scenario c: 90, 90, 90 -> 90
    scores = [("a", 40.0), ("a", 60.0), ("b", 70.0), ("c", 90.0), ("c", 90.0), ("c", 90.0)]
    summary = summarise(scores)
    assert summary.mean == pytest.approx(440 / 6)
    # per-scenario means 50, 70, 90: sample sd = 20, se = 20 / sqrt(3)
    assert summary.se == pytest.approx(20 / math.sqrt(3))
    assert (summary.n_scenarios, summary.n_scores) == (3, 6)


def test_it_has_no_standard_error_for_a_single_scenario():
    summary = summarise([("a", 1.0), ("a", 3.0)])
    assert summary.mean == 2.0 and summary.se is None


def test_it_summarises_nothing_as_missing():
    summary = summarise([])
    assert summary.mean is None and summary.se is None and summary.n_scores == 0
