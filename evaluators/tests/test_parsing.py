from typing import Any

import pytest

from evaluators.agents.parsing import ERR_NO_ACTIONS, ERR_NOT_AN_ACTION, parse_global_actions, parse_online_action
from evaluators.base import get_plugin

MOVES = ("Up", "Down", "Left", "Right")


def test_it_takes_the_comma_separated_actions_after_the_global_marker():
    reply = "### Analyze\nThe box is left of me, Up is wall.\n### Actions\nLeft, Left, Up, Right"
    result = parse_global_actions(reply, MOVES)
    assert result.actions == ["Left", "Left", "Up", "Right"]
    assert result.ok and result.foreign_tokens == []


def test_it_reads_the_whole_reply_when_the_global_marker_is_missing():
    result = parse_global_actions("Up, Down", MOVES)
    assert result.actions == ["Up", "Down"]


def test_it_drops_tokens_that_are_not_exact_action_names_like_the_official_parser():
    result = parse_global_actions("### Actions\nup, Left., Right, Jump, Down", MOVES)
    assert result.actions == ["Right", "Down"]
    assert result.foreign_tokens == ["up", "Left.", "Jump"]


def test_it_treats_a_newline_separated_list_as_one_invalid_token():
    result = parse_global_actions("### Actions\nUp\nDown", MOVES)
    assert result.actions == []
    assert result.error == ERR_NO_ACTIONS
    assert result.foreign_tokens == ["Up\nDown"]


def test_it_reports_a_parse_error_for_an_empty_action_list():
    result = parse_global_actions("### Analyze\nnothing\n### Actions\n", MOVES)
    assert not result.ok and result.error == ERR_NO_ACTIONS and result.foreign_tokens == []


def test_it_uses_the_text_after_the_first_global_marker():
    result = parse_global_actions("### Actions Up ### Actions Down", MOVES)
    assert result.actions == []  # 'Up ### Actions Down' is one token, as in the official split


def test_it_accepts_exactly_one_online_action_after_the_marker():
    result = parse_online_action("# analyze\nbox above\n# action\n Up \n", MOVES)
    assert result.actions == ["Up"] and result.ok


def test_it_rejects_online_replies_with_anything_else_after_the_action():
    result = parse_online_action("# analyze\n...\n# action\nUp, then Left", MOVES)
    assert result.error == ERR_NOT_AN_ACTION and result.foreign_tokens == ["Up, then Left"]


def test_it_is_case_sensitive_online():
    assert parse_online_action("# action\nup", MOVES).error == ERR_NOT_AN_ACTION


def test_an_online_reply_without_marker_is_parsed_whole():
    assert parse_online_action("Up", MOVES).actions == ["Up"]
    assert parse_online_action("\n  Left \n", MOVES).actions == ["Left"]


def test_an_online_reply_without_marker_that_is_not_one_action_is_refused_like_a_wrong_name():
    result = parse_online_action("I will go Up", MOVES)
    assert result.error == ERR_NOT_AN_ACTION and result.foreign_tokens == ["I will go Up"]
    assert parse_online_action("# action\nJump", MOVES).error == result.error


def test_text_after_a_second_online_marker_is_ignored():
    result = parse_online_action("# analyze\nleft is wall\n# action\nUp\n# action\nLeft, Down", MOVES)
    assert result.actions == ["Up"] and result.ok


def test_only_the_segment_before_the_second_marker_is_read():
    # The official split("# action")[1]: an empty first segment is an empty action, whatever follows.
    result = parse_online_action("# action\n# action\nUp", MOVES)
    assert result.error == ERR_NOT_AN_ACTION and result.foreign_tokens == []


def test_a_heading_that_starts_with_the_marker_splits_the_reply_too():
    # '# actions' contains '# action': the official parser then reads 's\nUp', which is no action.
    assert parse_online_action("# actions\nUp", MOVES).error == ERR_NOT_AN_ACTION


def test_it_rejects_an_empty_online_action():
    result = parse_online_action("# analyze\nwaiting\n# action\n", MOVES)
    assert result.error == ERR_NOT_AN_ACTION and result.foreign_tokens == []


FOOTBALL_NAMES = ("action_left", "action_top_left", "action_top", "action_top_right", "action_right",
                  "action_bottom_right", "action_bottom", "action_bottom_left", "action_long_pass", "action_high_pass",
                  "action_short_pass", "action_shot", "action_sprint", "action_release_sprint", "action_dribble",
                  "action_release_dribble")


def test_football_accepts_exactly_the_sixteen_official_action_names():
    plugin: Any = get_plugin("football")
    assert tuple(plugin.ACTIONS) == FOOTBALL_NAMES
    for name in FOOTBALL_NAMES:
        assert plugin.parse("online", f"# analyze\nopen space\n# action\n{name}\n").actions == [name]
        assert plugin.parse("online", name).actions == [name]


@pytest.mark.parametrize("reply", ["# action\nleft", "# action\nshot", "right", "# action\naction_idle",
                                   "# action\naction_sliding", "# action\naction_builtin_ai",
                                   "# action\naction_release_direction", "# action\nAction_left",
                                   "# action\naction_left."])
def test_football_refuses_bare_names_and_the_four_actions_the_official_parser_leaves_out(reply):
    assert not get_plugin("football").parse("online", reply).ok


def test_sokoban_online_and_football_share_the_segment_rule():
    football, sokoban = get_plugin("football"), get_plugin("sokoban")
    assert football.parse("online", "# action\naction_shot\n# action\naction_left").actions == ["action_shot"]
    assert sokoban.parse("online", "# action\nUp\n# action\nDown").actions == ["Up"]
