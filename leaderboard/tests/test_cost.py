"""Cost per scenario, effort per entry and the Pareto frontier, against hand-computed values."""
from __future__ import annotations

import math

import pytest

from scoring.cost import CostPoint, cost_axis, pareto_frontier, token_cost
from scoring.stats import AttemptOutcome, summarise_entry


def _keys(points: list[CostPoint]) -> list[str]:
    return [str(point.key) for point in points]


def test_the_frontier_keeps_ties_drops_dominated_entries_and_lists_the_unplaceable_ones():
    points = [
        CostPoint("A", 50.0, 1.0),
        CostPoint("B", 60.0, 2.0),
        CostPoint("C", 55.0, 2.5),   # B scores more for less
        CostPoint("D", 60.0, 2.0),   # B's exact tie: neither is strictly better
        CostPoint("E", 40.0, 1.0),   # A scores more at the same cost
        CostPoint("F", 70.0, None),  # no cost
        CostPoint("G", None, 0.5),   # no score
        CostPoint("H", 50.0, 1.0),   # A's exact tie
        CostPoint("I", 80.0, 10.0),
    ]
    frontier = pareto_frontier(points)
    assert _keys(frontier.frontier) == ["A", "H", "B", "D", "I"]
    assert _keys(frontier.dominated) == ["C", "E"]
    assert _keys(frontier.excluded) == ["F", "G"]
    assert frontier.keys == {"A", "H", "B", "D", "I"}


def test_the_same_score_at_a_higher_cost_is_dominated():
    frontier = pareto_frontier([CostPoint("cheap", 50.0, 1.0), CostPoint("dear", 50.0, 3.0)])
    assert _keys(frontier.frontier) == ["cheap"] and _keys(frontier.dominated) == ["dear"]


def test_a_cheaper_worse_entry_and_a_dearer_better_one_are_both_on_the_frontier():
    frontier = pareto_frontier([CostPoint("dear", 90.0, 5.0), CostPoint("cheap", 20.0, 0.1)])
    assert _keys(frontier.frontier) == ["cheap", "dear"] and frontier.dominated == []


def test_a_single_entry_is_the_frontier_and_no_entry_makes_an_empty_one():
    assert _keys(pareto_frontier([CostPoint("only", 10.0, 3.0)]).frontier) == ["only"]
    empty = pareto_frontier([])
    assert empty.frontier == [] and empty.dominated == [] and empty.excluded == []
    unplaced = pareto_frontier([CostPoint("no cost", 10.0, None)])
    assert unplaced.frontier == [] and _keys(unplaced.excluded) == ["no cost"]


def test_the_cost_is_tokens_times_price_per_million():
    # 12,000 prompt tokens at $2.50/M = $0.03; 800 completion tokens at $10/M = $0.008.
    assert token_cost(12_000, 800, 2.5, 10.0) == pytest.approx(0.038)
    assert token_cost(12_000, 800, 0.0, 0.0) == 0.0  # a free model costs nothing, which is a cost
    assert token_cost(12_000, 800, 2.5, None) is None  # one price alone would cost the rest as free
    assert token_cost(None, 800, 2.5, 10.0) is None


def _outcome(attempt: int, scenario: int, repeat: int, *, calls: int, prompt: int | None, completion: int | None,
             seconds: float, scored: bool = True, measured: bool = True) -> AttemptOutcome:
    return AttemptOutcome(attempt_id=attempt, scenario_id=scenario, repeat=repeat, scored=scored,
                          infra_failed=not scored, score=50.0 if scored else None, seconds=seconds,
                          measured=measured, model_calls=calls, prompt_tokens=prompt, completion_tokens=completion)


def test_an_entrys_effort_is_summed_over_scored_attempts_and_averaged_per_scenario():
    summary = summarise_entry([
        _outcome(1, 1, 0, calls=2, prompt=100, completion=10, seconds=4.0),
        _outcome(2, 1, 1, calls=4, prompt=300, completion=30, seconds=6.0),
        _outcome(3, 2, 0, calls=3, prompt=50, completion=5, seconds=2.0),
        _outcome(4, 2, 1, calls=5, prompt=None, completion=7, seconds=8.0),  # usage missing on a call
        _outcome(5, 2, 2, calls=9, prompt=999, completion=99, seconds=99.0, scored=False),  # infra failure
    ])
    assert summary.effort_attempts == 4 and summary.token_attempts == 3
    assert (summary.model_calls_total, summary.prompt_tokens_total, summary.completion_tokens_total) == (14, 450, 45)
    assert summary.seconds_total == pytest.approx(20.0)
    # Scenario 1: (100 + 300) / 2 = 200 prompt, 20 completion; scenario 2 (its one counted attempt): 50 and 5.
    assert summary.prompt_tokens_per_scenario == pytest.approx((200 + 50) / 2)
    assert summary.completion_tokens_per_scenario == pytest.approx((20 + 5) / 2)
    assert summary.tokens_per_scenario == pytest.approx(125 + 12.5)
    # Calls: scenario 1 (2 + 4) / 2 = 3, scenario 2 (3 + 5) / 2 = 4; seconds: 5 and 5.
    assert summary.model_calls_per_scenario == pytest.approx(3.5)
    assert summary.seconds_per_scenario == pytest.approx(5.0)
    # At $2/M prompt and $8/M completion: (125 × 2 + 12.5 × 8) / 1e6.
    assert token_cost(summary.prompt_tokens_per_scenario, summary.completion_tokens_per_scenario, 2.0, 8.0) == \
        pytest.approx(350 / 1e6)


def test_an_upload_measures_no_effort_at_all_rather_than_zeros():
    summary = summarise_entry([_outcome(1, 1, 0, calls=1, prompt=None, completion=None, seconds=0.4, measured=False)])
    assert summary.n_scored == 1 and summary.effort_attempts == 0 and summary.token_attempts == 0
    assert summary.model_calls_total is None and summary.prompt_tokens_total is None
    assert summary.tokens_per_scenario is None and summary.seconds_per_scenario is None


def test_an_endpoint_without_usage_has_calls_and_time_but_unknown_tokens():
    summary = summarise_entry([_outcome(1, 1, 0, calls=3, prompt=None, completion=None, seconds=1.5)])
    assert summary.effort_attempts == 1 and summary.token_attempts == 0 and summary.model_calls_total == 3
    assert summary.prompt_tokens_total is None and summary.tokens_per_scenario is None


def test_costs_within_an_order_of_magnitude_get_a_linear_axis_fitted_to_them():
    # 355 … 391 tokens: a span of 36, 8 % of it (2.88) on each side.
    axis = cost_axis([391.0, 355.0, 372.0])
    assert axis is not None and axis.log is False
    assert (axis.low, axis.high) == (pytest.approx(352.12), pytest.approx(393.88))


def test_costs_spanning_an_order_of_magnitude_get_a_log_axis_fitted_to_them():
    # 0.001 … 0.1 USD: two decades, 8 % of them (0.16 decades) on each side.
    axis = cost_axis([0.001, 0.01, 0.1])
    assert axis is not None and axis.log is True
    assert (axis.low, axis.high) == (pytest.approx(10 ** -3.16), pytest.approx(10 ** -0.84))


def test_a_free_entry_sits_a_decade_below_the_cheapest_on_a_log_axis_and_at_zero_on_a_linear_one():
    # Log: 0.0011 and 0.075; the floor is 1e-4, the axis from 1e-4 to 0.075 (2.875 decades) padded by 0.23.
    axis = cost_axis([0.0, 0.0011, 0.075])
    assert axis is not None and axis.log is True and axis.floor == pytest.approx(1e-4)
    assert axis.low == pytest.approx(10 ** (-4 - 0.08 * (math.log10(0.075) + 4)))
    # Linear: 0 … 391, padded by 31.28 on each side (below 0 too, so the free point is not on the edge).
    axis = cost_axis([0.0, 355.0, 391.0])
    assert axis is not None and axis.log is False and axis.floor == 0.0
    assert (axis.low, axis.high) == (pytest.approx(-31.28), pytest.approx(422.28))


def test_a_single_cost_gets_five_percent_of_room_and_none_gets_no_axis():
    axis = cost_axis([400.0])
    assert axis is not None and (axis.log, axis.low, axis.high) == (False, pytest.approx(380.0), pytest.approx(420.0))
    assert cost_axis([]) is None
