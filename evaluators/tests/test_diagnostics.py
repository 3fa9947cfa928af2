from typing import Any

import numpy as np
import pytest

from evaluators.agents.diagnostics import (
    RA_MAX_NOOP_DECISIONS,
    RA_MIN_PASS_ONLY,
    RA_MIN_TAIL_REPEATS,
    DiagnosticsTracker,
    longest_run,
    reply_is_repetitive,
    tail_repeats,
)
from evaluators.agents.parsing import parse_global_actions, parse_online_action
from evaluators.base import get_plugin

MOVES = ("Up", "Down", "Left", "Right")
PASSES = frozenset({"action_long_pass", "action_short_pass", "action_high_pass"})


def _observe(tracker: DiagnosticsTracker, reply: str, flow: str = "online") -> None:
    parsed = parse_online_action(reply, MOVES) if flow == "online" else parse_global_actions(reply, MOVES)
    tracker.observe_reply(reply, parsed.tokens, parsed.foreign_tokens, parsed.ok)


def test_longest_run_counts_identical_neighbours():
    assert longest_run([]) == 0
    assert longest_run(["Up"]) == 1
    assert longest_run(["Up", "Up", "Left", "Left", "Left", "Up"]) == 3


def test_tail_repeats_finds_the_repeated_final_ngram():
    assert tail_repeats("") == 0
    assert tail_repeats("move the box") == 1
    assert tail_repeats("so I go " + "left and up " * 5) == 5
    assert tail_repeats("a b a b a b c") == 1


def test_it_flags_a_reply_that_degenerates_into_a_repeated_phrase():
    reply = "### Analyze\n" + "I need to think. " * RA_MIN_TAIL_REPEATS
    assert reply_is_repetitive(reply, MOVES)
    assert not reply_is_repetitive("### Analyze\n" + "I need to think. " * (RA_MIN_TAIL_REPEATS - 1), MOVES)


def test_a_long_list_of_one_move_is_not_text_degeneration():
    plan = "### Analyze\nstraight on\n### Actions\n" + ", ".join(["Right"] * 30)
    assert not reply_is_repetitive(plan, MOVES)
    assert reply_is_repetitive(plan)  # without the vocabulary it would look like babble


def test_a_repeated_online_block_is_text_degeneration_even_though_it_names_an_action():
    assert reply_is_repetitive("# analyze\nhmm\n" + "# action\nUp\n" * RA_MIN_TAIL_REPEATS, MOVES)


def test_a_failed_reply_makes_the_attempt_ia_even_when_a_retry_then_succeeds():
    tracker = DiagnosticsTracker(vocabulary=frozenset(MOVES))
    _observe(tracker, "I would rather not move.")
    _observe(tracker, "# action\nUp")
    assert tracker.invalid_action and tracker.invalid_decisions == 0 and tracker.invalid_replies == 1


def test_a_missing_marker_and_a_wrong_name_count_the_same():
    without_marker, wrong_name = DiagnosticsTracker(), DiagnosticsTracker()
    _observe(without_marker, "I go Up")
    _observe(wrong_name, "# action\nJump")
    assert without_marker.as_dict() | {"reasons": []} == wrong_name.as_dict() | {"reasons": []}
    assert without_marker.invalid_action and wrong_name.invalid_action


def test_a_bare_action_without_the_marker_is_not_ia():
    tracker = DiagnosticsTracker()
    _observe(tracker, "Left")
    assert not tracker.invalid_action and tracker.parse_errors == 0


def test_foreign_tokens_make_an_invalid_action_even_when_the_global_reply_parsed():
    tracker = DiagnosticsTracker()
    _observe(tracker, "### Actions\nUp, Jump", flow="global")
    assert tracker.invalid_action and tracker.parse_errors == 0 and tracker.foreign_token_replies == 1


def test_a_clean_global_plan_is_not_ia_even_with_a_trailing_comma():
    tracker = DiagnosticsTracker()
    _observe(tracker, "### Analyze\nfine\n### Actions\nUp, Left,", flow="global")
    assert not tracker.invalid_action


def test_a_failed_decision_alone_is_recorded_but_ia_comes_from_the_replies():
    tracker = DiagnosticsTracker()
    tracker.observe_failed_decision()
    assert tracker.invalid_decisions == 1 and not tracker.invalid_action


def test_repeated_no_effect_actions_make_a_repeating_action():
    tracker = DiagnosticsTracker()
    for _ in range(RA_MAX_NOOP_DECISIONS - 1):
        tracker.observe_action("Up", changed_state=False)
    assert not tracker.repeating_action
    tracker.observe_action("Up", changed_state=False)
    assert tracker.repeating_action


def test_an_action_that_changes_the_state_resets_the_no_effect_streak():
    tracker = DiagnosticsTracker()
    for _ in range(RA_MAX_NOOP_DECISIONS - 1):
        tracker.observe_action("Up", changed_state=False)
    tracker.observe_action("Up", changed_state=True)
    tracker.observe_action("Up", changed_state=False)
    tracker.observe_action("Left", changed_state=False)
    assert tracker.longest_noop_streak == RA_MAX_NOOP_DECISIONS - 1 and not tracker.repeating_action


def test_many_identical_actions_that_keep_changing_the_state_are_not_repeating():
    tracker = DiagnosticsTracker(vocabulary=frozenset(MOVES))
    for _ in range(20):
        tracker.observe_action("Right", changed_state=True)
    assert not tracker.repeating_action


def test_a_football_trajectory_made_only_of_passes_is_repeating():
    tracker = DiagnosticsTracker(pass_actions=PASSES)
    for action in ["action_long_pass", "action_short_pass", "action_high_pass"][:RA_MIN_PASS_ONLY]:
        tracker.observe_action(action, changed_state=True)
    assert tracker.repeating_action and tracker.as_dict()["pass_only"]


def test_one_pass_alone_or_passes_with_any_other_action_are_not_pass_only():
    single = DiagnosticsTracker(pass_actions=PASSES)
    single.observe_action("action_short_pass", changed_state=True)
    mixed = DiagnosticsTracker(pass_actions=PASSES)
    for action in ("action_short_pass", "action_right", "action_long_pass"):
        mixed.observe_action(action, changed_state=True)
    assert not single.repeating_action and not mixed.repeating_action


def test_the_pass_only_rule_applies_to_football_alone():
    assert get_plugin("football").PASS_ACTIONS == PASSES
    assert get_plugin("sokoban").PASS_ACTIONS == frozenset()


def _state(ball: tuple[float, float, float], owner: tuple[int, int]) -> dict[str, object]:
    return {"ball": np.array(ball), "ball_owned_team": owner[0], "ball_owned_player": owner[1]}


@pytest.mark.parametrize("after, changed", [
    (_state((0.004, 0.003, 0.5), (0, 3)), False),  # 0.005 apart: no effect (height ignored)
    (_state((0.006, 0.0, 0.1), (0, 3)), True),
    (_state((0.0, 0.0, 0.1), (0, 4)), True),  # a team-mate now has the ball
    (_state((0.0, 0.0, 0.1), (-1, -1)), True),  # the ball is loose
])
def test_a_football_decision_has_no_effect_when_the_ball_barely_moves_and_keeps_its_owner(after, changed):
    from evaluators.football.env import FootballEpisode

    assert FootballEpisode._changed(_state((0.0, 0.0, 0.1), (0, 3)), after) is changed


@pytest.mark.parametrize("env", ["sokoban", "football"])
def test_the_metric_cards_state_every_ia_and_ra_rule(env):
    plugin: Any = get_plugin(env)
    card = plugin.metric_card
    rules = dict(card["diagnostics"])
    assert set(rules) == {"IA", "RA"}
    assert "retr" in rules["IA"]
    assert str(RA_MIN_TAIL_REPEATS) in rules["RA"] and str(RA_MAX_NOOP_DECISIONS) in rules["RA"]
    if env == "football":
        assert "0.005" in rules["RA"] and "possession" in rules["RA"] and "action_high_pass" in rules["RA"]
    else:
        assert "Global plan" in rules["RA"] and "wall" in rules["RA"]
