import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from scoring.stats import (
    AttemptOutcome,
    best_of_n,
    bootstrap_ci,
    paired_test,
    scenario_means,
    summarise,
    summarise_entry,
)


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


def test_the_bootstrap_interval_of_two_scenarios_spans_their_means():
    # Resampling {0, 1} twice gives means 0, 0.5, 1 with probabilities ¼, ½, ¼: the 2.5 % and
    # 97.5 % quantiles are 0 and 1.
    assert bootstrap_ci([0.0, 1.0]) == (0.0, 1.0)


def test_the_bootstrap_interval_of_equal_scenarios_has_no_width_and_one_scenario_has_none():
    assert bootstrap_ci([3.0, 3.0, 3.0]) == (3.0, 3.0)
    assert bootstrap_ci([3.0]) is None


def test_the_bootstrap_interval_agrees_with_scipys_percentile_bootstrap():
    means = np.random.default_rng(1).normal(50, 10, size=30)
    ours = bootstrap_ci(means, resamples=20000)
    theirs = scipy_stats.bootstrap((means,), np.mean, n_resamples=20000, method="percentile",
                                   random_state=np.random.default_rng(2)).confidence_interval
    assert ours[0] == pytest.approx(theirs.low, abs=0.4) and ours[1] == pytest.approx(theirs.high, abs=0.4)
    assert ours[0] < means.mean() < ours[1]


def test_scenario_means_average_each_scenarios_repeats():
    assert scenario_means([("a", 1.0), ("a", 3.0), ("b", 5.0)]) == {"a": 2.0, "b": 5.0}


def test_the_paired_test_is_scipys_ttest_rel_on_the_shared_scenarios():
    leader = {"a": 90.0, "b": 80.0, "c": 85.0, "d": 70.0}
    other = {"a": 60.0, "b": 55.0, "c": 70.0, "e": 99.0}
    result = paired_test(leader, other)
    expected = scipy_stats.ttest_rel([90, 80, 85], [60, 55, 70])
    assert result.n_shared == 3 and result.mean_difference == pytest.approx((30 + 25 + 15) / 3)
    assert result.p_value == pytest.approx(expected.pvalue)
    assert not result.tied  # p ≈ 0.02


def test_entries_that_differ_by_noise_are_tied_and_identical_ones_too():
    assert paired_test({"a": 50, "b": 60, "c": 70}, {"a": 52, "b": 57, "c": 71}).tied
    assert paired_test({"a": 50, "b": 60}, {"a": 50, "b": 60}).tied
    assert paired_test({"a": 50}, {"a": 10}).tied  # one shared scenario cannot separate them
    assert paired_test({"a": 50}, {"b": 10}).n_shared == 0


def test_best_of_n_is_the_expected_maximum_over_subsets_of_the_repeats():
    # Pairs of {1, 2, 3}: max 2, 3, 3 → 8 / 3.
    assert best_of_n([3.0, 1.0, 2.0], 2) == pytest.approx(8 / 3)
    assert best_of_n([3.0, 1.0, 2.0], 1) == pytest.approx(2.0)  # the plain mean
    assert best_of_n([3.0, 1.0, 2.0], 3) == 3.0
    assert best_of_n([1.0, 2.0], 3) is None


def test_best_of_n_matches_enumerating_every_subset():
    import itertools

    scores = [5.0, 1.0, 4.0, 4.0, 9.0, 0.0]
    for n in range(1, 7):
        subsets = list(itertools.combinations(scores, n))
        assert best_of_n(scores, n) == pytest.approx(sum(max(s) for s in subsets) / len(subsets))


def test_an_entry_summary_counts_only_scored_attempts_and_keeps_repeats_in_order():
    outcomes = [
        # scenario 7: repeats 1 then 0 (given out of order), one invalid action
        AttemptOutcome(attempt_id=12, scenario_id=7, repeat=1, scored=True, infra_failed=False, score=60.0,
                       invalid_action=True, breakdown={"parse": 0.1, "render": 0.0}),
        AttemptOutcome(attempt_id=11, scenario_id=7, repeat=0, scored=True, infra_failed=False, score=40.0,
                       repeating_action=True, breakdown={"parse": 0.3, "render": 0.2}),
        AttemptOutcome(attempt_id=13, scenario_id=9, repeat=0, scored=True, infra_failed=False, score=90.0),
        AttemptOutcome(attempt_id=14, scenario_id=9, repeat=1, scored=False, infra_failed=True, score=None),
        AttemptOutcome(attempt_id=15, scenario_id=9, repeat=2, scored=False, infra_failed=False, score=None),
    ]
    entry = summarise_entry(outcomes, ("parse", "render"))
    # scores 40, 60, 90 -> mean 190/3; scenario means 50 and 90 -> sd = 28.28..., se = 20
    assert entry.mean == pytest.approx(190 / 3) and entry.se == pytest.approx(20.0)
    assert (entry.n_scenarios, entry.n_scored, entry.n_attempts, entry.n_infra_failed) == (2, 3, 5, 1)
    assert entry.ia_pct == pytest.approx(100 / 3) and entry.ra_pct == pytest.approx(100 / 3)
    # lost parts summed over scored attempts (a missing breakdown counts 0) over 3 attempts, in %
    assert entry.breakdown == pytest.approx({"parse": 40 / 3, "render": 20 / 3})
    assert entry.scenario_means == {7: 50.0, 9: 90.0}
    assert entry.scenario_scores == {7: [40.0, 60.0], 9: [90.0]}
    assert entry.first_attempts == {7: 11, 9: 13}
    # best of 1: the mean of the scenario means (50, 90); best of 2: only scenario 7 has two repeats, max 60
    assert [tuple(p) for p in entry.best_of_n] == [(1, 70.0, 2), (2, 60.0, 1)]
    assert (entry.ci_low, entry.ci_high) == bootstrap_ci([50.0, 90.0])


def test_an_entry_without_scores_has_no_numbers():
    entry = summarise_entry([AttemptOutcome(1, 1, 0, scored=False, infra_failed=True, score=None)], ("parse",))
    assert entry.mean is None and entry.ci_low is None and entry.ia_pct is None and entry.breakdown is None
    assert (entry.n_attempts, entry.n_infra_failed, entry.n_scored) == (1, 1, 0)
