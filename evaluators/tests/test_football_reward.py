"""The Football dense reward, term by term, against observation sequences computed by hand.

Every expected value below is worked out in the comment beside it; all terms are ×20 (scaling).
"""
import math

import numpy as np
import pytest

from evaluators.football.env import path_is_clear
from evaluators.football.reward import (
    SHOT_FRACTIONS,
    SHOT_HELD_UNTIL_RECEIVED,
    DenseReward,
    StepTerms,
    length,
    opponents_behind,
    pass_clearance,
    shot_clearance,
    shot_distance,
)

IDLE, RIGHT, SHORT_PASS, SHOT = 0, 5, 11, 12


def obs(ball_x, ball_y=0.0, *, team=0, player=1, right=((0.9, 0.3),), score=(0, 0), steps_left=390):
    return {
        "ball": [ball_x, ball_y, 0.1],
        "right_team": [list(p) for p in right],
        "ball_owned_team": team,
        "ball_owned_player": player if team != -1 else -1,
        "score": list(score),
        "steps_left": steps_left,
    }


def run(sequence, **options):
    reward = DenseReward(**options)
    return reward, [reward.update(o, a) for o, a in sequence]


def test_the_first_step_only_sets_the_references_and_scores_nothing():
    reward, (first,) = run([(obs(0.4, right=((0.1, 0), (0.5, 0))), RIGHT)])
    assert first == StepTerms()
    assert reward.best_x == 0.4
    assert reward.passed == 1  # only the opponent at x = 0.1 is behind the ball
    assert reward.total == 0


def test_ball_progress_pays_only_beyond_the_best_x_and_only_in_possession():
    _, terms = run([
        (obs(0.1), RIGHT),
        (obs(0.3), RIGHT),            # 0.8 · (0.3 − 0.1) · 20 = 3.2
        (obs(0.25), RIGHT),           # behind the best x: 0
        (obs(0.6, team=-1), RIGHT),   # loose ball: nothing, best x stays 0.3
        (obs(0.35), RIGHT),           # 0.8 · (0.35 − 0.3) · 20 = 0.8
    ])
    assert [round(t.move, 9) for t in terms] == [0, 3.2, 0, 0, 0.8]


def test_opponents_passed_count_both_ways_in_elevenths():
    right = ((0.5, 0.0), (0.2, 0.1), (-0.1, -0.1))
    _, terms = run([
        (obs(0.0, right=right), RIGHT),   # 1 opponent behind
        (obs(0.3, right=right), RIGHT),   # 2 behind: (2 − 1) / 11 · 20
        (obs(0.1, right=right), IDLE),    # 1 behind: (1 − 2) / 11 · 20
    ])
    assert terms[1].opponents == pytest.approx(20 / 11)
    assert terms[2].opponents == pytest.approx(-20 / 11)


def test_a_goal_adds_two_at_every_step_the_score_shows_it():
    _, terms = run([(obs(0.9), SHOT), (obs(1.0, team=-1, score=(1, 0)), IDLE)])
    assert terms[1].score == 40.0  # 2.0 · 20


def test_a_stolen_ball_adds_the_elapsed_share_of_the_game_and_ends_the_task():
    reward, terms = run([(obs(0.0), RIGHT), (obs(0.0, team=1, player=3, steps_left=300), RIGHT)])
    # −1 · (300 / 400 − 1) · 20 = +5: the official sign makes losing the ball late pay more.
    assert terms[1].stolen == pytest.approx(5.0)
    assert reward.task_done


KEEPER_SAVE = [
    (obs(0.8), RIGHT),
    (obs(0.8, right=((0.95, 0.3),)), SHOT),                # shot: the flag is set, the shooter still holds it
    (obs(0.9, team=-1), IDLE),                             # the ball is loose: the flag is cleared
    (obs(0.95, team=1, player=0, steps_left=200), IDLE),   # the keeper holds the shot
]


def test_a_keeper_save_after_a_shot_counts_as_stolen():
    reward, terms = run(KEEPER_SAVE)
    assert terms[1].shot > 0
    assert terms[2].stolen == 0 and not reward.performed_shot  # cleared on the loose-ball step
    # −(1 · 200 / 400 − 1) · 20 = +10: the official order makes a saved shot a stolen ball.
    assert terms[3].stolen == pytest.approx(10.0)
    assert reward.task_done


def test_the_shot_held_until_received_variant_does_not_count_a_keeper_save_as_stolen():
    reward, terms = run(KEEPER_SAVE, variant=SHOT_HELD_UNTIL_RECEIVED)
    assert terms[2].stolen == 0 and reward.performed_shot is False  # cleared when the keeper took it
    assert terms[3].stolen == 0
    assert not reward.task_done


def test_a_shot_flag_survives_a_direct_change_of_possession_without_a_loose_ball():
    # The tackler takes the ball straight from the shooter's foot: no loose step, so the flag is
    # still set when the stolen test runs, and it is never cleared while someone holds the ball.
    reward, terms = run([(obs(0.8), RIGHT), (obs(0.8), SHOT), (obs(0.81, team=1, player=4, steps_left=300), IDLE)])
    assert terms[2].stolen == 0
    assert reward.performed_shot and not reward.task_done


def test_a_shooter_who_gets_his_own_rebound_may_shoot_again_because_the_loose_ball_ended_the_first_shot():
    far = ((-0.5, 0.0),)
    _, terms = run([(obs(0.01, right=far), RIGHT), (obs(0.01, right=far), SHOT), (obs(0.02, team=-1, right=far), IDLE),
                    (obs(0.03, right=far), SHOT)])
    assert terms[1].shot > 0 and terms[3].shot > 0
    _, held = run([(obs(0.01, right=far), RIGHT), (obs(0.01, right=far), SHOT), (obs(0.02, team=-1, right=far), IDLE),
                   (obs(0.03, right=far), SHOT)], variant=SHOT_HELD_UNTIL_RECEIVED)
    assert held[3].shot == 0  # the variant keeps the shot in flight until someone *else* holds the ball


def test_an_unknown_reward_variant_is_refused():
    with pytest.raises(ValueError):
        DenseReward(variant="lenient")


def test_pass_clearance_weighs_opponents_between_ball_and_goal_eleven_times():
    # Straight ahead: d = 0.3, cos θ = 1 → 0.3 / 11. Behind: cos θ = −1 → 0.3 / 1. Square: cos θ = 0 → 0.2.
    assert pass_clearance([0.5, 0.0], [[0.8, 0.0]]) == pytest.approx(0.3 / 11)
    assert pass_clearance([0.5, 0.0], [[0.2, 0.0]]) == pytest.approx(0.3)
    assert pass_clearance([0.0, 0.0], [[0.0, 0.2]]) == pytest.approx(0.2)
    assert pass_clearance([0.5, 0.0], [[0.8, 0.0], [0.2, 0.0]]) == pytest.approx(0.3 / 11)


def test_a_received_pass_pays_its_clearance_and_each_later_pass_is_worth_three_quarters():
    right = ((0.8, 0.0),)
    _, terms = run([
        (obs(0.3, player=5, right=right), RIGHT),
        (obs(0.3, player=5, right=right), SHORT_PASS),   # the pass is asked for
        (obs(0.4, team=-1, right=right), IDLE),          # in the air
        (obs(0.5, player=7, right=right), IDLE),         # received: 20 · (0.3 / 11) · 1 · 20
        (obs(0.5, player=7, right=right), SHORT_PASS),
        (obs(0.5, player=5, right=right), IDLE),         # received back: × 0.75
    ])
    first = 20 * (0.3 / 11) * 20
    assert terms[3].pass_ == pytest.approx(first)
    assert terms[3].pass_clearance == pytest.approx(0.3 / 11)
    assert terms[5].pass_ == pytest.approx(first * 0.75)
    assert sum(1 for t in terms if t.pass_) == 2


def test_a_pass_is_not_paid_while_no_holder_was_seen_after_the_first_step():
    # The first step records no holder: the pass asked for on a loose ball at step 2 has no passer.
    _, terms = run([(obs(0.3, player=5), RIGHT), (obs(0.3, team=-1), SHORT_PASS), (obs(0.4, player=7), IDLE)])
    assert terms[2].pass_ == 0


def test_an_opponent_taking_the_ball_straight_from_a_shooter_completes_a_pass_because_teams_are_ignored():
    right = ((0.8, 0.0),)
    reward, terms = run([
        (obs(0.3, player=3, right=right), RIGHT),
        (obs(0.3, player=3, right=right), SHORT_PASS),              # the pass flag is armed
        (obs(0.3, player=3, right=right), SHOT),                    # shot: no stolen test while it flies
        (obs(0.3, team=1, player=0, right=right, steps_left=350), IDLE),  # player 0 ≠ player 3: "received"
    ])
    assert terms[3].stolen == 0
    assert terms[3].pass_ == pytest.approx(20 * (0.5 / 11) * 20)   # opponent 0.5 ahead of the ball
    assert not reward.task_done


def test_a_pass_is_not_paid_when_the_same_player_gets_the_ball_back():
    _, terms = run([(obs(0.3, player=5), SHORT_PASS), (obs(0.3, player=5), SHORT_PASS),
                    (obs(0.35, team=-1), IDLE), (obs(0.36, player=5), IDLE)])
    assert all(t.pass_ == 0 for t in terms)


def test_shot_clearance_is_the_closest_approach_to_the_best_of_five_goal_lines():
    # An opponent straight behind the ball: every ball→goal segment moves away from him, so the
    # closest sample is the first one, 1/100 of the way to the goal point; the best goal point is
    # y = ±0.044: √(0.105² + 0.00044²).
    assert shot_clearance([0.5, 0.0], [[0.4, 0.0]]) == pytest.approx(math.hypot(0.105, 0.00044), rel=1e-12)
    # On the centre line, 0.25 ahead: the y = 0.044 segment passes him at 0.25·sin(atan(0.044/0.5))
    # at best; with 100 samples the nearest sampled point is a little further.
    exact = 0.25 * math.sin(math.atan2(0.044, 0.5))
    assert exact <= shot_clearance([0.5, 0.0], [[0.75, 0.0]]) < exact + 0.003


def test_a_shot_from_the_balls_own_position_is_not_sampled():
    # An opponent standing on the ball: with the ball sampled the clearance would be 0. The first
    # sample is 1/100 of the way: 0.01 · |goal point − ball|, largest for y = ±0.044.
    assert shot_clearance([0.5, 0.0], [[0.5, 0.0]]) == pytest.approx(0.01 * math.hypot(0.5, 0.044), rel=1e-12)


def test_the_shot_samples_are_k_over_100_as_the_official_loop_computes_them_not_a_linspace():
    assert SHOT_FRACTIONS.tolist() == [k / 100.0 for k in range(1, 101)]
    assert SHOT_FRACTIONS[0] == 0.01 and SHOT_FRACTIONS[-1] == 1.0
    # np.linspace(0.01, 1, 100) rounds 25 of the hundred fractions differently in the last bit.
    assert int(np.count_nonzero(SHOT_FRACTIONS != np.linspace(0.01, 1.0, 100))) == 25


def test_the_distance_helper_is_bit_identical_to_numpys_norm():
    rng = np.random.default_rng(7)
    vectors = rng.uniform(-2, 2, size=(2000, 2))
    assert all(length(v) == np.linalg.norm(v) for v in vectors)


def test_shot_distance_is_one_near_the_goal_and_never_negative():
    assert shot_distance([0.71, 0]) == 1.0
    assert shot_distance([0.5, 0]) == 0.5
    assert shot_distance([-0.3, 0]) == 0.0
    # Computed through the gap to the goal line: 1 − (1 − 0.1) is 0.09999999999999998, and at
    # x = 0.7 the gap rounds to 0.30000000000000004, so the value is 0.7, not 1.
    assert shot_distance([0.1, 0]) == 1.0 - 0.9 != 0.1
    assert shot_distance([0.7, 0]) == 0.7


def test_a_shot_pays_its_clearance_times_distance_capped_at_two_thirds():
    far = ((-0.09, 0.0),)
    # The first sample, 1/100 of the way to (1, ±0.044), is the closest: √(0.1099² + 0.00044²);
    # shot_distance = 1 − (1 − 0.01). Shot = min(100 · clearance · distance, 2/3) · 20 ≈ 2.198.
    clearance = math.hypot(0.1099, 0.00044)
    _, terms = run([
        (obs(0.01, right=far), RIGHT),
        (obs(0.01, right=far), SHOT),
        (obs(0.01, right=far), SHOT),   # once per possession
    ])
    assert terms[1].shot_clearance == pytest.approx(clearance, rel=1e-12)
    assert terms[1].shot == pytest.approx(100 * clearance * (1 - 0.99) * 20, rel=1e-12)
    assert terms[2].shot == 0
    _, capped = run([(obs(0.8, right=far), RIGHT), (obs(0.8, right=far), SHOT)])
    assert capped[1].shot == pytest.approx(2.0 / 3 * 20)  # 100 · 0.89 · 1 is far above the cap


def test_a_teammate_handed_the_ball_straight_after_a_shot_may_not_shoot_until_the_ball_was_loose():
    far = ((-0.5, 0.0),)
    _, terms = run([(obs(0.01, right=far), RIGHT), (obs(0.01, right=far), SHOT),
                    (obs(0.02, player=4, right=far), SHOT), (obs(0.03, team=-1, right=far), IDLE),
                    (obs(0.04, player=4, right=far), SHOT)])
    assert terms[1].shot > 0 and terms[2].shot == 0 and terms[4].shot > 0


def test_the_episode_total_is_the_sum_of_every_term_of_every_step():
    right = ((0.5, 0.0), (0.2, 0.1))
    reward, terms = run([
        (obs(0.0, right=right), RIGHT), (obs(0.3, right=right), RIGHT), (obs(0.3, right=right), SHOT),
        (obs(0.4, team=1, player=2, right=right, steps_left=380), IDLE),
    ])
    assert reward.total == pytest.approx(sum(t.move + t.opponents + t.score + t.stolen + t.pass_ + t.shot
                                             for t in terms))
    assert reward.total == sum(t.reward for t in terms)  # bit for bit: a running sum, as officially
    assert set(terms[1].as_dict()) >= {"move", "opponents", "score", "stolen", "pass", "shot"}


def test_opponents_behind_counts_strictly_smaller_x():
    assert opponents_behind([0.2, 0.0], [[0.2, 0.0], [0.1, 0.3], [0.5, 0.0]]) == 1


def _move_obs(position, direction, opponents=(), opponent_directions=()):
    return {
        "ball_owned_team": 0, "ball_owned_player": 1,
        "left_team": [[-1.0, 0.0], list(position)], "left_team_direction": [[0, 0], list(direction)],
        "right_team": [list(p) for p in opponents] or [[0.99, 0.4]],
        "right_team_direction": [list(d) for d in opponent_directions] or [[0, 0]],
        "ball": [position[0], position[1], 0.1], "ball_direction": [0, 0, 0],
    }


def test_a_move_continues_only_while_the_pitch_and_the_next_steps_are_clear():
    assert path_is_clear(_move_obs((0.0, 0.0), (0.01, 0.0)))
    # 3 steps ahead: 0.9 + 3 · 0.05 = 1.05 is off the pitch.
    assert not path_is_clear(_move_obs((0.9, 0.0), (0.05, 0.0)))
    assert not path_is_clear(_move_obs((0.0, 0.4), (0.0, 0.01)))
    # Head to head: at i = 2 we are at 0.02 and he is at 0.015, 0.005 apart (< 0.01).
    assert not path_is_clear(_move_obs((0.0, 0.0), (0.01, 0.0), [(0.035, 0.0)], [(-0.01, 0.0)]))
    # The same opponent running away stays more than 0.01 ahead.
    assert path_is_clear(_move_obs((0.0, 0.0), (0.01, 0.0), [(0.035, 0.0)], [(0.01, 0.0)]))


def test_a_move_check_looks_the_holder_up_in_our_team_even_when_an_opponent_holds_the_ball():
    # Opponent 1 holds the ball at the pitch edge; officially our player 1 (in midfield) is used.
    observation = _move_obs((0.0, 0.0), (0.01, 0.0), [(0.99, 0.4), (0.95, 0.41)], [(0, 0), (0.0, 0.05)])
    observation["ball_owned_team"] = 1
    assert path_is_clear(observation)


def test_the_shot_held_setting_selects_the_variant_and_makes_the_entry_a_labelled_variant():
    from evaluators.base import ScenarioSpec
    from evaluators.football.env import FootballEpisode
    from evaluators.football.options import SHOT_HELD_SETTING
    from evaluators.runner import effective_settings

    spec = ScenarioSpec(env="football", key="R1_P_1", data={"scenario": {}})
    official = effective_settings("football", "online")
    assert official.variant_names() == []
    assert FootballEpisode.from_scenario(spec, official).reward_variant == "official"
    variant = effective_settings("football", "online", {SHOT_HELD_SETTING: True})
    assert variant.variant_names() == [SHOT_HELD_SETTING]
    assert FootballEpisode.from_scenario(spec, variant).reward_variant == SHOT_HELD_UNTIL_RECEIVED
