from evaluators.agents.parsing import (ERR_NO_ACTIONS, ERR_NO_MARKER, ERR_NOT_AN_ACTION, parse_global_actions,
                                       parse_online_action)

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


def test_it_rejects_online_replies_without_the_marker():
    result = parse_online_action("I will go Up", MOVES)
    assert result.error == ERR_NO_MARKER and result.foreign_tokens == []


def test_it_rejects_an_empty_online_action():
    result = parse_online_action("# analyze\nwaiting\n# action\n", MOVES)
    assert result.error == ERR_NOT_AN_ACTION and result.foreign_tokens == []
