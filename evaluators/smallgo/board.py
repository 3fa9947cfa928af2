"""Small Go positions: points named as GTP names them, and the area each colour holds.

A position is given as rows, top row first: ``X`` a black stone, ``O`` a white one, ``.`` an empty
point. Columns are lettered from the left without ``I`` (A–H, J), rows numbered from the bottom, so
on a 5 × 5 board the top-left point is ``A5``. A colour's area counts its stones and every empty
point from which only its stones can be reached (area scoring, every stone on the board alive).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

COLUMNS = "ABCDEFGHJ"
MIN_SIZE, MAX_SIZE = 3, len(COLUMNS)
PASS = "pass"
BLACK, WHITE = "black", "white"
#: Every point of the largest board, then a pass: what a reply may name (a point off a smaller board
#: is an illegal move there).
ACTIONS = (*(f"{column}{row}" for column in COLUMNS for row in range(1, MAX_SIZE + 1)), PASS)

Point = tuple[int, int]


class PositionError(ValueError):
    """Rows that are not a square board of X, O and . whose every group has a liberty."""


def point_name(point: Point, size: int) -> str:
    row, column = point
    return f"{COLUMNS[column]}{size - row}"


def point_at(name: str, size: int) -> Point | None:
    """The (row, column) of a point's name on a ``size`` board; None when it is not on it."""
    if len(name) < 2 or name[0].upper() not in COLUMNS[:size] or not name[1:].isdigit():
        return None
    number = int(name[1:])
    return (size - number, COLUMNS.index(name[0].upper())) if 1 <= number <= size else None


@dataclass(frozen=True)
class Position:
    size: int
    black: frozenset[Point] = frozenset()
    white: frozenset[Point] = frozenset()

    @classmethod
    def from_rows(cls, rows: Sequence[str]) -> Position:
        size = len(rows)
        if not MIN_SIZE <= size <= MAX_SIZE or any(len(row) != size for row in rows):
            raise PositionError(f"a board is square, {MIN_SIZE} to {MAX_SIZE} points a side")
        if set("".join(rows)) - set("XO."):
            raise PositionError("a board holds only X (black), O (white) and . (empty)")
        cells = [((r, c), ch) for r, row in enumerate(rows) for c, ch in enumerate(row)]
        position = cls(size, frozenset(p for p, ch in cells if ch == "X"), frozenset(p for p, ch in cells if ch == "O"))
        if position.captured_groups():
            raise PositionError("a group without a liberty would already have been captured")
        return position

    @classmethod
    def from_names(cls, size: int, black: Iterable[str], white: Iterable[str]) -> Position:
        def points(names: Iterable[str]) -> frozenset[Point]:
            return frozenset(p for p in (point_at(name, size) for name in names) if p is not None)

        return cls(size, points(black), points(white))

    def to_rows(self) -> list[str]:
        return ["".join("X" if (r, c) in self.black else "O" if (r, c) in self.white else "."
                        for c in range(self.size)) for r in range(self.size)]

    def stones(self, colour: str) -> frozenset[Point]:
        return self.black if colour == BLACK else self.white

    def neighbours(self, point: Point) -> Iterator[Point]:
        row, column = point
        for r, c in ((row - 1, column), (row + 1, column), (row, column - 1), (row, column + 1)):
            if 0 <= r < self.size and 0 <= c < self.size:
                yield (r, c)

    def _region(self, start: Point, members: frozenset[Point] | set[Point]) -> set[Point]:
        region, frontier = {start}, [start]
        while frontier:
            for ahead in self.neighbours(frontier.pop()):
                if ahead in members and ahead not in region:
                    region.add(ahead)
                    frontier.append(ahead)
        return region

    def captured_groups(self) -> list[set[Point]]:
        """Groups of stones with no empty neighbour."""
        occupied = self.black | self.white
        found: list[set[Point]] = []
        for stones in (self.black, self.white):
            seen: set[Point] = set()
            for stone in stones:
                if stone in seen:
                    continue
                group = self._region(stone, stones)
                seen |= group
                if not any(n not in occupied for p in group for n in self.neighbours(p)):
                    found.append(group)
        return found

    def area(self, colour: str) -> int:
        own, other = self.stones(colour), self.stones(WHITE if colour == BLACK else BLACK)
        empty = {(r, c) for r in range(self.size) for c in range(self.size)} - own - other
        total, seen = len(own), set()
        for point in sorted(empty):
            if point in seen:
                continue
            region = self._region(point, empty)
            seen |= region
            borders = {n for p in region for n in self.neighbours(p)} - region
            if borders and borders <= own:
                total += len(region)
        return total


def area_score(position: Position) -> float:
    """100 · Black's area / the board's points."""
    return round(100.0 * position.area(BLACK) / position.size ** 2, 6)
