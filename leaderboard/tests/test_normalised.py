"""The summary across environments' arithmetic: each scenario between its floor and its ceiling."""
from __future__ import annotations

import pytest

from scoring.normalised import Normalised, combined, linear_map, mean_and_se, normalise, normalised_score


def test_a_score_is_placed_between_its_floor_and_its_ceiling_as_a_percentage() -> None:
    # Sokoban with R_ub = 12: doing nothing scores 100 − 5·12 = 40, an optimal solution 100.
    assert normalise(70.0, 40.0, 100.0) == pytest.approx(50.0)
    assert normalise(40.0, 40.0, 100.0) == 0.0
    assert normalise(100.0, 40.0, 100.0) == pytest.approx(100.0)


def test_a_score_below_the_floor_is_not_clipped() -> None:
    assert normalise(-10.0, 0.0, 50.0) == pytest.approx(-20.0)


def test_a_ceiling_not_above_its_floor_normalises_nothing() -> None:
    assert normalise(5.0, 3.0, 3.0) is None
    assert normalise(5.0, 3.0, 1.0) is None


def test_an_entry_is_the_mean_over_scenarios_with_the_standard_error_over_scenarios() -> None:
    # a: 100·(60 − 40)/(100 − 40) = 33.33…; b: 30; c: ceiling = floor, skipped.
    # Mean (33.33… + 30)/2 = 31.66…; for two values the SE is half their distance: 1.66….
    result = normalised_score({"a": 60.0, "b": 30.0, "c": 90.0}, {"a": 40.0, "b": 0.0, "c": 90.0},
                              {"a": 100.0, "b": 100.0, "c": 90.0})
    assert result.mean == pytest.approx(31.666667, abs=1e-6)
    assert result.se == pytest.approx(1.666667, abs=1e-6)
    assert (result.n_scenarios, result.skipped) == (2, 1)


def test_a_scenario_without_a_floor_or_a_ceiling_does_not_count() -> None:
    result = normalised_score({"a": 50.0, "b": 10.0}, {"a": 0.0}, {"a": 100.0, "b": 100.0})
    assert result == Normalised(mean=50.0, se=None, n_scenarios=1, skipped=0)


def test_the_standard_error_uses_ddof_one() -> None:
    # 10, 20, 30: sample variance 100, SD 10, SE 10/√3 = 5.7735.
    mean, se = mean_and_se([10.0, 20.0, 30.0])
    assert mean == pytest.approx(20.0)
    assert se == pytest.approx(5.773503, abs=1e-6)
    assert mean_and_se([]) == (None, None)


def test_a_constant_floor_and_ceiling_map_the_mean_and_scale_its_standard_error_by_the_slope() -> None:
    # Floor 2.5, ceiling 22.5: slope 100 / 20 = 5. Mean 12.5 → 5 · 10 = 50; SE 0.4 → 2.
    assert linear_map(12.5, 0.4, 2.5, 22.5) == (pytest.approx(50.0), pytest.approx(2.0))
    # Above the ceiling reads above 100, below the floor below 0; no SE stays none.
    assert linear_map(32.5, None, 2.5, 22.5) == (pytest.approx(150.0), None)
    assert linear_map(0.5, 0.1, 2.5, 22.5) == (pytest.approx(-10.0), pytest.approx(0.5))
    assert linear_map(5.0, 1.0, 3.0, 3.0) == (None, None)


def test_per_scenario_normalisation_with_one_floor_and_ceiling_is_the_linear_map_of_the_mean() -> None:
    # Raw 4.5, 12.5, 20.5: mean 12.5, SD 8, SE 8/√3 = 4.6188. Floor 2.5, ceiling 22.5: slope 5, so
    # per scenario 10, 50, 90: mean 50, SD 40, SE 40/√3 = 23.094 = 5 · 4.6188.
    raw = {"a": 4.5, "b": 12.5, "c": 20.5}
    result = normalised_score(raw, dict.fromkeys(raw, 2.5), dict.fromkeys(raw, 22.5))
    mean, se = mean_and_se(list(raw.values()))
    assert (mean, se) == (pytest.approx(12.5), pytest.approx(4.618802, abs=1e-6))
    assert result.mean == pytest.approx(50.0) and result.se == pytest.approx(23.094011, abs=1e-6)
    assert (result.mean, result.se) == pytest.approx(linear_map(mean, se, 2.5, 22.5))


def test_environments_combine_as_a_mean_with_their_errors_added_in_quadrature() -> None:
    # (50 + 20)/2 = 35; √(3² + 4²)/2 = 2.5.
    assert combined([(50.0, 3.0), (20.0, 4.0)]) == (pytest.approx(35.0), pytest.approx(2.5))
    assert combined([(50.0, 3.0), (20.0, None)]) == (pytest.approx(35.0), None)
    assert combined([]) == (None, None)
