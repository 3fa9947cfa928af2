"""How the baseline agents play Sokoban: idle never moves, random moves at random, the oracle reads
the board from the last image of the request (:func:`evaluators.sokoban.vision.read_grid`) and plays
the optimal solver's solution.

Like every baseline, they read only what a model reads: the request's texts and images.
"""
from __future__ import annotations

import dataclasses
import hashlib
import logging
import random
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from PIL import Image

from evaluators.base import BaselineOptions
from evaluators.baselines.agents import EnvironmentProfile, Plan, play_actions
from evaluators.sokoban.actions import ACTIONS

if TYPE_CHECKING:  # pragma: no cover
    from evaluators.sokoban.levels import Level

logger = logging.getLogger(__name__)

PROFILE = EnvironmentProfile("sokoban", ACTIONS, lambda text: "Sokoban" in text)

_STEPS = {"Up": (-1, 0), "Down": (1, 0), "Left": (0, -1), "Right": (0, 1)}


def baseline_reply(agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random,
                   options: BaselineOptions) -> str | None:
    """The reply of baseline ``agent`` to a Sokoban request; None for any other request."""
    return play_actions(PROFILE, agent, messages, rng, options, _default_planner())


_planner: SokobanPlanner | None = None
_planner_lock = threading.Lock()


def _default_planner() -> SokobanPlanner:
    # One planner per process: its cache of solved positions serves every oracle agent.
    global _planner
    with _planner_lock:
        if _planner is None:
            _planner = SokobanPlanner()
        return _planner


class SokobanPlanner:
    """Sokoban through :func:`read_grid` and :func:`solve_grid`, with solutions cached by grid.

    ``reader`` replaces :func:`read_grid` (the board must still come from the image alone).

    Every grid along a solution is cached with the rest of the solution, so the Online flow,
    which sends a new frame for each move, solves a level once rather than once per move.
    """

    def __init__(
        self,
        *,
        time_budget: float | None = 30.0,
        max_states: int | None = None,
        cache_size: int = 4096,
        reader: Callable[[Image.Image], str] | None = None,
    ) -> None:
        self._reader = reader
        self.time_budget = time_budget
        self.max_states = max_states
        self.cache_size = cache_size
        self._cache: OrderedDict[str, Plan] = OrderedDict()
        #: Boards read from frames, by the frame's pixels: the same board drawn again (every attempt of
        #: a level starts from the same frame) is not read again; reading costs tens of milliseconds.
        self._readings: OrderedDict[bytes, str] = OrderedDict()
        self._lock = threading.Lock()

    def plan(self, image: Image.Image) -> Plan | None:
        from evaluators.sokoban.levels import format_grid, parse_grid

        try:
            level = parse_grid(self._read(image))
        except Exception:  # noqa: BLE001 - any failure to read is "the image is not a board"
            logger.info("the oracle could not read a Sokoban board", exc_info=True)
            return None
        # Keyed by the canonical text so grids read from frames and grids stepped along a
        # solution agree.
        grid = format_grid(level)
        cached = self._cached(grid)
        if cached is not None:
            return cached
        plan = self._solve(level, grid)
        entries = [(grid, plan)]
        if plan.solves:
            entries.extend(_positions_along(level, plan))
        self._remember(entries)
        return plan

    def _read(self, image: Image.Image) -> str:
        if self._reader is not None:
            return self._reader(image)
        from evaluators.sokoban.vision import read_grid

        key = hashlib.blake2b(f"{image.mode} {image.size}".encode() + image.tobytes(), digest_size=20).digest()
        with self._lock:
            known = self._readings.get(key)
            if known is not None:
                self._readings.move_to_end(key)
                return known
        grid = read_grid(image)
        with self._lock:
            self._readings[key] = grid
            while len(self._readings) > self.cache_size:
                self._readings.popitem(last=False)
        return grid

    def _solve(self, level: Level, grid: str) -> Plan:
        from evaluators.sokoban.solver import SolverBudgetExceeded, Unsolvable, solve_grid

        if level.is_solved():
            # Checked here because the solver, modelling gym-sokoban, still plans one step to
            # collect the completion reward on such a board; the frame shows a finished level.
            return _fallback(level, "Every box is already on a target.")
        try:
            solution = solve_grid(grid, max_states=self.max_states, time_budget=self.time_budget)
        except Unsolvable:
            return _fallback(level, "This position cannot be solved any more.")
        except SolverBudgetExceeded:
            return _fallback(level, "I could not find a solution in time.")
        actions = tuple(solution.actions)
        return Plan(actions, f"I found a solution in {len(actions)} moves.", solves=True)

    def _cached(self, grid: str) -> Plan | None:
        with self._lock:
            plan = self._cache.get(grid)
            if plan is not None:
                self._cache.move_to_end(grid)
            return plan

    def _remember(self, entries: list[tuple[str, Plan]]) -> None:
        with self._lock:
            for key, value in entries:
                self._cache[key] = value
                self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)


def _fallback(level: Level, note: str) -> Plan:
    # A single move that pushes nothing: the reply stays well-formed without making things
    # worse, which is all a player can sensibly do when there is nothing left to win.
    return Plan((_harmless_move(level),), f"{note} I make one harmless move.")


def _positions_along(level: Level, plan: Plan) -> list[tuple[str, Plan]]:
    """The grid after each move of ``plan`` with the moves left from there."""
    from evaluators.sokoban.levels import format_grid

    entries: list[tuple[str, Plan]] = []
    for index, move in enumerate(plan.actions[:-1]):
        level = _moved(level, move)
        rest = plan.actions[index + 1 :]
        note = f"I follow my solution: {len(rest)} moves to go."
        entries.append((format_grid(level), Plan(rest, note, solves=True)))
    return entries


def _moved(level: Level, move: str) -> Level:
    """The level after ``move`` by gym-sokoban's rules (a blocked move changes nothing)."""
    dr, dc = _STEPS[move]
    r, c = level.player
    ahead = (r + dr, c + dc)
    if ahead in level.walls:
        return level
    boxes = level.boxes
    if ahead in boxes:
        beyond = (r + 2 * dr, c + 2 * dc)
        if beyond in level.walls or beyond in boxes:
            return level
        boxes = (boxes - {ahead}) | {beyond}
    return dataclasses.replace(level, boxes=boxes, player=ahead)


def _harmless_move(level: Level) -> str:
    """A move that pushes no box (Up when every side is blocked)."""
    r, c = level.player
    for move, (dr, dc) in _STEPS.items():
        ahead = (r + dr, c + dc)
        if ahead not in level.walls and ahead not in level.boxes:
            return move
    return ACTIONS[0]

