"""Small Go's points and area scoring, against hand-counted boards."""
from __future__ import annotations

import pytest

from ..board import BLACK, WHITE, Position, PositionError, area_score, point_at, point_name

# Black: 3 stones and the corner A5 they close off (4); White: 3 stones and the corner E1 (4); the
# large empty region touches both colours and counts for neither.
CORNERS = [".X...", "XX...", ".....", "...OO", "...O."]


def test_each_colour_holds_its_stones_and_the_empty_points_only_it_surrounds() -> None:
    position = Position.from_rows(CORNERS)
    assert (position.area(BLACK), position.area(WHITE)) == (4, 4)
    assert area_score(position) == 16.0  # 100 · 4 / 25


def test_an_empty_board_is_nobodys_and_a_lone_stone_holds_the_whole_board() -> None:
    assert area_score(Position.from_rows(["...", "...", "..."])) == 0.0
    assert area_score(Position.from_rows(["...", ".X.", "..."])) == 100.0


@pytest.mark.parametrize(("point", "size", "name"), [((0, 0), 5, "A5"), ((4, 4), 5, "E1"), ((0, 8), 9, "J9")])
def test_points_are_named_as_gtp_names_them_without_the_letter_i(point: tuple[int, int], size: int,
                                                                   name: str) -> None:
    assert point_name(point, size) == name and point_at(name, size) == point


@pytest.mark.parametrize("name", ["I3", "F1", "A6", "pass", "A0", "3C"])
def test_a_name_off_a_five_point_board_is_no_point_on_it(name: str) -> None:
    assert point_at(name, 5) is None


@pytest.mark.parametrize("rows", [["..", ".."], ["...", "...", ".."], ["...", ".Y.", "..."], ["XO.", "O..", "..."]])
def test_boards_that_are_not_square_small_legal_positions_are_refused(rows: list[str]) -> None:
    with pytest.raises(PositionError):
        Position.from_rows(rows)
