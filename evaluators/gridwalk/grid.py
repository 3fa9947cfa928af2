"""GridWalk levels: walls, a start, a goal, shortest distances and the score.

A level is written as rows of characters: ``#`` a wall, ``.`` floor, ``@`` the walker's start and
``G`` the goal. Outside the rows counts as wall. Distances are breadth-first shortest paths around
the walls, so every number on the metric card can be checked by counting squares.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

Cell = tuple[int, int]

#: The move names a model may use, with the (row, column) change each makes.
MOVES: dict[str, Cell] = {"North": (-1, 0), "South": (1, 0), "West": (0, -1), "East": (0, 1)}
WALL, FLOOR, START, GOAL = "#", ".", "@", "G"
DEFAULT_MAX_STEPS = 60


class LevelError(ValueError):
    """Rows that do not describe a playable level."""


@dataclass(frozen=True)
class Level:
    rows: int
    cols: int
    walls: frozenset[Cell]
    start: Cell
    goal: Cell
    max_steps: int = DEFAULT_MAX_STEPS

    @classmethod
    def from_rows(cls, lines: Sequence[str], *, max_steps: int = DEFAULT_MAX_STEPS) -> Level:
        if not lines or not all(isinstance(line, str) for line in lines):
            raise LevelError("a level is a non-empty list of strings")
        width = len(lines[0])
        if width == 0 or any(len(line) != width for line in lines):
            raise LevelError("every row of a level must have the same, non-zero length")
        walls: set[Cell] = set()
        starts: list[Cell] = []
        goals: list[Cell] = []
        for r, line in enumerate(lines):
            for c, char in enumerate(line):
                if char == WALL:
                    walls.add((r, c))
                elif char == START:
                    starts.append((r, c))
                elif char == GOAL:
                    goals.append((r, c))
                elif char != FLOOR:
                    raise LevelError(f"unknown character {char!r} at row {r}, column {c}")
        if len(starts) != 1 or len(goals) != 1:
            raise LevelError(f"a level needs exactly one {START!r} and one {GOAL!r}")
        if max_steps < 1:
            raise LevelError("max_steps must be at least 1")
        level = cls(len(lines), width, frozenset(walls), starts[0], goals[0], int(max_steps))
        if level.distance(level.start) is None:
            raise LevelError("the goal cannot be reached from the start")
        return level

    def to_rows(self, walker: Cell | None = None) -> list[str]:
        """The level as rows, with the walker at ``walker`` (its start by default)."""
        at = self.start if walker is None else walker
        return ["".join(
            START if (r, c) == at else GOAL if (r, c) == self.goal else WALL if (r, c) in self.walls else FLOOR
            for c in range(self.cols)) for r in range(self.rows)]

    def is_open(self, cell: Cell) -> bool:
        r, c = cell
        return 0 <= r < self.rows and 0 <= c < self.cols and cell not in self.walls

    def moved(self, cell: Cell, move: str) -> Cell:
        """Where ``move`` takes a walker on ``cell``: a wall or the edge leaves it in place."""
        dr, dc = MOVES[move]
        ahead = (cell[0] + dr, cell[1] + dc)
        return ahead if self.is_open(ahead) else cell

    def distance(self, cell: Cell) -> int | None:
        """Shortest number of moves from ``cell`` to the goal; None when it cannot be reached."""
        return _distances(self).get(cell)

    def route(self, cell: Cell) -> list[str]:
        """One shortest list of moves from ``cell`` to the goal (empty there or when unreachable)."""
        distances = _distances(self)
        if cell not in distances:
            return []
        moves: list[str] = []
        while cell != self.goal:
            # Moves are tried in MOVES order, so the route is the same on every run.
            for move in MOVES:
                ahead = self.moved(cell, move)
                if distances.get(ahead, -1) == distances[cell] - 1:
                    moves.append(move)
                    cell = ahead
                    break
        return moves


def _distances(level: Level) -> dict[Cell, int]:
    # Levels are tiny (a few dozen squares): one breadth-first search from the goal per question
    # is cheaper to reason about than a cache on a frozen dataclass.
    found = {level.goal: 0}
    queue = deque([level.goal])
    while queue:
        cell = queue.popleft()
        for dr, dc in MOVES.values():
            ahead = (cell[0] + dr, cell[1] + dc)
            if ahead not in found and level.is_open(ahead):
                found[ahead] = found[cell] + 1
                queue.append(ahead)
    return found


def score_from(remaining: int, initial: int) -> float:
    """The GridWalk score 100 · max(0, 1 − d_T / d_0); 100 exactly when the goal is reached."""
    if initial <= 0:
        raise ValueError("the initial distance must be positive")
    return round(100.0 * max(0.0, 1.0 - remaining / initial), 6)
