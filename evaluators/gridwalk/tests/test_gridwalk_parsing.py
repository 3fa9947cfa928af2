"""GridWalk's reply parsers."""
from __future__ import annotations

import pytest

from evaluators.gridwalk.parsing import ERR_NO_MOVES, ERR_NOT_A_MOVE, format_move, format_route, parse_move, parse_route
from evaluators.gridwalk.plugin import GridWalkPlugin

MOVES = GridWalkPlugin.ACTIONS


def test_a_global_reply_is_read_after_its_marker() -> None:
    parsed = parse_route("Thinking: go round, East first.\nMoves: North, East, East", MOVES)
    assert parsed.ok and parsed.actions == ["North", "East", "East"] and parsed.foreign_tokens == []


def test_a_global_reply_without_the_marker_is_read_whole() -> None:
    assert parse_route("South, West", MOVES).actions == ["South", "West"]


def test_global_pieces_that_are_not_move_names_are_dropped_and_reported() -> None:
    parsed = parse_route("Moves: North, up, East., West", MOVES)
    assert parsed.actions == ["North", "West"]
    assert parsed.foreign_tokens == ["up", "East."]


def test_a_global_reply_with_no_move_is_an_error() -> None:
    parsed = parse_route("Moves:", MOVES)
    assert not parsed.ok and parsed.error == ERR_NO_MOVES


@pytest.mark.parametrize(("reply", "move"), [
    ("Thinking: the goal is right.\nMove: East", "East"),
    ("Move:  North  \nbecause it is closer", "North"),
    ("West", "West"),
])
def test_an_online_reply_is_the_rest_of_the_line_after_its_marker(reply: str, move: str) -> None:
    assert parse_move(reply, MOVES).actions == [move]


@pytest.mark.parametrize("reply", ["Move: east", "Move: East.", "Move: North, East", "Move:", "I would go East"])
def test_an_online_reply_must_name_exactly_one_move(reply: str) -> None:
    parsed = parse_move(reply, MOVES)
    assert not parsed.ok and parsed.error == ERR_NOT_A_MOVE


def test_formatted_replies_read_back_as_their_moves() -> None:
    assert parse_route(format_route(["South", "East"]), MOVES).actions == ["South", "East"]
    assert parse_move(format_move("West"), MOVES).actions == ["West"]
