"""The model page's chart: one panel per environment, each on its own score axis fitted to the entry's
mean and 95 % interval, with room for the value's label beyond the whisker (hand-computed ranges)."""
from __future__ import annotations

import pytest

from leaderboard.selectors import ModelBoardEntry, ModelEnvironmentBest, model_chart_data
from leaderboard.selectors.rows import BoardRow


def best(env: str, title: str, mean: float, low: float | None, high: float | None) -> ModelEnvironmentBest:
    row = BoardRow(submission_id=1, model="M", team="T", organisation="", parameter_count=None, open_weights=False,
                   is_baseline=False, status="completed", mean=mean, ci_low=low, ci_high=high, n_scenarios=10,
                   board_scenarios=10)
    entry = ModelBoardEntry(env=env, env_title=title, score_label=f"{title} score", flow="global", subset="mini",
                            suite="fixture", row=row)
    return ModelEnvironmentBest(env=env, title=title, score_label=f"{title} score", entry=entry)


def test_each_environment_has_its_own_axis_fitted_to_its_bar_and_whisker():
    panels = model_chart_data([best("sokoban", "Sokoban", 60.0, 50.0, 70.0),
                               best("football", "Football", -0.5, -0.9, 0.1),
                               best("webui", "WebUI", 40.0, None, None)])
    by_env = {panel["env"]: panel for panel in panels}
    # Sokoban: 0 … 70 (the whisker's top), 18 % of 70 (12.6) above it for the label.
    assert by_env["Sokoban"]["range"] == [0.0, pytest.approx(82.6)]
    assert (by_env["Sokoban"]["label_y"], by_env["Sokoban"]["label_side"]) == (70.0, "above")
    # Football: −0.9 … 0.1 (span 1), its negative bar's label below the whisker's end: 0.18 below, 0.05 above.
    assert by_env["Football"]["range"] == [pytest.approx(-1.08), pytest.approx(0.15)]
    assert (by_env["Football"]["label_y"], by_env["Football"]["label_side"]) == (-0.9, "below")
    # WebUI, no interval: 0 … 40, and 7.2 above the bar for its label.
    assert by_env["WebUI"]["range"] == [0.0, pytest.approx(47.2)]
    assert by_env["WebUI"]["label_y"] == 40.0
    assert {panel["label"] for panel in panels} == {"Sokoban score", "Football score", "WebUI score"}


def test_a_mean_of_zero_still_gets_an_axis_of_some_height():
    (panel,) = model_chart_data([best("sokoban", "Sokoban", 0.0, 0.0, 0.0)])
    assert panel["range"][0] == 0.0 and panel["range"][1] > 0.0


def test_a_mean_of_zero_is_drawn_against_its_boards_highest_mean():
    panel_of_zero = best("webui", "WebUI", 0.0, 0.0, 0.0)
    panel_of_zero.entry.board_top = 100.0
    (panel,) = model_chart_data([panel_of_zero])
    # 0 … 100 (the board's best), 18 % of 100 above for the label; the label sits on the bar's end, 0.
    assert panel["range"] == [0.0, pytest.approx(118.0)]
    assert (panel["label_y"], panel["label_side"]) == (0.0, "above")
