"""The GridWalk score, counted by hand on small levels."""
from __future__ import annotations

import pytest

from evaluators.base import ScenarioSpec
from evaluators.gridwalk.env import EpisodeOver, GridWalkEpisode
from evaluators.gridwalk.grid import Level, LevelError, score_from
from evaluators.gridwalk.plugin import GridWalkPlugin
from evaluators.settings import EvaluationSettings

DETOUR = Level.from_rows([".......", ".@.#.G.", "...#..."])  # d_0 = 6: the wall forces a way round


def _episode(level: Level = DETOUR) -> GridWalkEpisode:
    episode = GridWalkEpisode(level, render_observations=False)
    episode.reset()
    return episode


@pytest.mark.parametrize(("remaining", "initial", "expected"), [
    (0, 6, 100.0),
    (6, 6, 0.0),
    (2, 6, 66.666667),
    (3, 4, 25.0),
    (9, 6, 0.0),  # farther than at the start is no worse than standing still
])
def test_the_score_is_100_times_the_share_of_the_distance_walked(remaining: int, initial: int, expected: float) -> None:
    assert score_from(remaining, initial) == expected


def test_distances_go_round_the_walls() -> None:
    assert DETOUR.distance(DETOUR.start) == 6
    assert DETOUR.distance((1, 4)) == 1
    assert DETOUR.distance((2, 1)) == 7  # one row below the start: one move more


def test_a_shortest_route_reaches_the_goal_and_scores_100() -> None:
    episode = _episode()
    for move in DETOUR.route(DETOUR.start):
        result = episode.step(move)
    assert result.done and episode.reached
    assert episode.score() == 100.0
    assert episode.score_details() == {"solved": True, "distance": 0, "initial_distance": 6, "steps": 6}


def test_two_moves_of_six_score_one_third() -> None:
    episode = _episode()
    episode.step("North")
    result = episode.step("East")
    assert result.reward == 1.0 and not result.done
    assert episode.distance == 4
    assert episode.score() == round(100 * (1 - 4 / 6), 6) == 33.333333


def test_a_move_into_a_wall_changes_nothing_and_gains_nothing() -> None:
    episode = _episode(Level.from_rows(["#@.G#"]))
    result = episode.step("West")
    assert result.info["changed"] is False and result.reward == 0.0
    assert episode.position == (0, 1) and episode.score() == 0.0


def test_walking_away_from_the_goal_is_a_negative_reward_and_scores_zero() -> None:
    episode = _episode()
    result = episode.step("West")
    assert result.reward == -1.0 and episode.distance == 7
    assert episode.score() == 0.0


def test_the_episode_ends_after_max_steps_and_refuses_more() -> None:
    episode = _episode(Level.from_rows(["@...G"], max_steps=2))
    episode.step("East")
    result = episode.step("East")
    assert result.done and not episode.reached
    assert episode.score() == 50.0
    with pytest.raises(EpisodeOver):
        episode.step("East")


def test_an_unknown_move_is_refused() -> None:
    with pytest.raises(ValueError):
        _episode().step("Up")


@pytest.mark.parametrize("rows", [[], ["@.", "G"], ["@#G"], ["@..", "..."], ["@.X.G"]])
def test_rows_that_are_no_playable_level_are_refused(rows: list[str]) -> None:
    with pytest.raises(LevelError):
        Level.from_rows(rows)


def test_the_idle_score_is_zero_in_closed_form() -> None:
    spec = ScenarioSpec(env="gridwalk", key="k", data={"grid": DETOUR.to_rows()})
    plugin = GridWalkPlugin()
    episode = plugin.new_episode(spec, EvaluationSettings.from_mapping({"observation_images": False}, plugin, "global"))
    episode.reset()
    assert plugin.idle_score(spec) == episode.score() == 0.0
