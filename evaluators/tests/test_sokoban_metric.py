"""The Sokoban metric and reward bookkeeping, checked against hand-computed numbers (reference §2.2)."""
from __future__ import annotations

import pytest

from evaluators.base import ScenarioSpec, get_plugin
from evaluators.sokoban.env import EpisodeOver, SokobanEpisode, idle_score_from, score_from
from evaluators.sokoban.levels import env_from_grid

# Player, box, target, free square, wall: one push solves it (R_ub = 10 + 1 − 0.1 = 10.9); a second
# push moves the box off the target again.
CORRIDOR = "######\n#@$. #\n######"
CORRIDOR_UB = 10.9


def corridor_episode(max_steps: int = 120, **kwargs) -> SokobanEpisode:
    return SokobanEpisode(env_from_grid(CORRIDOR, max_steps=max_steps), CORRIDOR_UB, **kwargs)


def test_score_is_100_plus_five_times_best_minus_upper_bound():
    assert score_from(11.7, 11.7) == 100.0
    assert score_from(0.0, 11.7) == 41.5
    assert score_from(9.7, 11.7) == 90.0
    assert score_from(-0.3, 10.0) == 48.5


def test_idle_score_is_100_minus_five_upper_bounds():
    assert idle_score_from(11.7) == 41.5
    plugin = get_plugin("sokoban")
    spec = ScenarioSpec(env="sokoban", key="x", data={"upper_bound": {"reward": 12.6}})
    assert plugin.idle_score(spec) == 37.0
    assert plugin.idle_score(ScenarioSpec(env="sokoban", key="y", data={})) is None


def test_an_episode_without_actions_scores_the_idle_score():
    episode = corridor_episode()
    episode.reset()
    assert episode.best_reward == 0.0
    assert episode.score() == pytest.approx(100 - 5 * CORRIDOR_UB)
    assert episode.score() == 45.5


def test_best_reward_starts_at_zero_so_a_wasted_move_does_not_lower_it():
    episode = corridor_episode()
    episode.reset()
    result = episode.step("Left")  # into the wall: −0.1
    assert result.reward == -0.1
    assert result.info["cumulative"] == -0.1
    assert result.info["best"] == 0.0
    assert episode.score() == 45.5


def test_best_so_far_keeps_the_peak_after_a_box_is_pushed_on_then_off_its_target():
    # Two boxes: putting one on a target is worth +1 without ending the episode; pushing it further
    # costs −1, and B must keep the peak.
    grid = "########\n#@$. $.#\n########"
    episode = SokobanEpisode(env_from_grid(grid), upper_bound=11.5)
    episode.reset()
    first = episode.step("Right")
    assert (first.reward, first.info["cumulative"], first.info["best"]) == (0.9, 0.9, 0.9)
    assert first.info["boxes_on_target"] == 1 and not first.done
    second = episode.step("Right")
    assert second.reward == -1.1
    assert second.info["cumulative"] == pytest.approx(-0.2)
    assert second.info["best"] == 0.9
    assert second.info["boxes_on_target"] == 0
    assert episode.score() == pytest.approx(100 + 5 * (0.9 - 11.5))
    assert episode.score() == 47.0


def test_solving_the_level_optimally_scores_exactly_100():
    episode = corridor_episode()
    episode.reset()
    result = episode.step("Right")
    assert result.done and result.info["solved"]
    assert episode.best_reward == CORRIDOR_UB
    assert episode.score() == 100.0
    assert episode.score_details() == {
        "best_reward": 10.9, "cumulative_reward": 10.9, "upper_bound": 10.9, "solved": True, "steps": 1,
    }


def test_the_episode_ends_when_gym_sokoban_reaches_max_steps_and_refuses_more_steps():
    episode = corridor_episode(max_steps=3)
    episode.reset()
    assert not episode.step("Left").done
    assert not episode.step("Up").done
    last = episode.step("Down")
    assert last.done and not last.info["solved"]
    assert episode.cumulative_reward == pytest.approx(-0.3)
    assert episode.best_reward == 0.0
    with pytest.raises(EpisodeOver):
        episode.step("Right")


def test_stepping_after_the_level_is_solved_raises():
    episode = corridor_episode()
    episode.reset()
    episode.step("Right")
    with pytest.raises(EpisodeOver):
        episode.step("Left")


def test_step_info_reports_what_moved_and_whether_the_room_changed():
    grid = "#######\n#@ $ .#\n#######"
    episode = SokobanEpisode(env_from_grid(grid), upper_bound=10.7)
    episode.reset()
    bump = episode.step("Up")
    assert bump.info["moved_player"] is False and bump.info["moved_box"] is False
    assert bump.info["changed"] is False
    walk = episode.step("Right")
    assert walk.info["moved_player"] is True and walk.info["moved_box"] is False and walk.info["changed"]
    push = episode.step("Right")
    assert push.info["moved_player"] is True and push.info["moved_box"] is True and push.info["changed"]
    assert push.info["steps"] == 3


def test_unknown_actions_are_rejected():
    episode = corridor_episode()
    episode.reset()
    with pytest.raises(ValueError):
        episode.step("up")
    with pytest.raises(ValueError):
        episode.step(1)


def test_reset_restores_the_initial_room_and_the_bookkeeping():
    episode = corridor_episode()
    first = episode.reset()
    episode.step("Right")
    assert episode.done
    again = episode.reset()
    assert not episode.done and episode.steps == 0 and episode.best_reward == 0.0
    assert again.text == "" and again.image is not None
    assert again.image.tobytes() == first.image.tobytes()


def test_render_resizes_the_longest_side_to_the_resolution_both_up_and_down():
    episode = corridor_episode(resolution=640)
    assert episode.render_native().size == (6 * 16, 3 * 16)
    assert episode.render().size == (640, 320)
    assert corridor_episode(resolution=48).render().size == (48, 24)


def test_frames_can_be_skipped_for_offline_scoring():
    episode = corridor_episode(render_observations=False)
    episode.reset()
    result = episode.step("Right")
    assert result.observation.image is None and result.done


def test_episodes_never_step_the_environment_they_were_given():
    env = env_from_grid(CORRIDOR)
    episode = SokobanEpisode(env, CORRIDOR_UB)
    episode.reset()
    episode.step("Right")
    assert env.num_env_steps == 0
    assert SokobanEpisode(env, CORRIDOR_UB).score() == 45.5
