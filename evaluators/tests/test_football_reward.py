"""The Football dense reward, term by term, against observation sequences computed by hand.

Every expected value below is worked out in the comment beside it; all terms are ×20 (scaling).
"""
import math

import pytest

from evaluators.football.env import path_is_clear
from evaluators.football.reward import (DenseReward, StepTerms, opponents_behind, pass_clearance, shot_clearance,
                                        shot_distance)

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


def run(sequence):
    reward = DenseReward()
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


def test_no_stolen_term_while_a_shot_is_in_flight():
    reward, terms = run([
        (obs(0.8), RIGHT),
        (obs(0.8, right=((0.95, 0.3),)), SHOT),
        (obs(0.9, team=-1), IDLE),
        (obs(0.95, team=1, player=0, steps_left=200), IDLE),  # the keeper holds the shot
    ])
    assert terms[3].stolen == 0
    assert not reward.task_done


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


def test_a_pass_is_not_paid_when_the_same_player_gets_the_ball_back():
    _, terms = run([(obs(0.3, player=5), SHORT_PASS), (obs(0.3, player=5), SHORT_PASS),
                    (obs(0.35, team=-1), IDLE), (obs(0.36, player=5), IDLE)])
    assert all(t.pass_ == 0 for t in terms)


def test_shot_clearance_is_the_closest_approach_to_the_best_of_five_goal_lines():
    # An opponent straight behind the ball: every ball→goal segment moves away from him, so the
    # closest sampled point is the ball itself, 0.1 away.
    assert shot_clearance([0.5, 0.0], [[0.4, 0.0]]) == pytest.approx(0.1)
    # On the centre line, 0.25 ahead: the y = 0.044 segment passes him at 0.25·sin(atan(0.044/0.5))
    # at best; with 100 samples the nearest sampled point is a little further.
    exact = 0.25 * math.sin(math.atan2(0.044, 0.5))
    assert exact <= shot_clearance([0.5, 0.0], [[0.75, 0.0]]) < exact + 0.003


def test_shot_distance_is_one_past_x_point_seven_and_never_negative():
    assert shot_distance([0.71, 0]) == 1.0
    assert shot_distance([0.5, 0]) == 0.5
    assert shot_distance([-0.3, 0]) == 0.0


def test_a_shot_pays_its_clearance_times_distance_capped_at_two_thirds():
    far = ((-0.09, 0.0),)
    _, terms = run([
        (obs(0.01, right=far), RIGHT),
        (obs(0.01, right=far), SHOT),   # min(100 · 0.1 · 0.01, 2/3) · 20 = 2.0
        (obs(0.01, right=far), SHOT),   # once per possession
    ])
    assert terms[1].shot == pytest.approx(2.0)
    assert terms[1].shot_clearance == pytest.approx(0.1)
    assert terms[2].shot == 0
    _, capped = run([(obs(0.8, right=far), RIGHT), (obs(0.8, right=far), SHOT)])
    assert capped[1].shot == pytest.approx(2.0 / 3 * 20)  # 100 · 0.89 · 1 is far above the cap


def test_a_new_owner_may_shoot_again():
    far = ((-0.5, 0.0),)
    _, terms = run([(obs(0.01, right=far), RIGHT), (obs(0.01, right=far), SHOT),
                    (obs(0.02, player=4, right=far), SHOT)])
    assert terms[1].shot > 0 and terms[2].shot > 0


def test_the_episode_total_is_the_sum_of_every_term_of_every_step():
    right = ((0.5, 0.0), (0.2, 0.1))
    reward, terms = run([
        (obs(0.0, right=right), RIGHT), (obs(0.3, right=right), RIGHT), (obs(0.3, right=right), SHOT),
        (obs(0.4, team=1, player=2, right=right, steps_left=380), IDLE),
    ])
    assert reward.total == pytest.approx(sum(t.move + t.opponents + t.score + t.stolen + t.pass_ + t.shot
                                             for t in terms))
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
