"""An exact, move-optimal Sokoban solver that yields the metric's upper bound R_ub.

Why minimising moves maximises the reward: gym-sokoban pays −0.1 for every step, +1 / −1 whenever
the number of boxes on targets rises / falls, and +10 on the step that solves the room (the episode
ends there). A step changes that number by at most one, so along a solving trajectory the box terms
telescope to the net change and R = 10 + (n_boxes − on_target_at_start) − 0.1·steps.

gym-sokoban judges each step against its ``boxes_on_target`` counter, not against the room before
the step. The two only disagree right after ``reset()`` on a room that already has a box on a
target (the counter starts at 0; gym-sokoban's own generator never makes such rooms). A grid is
taken to be a position whose counter matches the room (what :func:`~evaluators.sokoban.levels.
env_from_grid` builds); :func:`solve_env` reads the counter from the environment, and when it is
stale the first move is enumerated so the best reward wins exactly as gym-sokoban would pay it.

Search: A* over push states (box set, player square right after a push); an edge is "walk to the
square behind a box, then push" and costs the walk length + 1. The heuristic is the cost of a
minimum matching of boxes to targets under push distances computed on the empty room — each push
moves one box one square and every push is a move, so it is admissible and consistent, and the
first goal state popped is optimal. Pruned states (a box on a square from which no target is
reachable, or a 2x2 block of walls/boxes holding a box off target) can never be solved, so pruning
keeps the result exact.
"""
from __future__ import annotations

import heapq
import itertools
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluators.sokoban.levels import Level, level_from_env, parse_grid

ACTION_NAMES = ("Up", "Down", "Left", "Right")
_LETTERS = ("u", "d", "l", "r")
_INF = 1 << 30

PENALTY_FOR_STEP = -0.1
REWARD_BOX_ON_TARGET = 1.0
PENALTY_BOX_OFF_TARGET = -1.0
REWARD_FINISHED = 10.0


class SolverError(Exception):
    """Base class of the solver's failures."""


class Unsolvable(SolverError):
    """The level has no solution (the whole reachable state space was searched)."""


class SolverBudgetExceeded(SolverError):
    """The search stopped at ``max_states`` or ``time_budget`` before proving an answer."""


@dataclass(frozen=True)
class Solution:
    """A move-optimal solution.

    ``actions`` are the action names the platform executes; ``letters`` is the official
    upper_bound.json encoding (one letter per move, upper case when the move pushes a box).
    """

    actions: list[str]
    letters: list[str]
    steps: int
    reward: float
    expanded: int

    @property
    def letters_text(self) -> str:
        return "".join(self.letters)

    def upper_bound_entry(self) -> dict[str, Any]:
        """The value stored under a level's name in upper_bound.json."""
        return {"actions": list(self.letters), "steps": self.steps, "reward": self.reward}


class _Board:
    """Cells numbered row-major; every precomputation the search reuses."""

    def __init__(self, level: Level) -> None:
        self.width = level.width
        self.size = level.height * level.width
        w = self.width
        self.offsets = (-w, w, -1, 1)  # Up, Down, Left, Right
        self.floor = [False] * self.size
        for r in range(level.height):
            for c in range(level.width):
                if (r, c) not in level.walls:
                    self.floor[r * w + c] = True
        self.targets = frozenset(self.index(cell) for cell in level.targets)
        self.target_list = sorted(self.targets)
        # Neighbours per direction, or -1 where a wall blocks (the border is always wall).
        self.step = [[(i + off if self.floor[i] and self.floor[i + off] else -1) for off in self.offsets]
                     if self.floor[i] else [-1, -1, -1, -1] for i in range(self.size)]
        self.target_mask = sum(1 << t for t in self.targets)
        self.distances = self._push_distances()
        self.live = [any(d[i] < _INF for d in self.distances) for i in range(self.size)]
        self.blocks = [self._blocks_around(i) for i in range(self.size)]

    def _blocks_around(self, cell: int) -> list[int]:
        """Floor-square masks of the 2x2 blocks containing ``cell``.

        When every floor square of such a block holds a box, none of those boxes can ever move
        (each push needs a free square ahead and the player behind, both inside the block), so the
        state is dead unless all of them are on targets.
        """
        if not self.floor[cell]:
            return []
        w = self.width
        masks = []
        for top_left in (cell, cell - 1, cell - w, cell - w - 1):
            block = (top_left, top_left + 1, top_left + w, top_left + w + 1)
            if all(0 <= i < self.size for i in block):
                masks.append(sum(1 << i for i in block if self.floor[i]))
        return masks

    def index(self, cell: tuple[int, int]) -> int:
        return cell[0] * self.width + cell[1]

    def _push_distances(self) -> list[list[int]]:
        """Per target, the minimum number of pushes bringing a lone box from each square to it."""
        result = []
        for target in self.target_list:
            dist = [_INF] * self.size
            dist[target] = 0
            queue = deque([target])
            while queue:
                here = queue.popleft()
                for off in self.offsets:
                    # A box arriving at ``here`` by a push along ``off`` came from here−off, pushed by
                    # a player standing on here−2·off.
                    origin = here - off
                    stand = origin - off
                    if 0 <= stand < self.size and self.floor[origin] and self.floor[stand] \
                            and dist[origin] == _INF:
                        dist[origin] = dist[here] + 1
                        queue.append(origin)
            result.append(dist)
        return result


def _bits(mask: int) -> list[int]:
    cells = []
    while mask:
        low = mask & -mask
        cells.append(low.bit_length() - 1)
        mask ^= low
    return cells


class _Heuristic:
    """Minimum-matching push lower bound per box set (cached: many states share a box set)."""

    def __init__(self, board: _Board) -> None:
        self.board = board
        self.cache: dict[int, int] = {}
        self._assign: Any = None

    def __call__(self, boxes: int) -> int:
        cached = self.cache.get(boxes)
        if cached is None:
            cached = self._compute(_bits(boxes))
            self.cache[boxes] = cached
        return cached

    def _compute(self, boxes: list[int]) -> int:
        distances = self.board.distances
        matrix = [[dist[b] for dist in distances] for b in boxes]
        if len(boxes) <= 3:
            best = min(sum(matrix[i][perm[i]] for i in range(len(boxes)))
                       for perm in itertools.permutations(range(len(boxes))))
        else:
            if self._assign is None:
                from scipy.optimize import linear_sum_assignment

                self._assign = linear_sum_assignment
            cost = np.array(matrix, dtype=np.int64)
            rows, cols = self._assign(cost)
            best = int(cost[rows, cols].sum())
        return best if best < _INF else _INF


def _walk_distances(board: _Board, start: int, boxes: int) -> list[int]:
    """Walking distance to every square the player reaches without pushing (−1 elsewhere)."""
    dist = [-1] * board.size
    dist[start] = 0
    queue = [start]
    step = board.step
    for here in queue:
        d = dist[here] + 1
        for nxt in step[here]:
            if nxt >= 0 and dist[nxt] < 0 and not (boxes >> nxt) & 1:
                dist[nxt] = d
                queue.append(nxt)
    return dist


def _walk_path(board: _Board, start: int, goal: int, boxes: int) -> list[int]:
    """Directions of a shortest walk from ``start`` to ``goal``."""
    parent: dict[int, tuple[int, int]] = {start: (-1, -1)}
    queue = [start]
    for here in queue:
        if goal in parent:
            break
        for direction, nxt in enumerate(board.step[here]):
            if nxt >= 0 and nxt not in parent and not (boxes >> nxt) & 1:
                parent[nxt] = (here, direction)
                queue.append(nxt)
    if goal not in parent:
        raise AssertionError("walk target unreachable during path reconstruction")
    directions = []
    here = goal
    while here != start:
        here, direction = parent[here]
        directions.append(direction)
    directions.reverse()
    return directions


@dataclass
class _SearchResult:
    solved: bool
    moves: list[tuple[int, bool]]  # (direction, pushed)
    expanded: int


_Key = tuple[int, int]  # (player square, box bitmask)


def _check_budget(expanded: int, expanded_before: int, max_states: int | None, deadline: float | None) -> None:
    if max_states is not None and expanded_before + expanded > max_states:
        raise SolverBudgetExceeded(f"search stopped after {expanded_before + expanded} expanded states "
                                   f"(max_states={max_states})")
    # Reading the clock on every expansion would cost more than the check is worth.
    if deadline is not None and (expanded & 255) == 0 and time.monotonic() > deadline:
        raise SolverBudgetExceeded(f"search stopped after its time budget "
                                   f"({expanded_before + expanded} expanded states)")


def _astar(board: _Board, player: int, boxes: int, heuristic: _Heuristic,
           max_states: int | None, deadline: float | None, expanded_before: int) -> _SearchResult:
    """Move-optimal move sequence from (player, boxes); ``solved`` is False when none exists."""
    target_mask = board.target_mask
    start_key = (player, boxes)
    if boxes & ~target_mask == 0:
        return _SearchResult(True, [], 0)
    h0 = heuristic(boxes)
    if h0 >= _INF:
        return _SearchResult(False, [], 0)
    best_g: dict[_Key, int] = {start_key: 0}
    parent: dict[_Key, tuple[_Key, int, int]] = {}
    counter = itertools.count()
    # Ties on f go to the deeper state, which reaches the goal with fewer expansions.
    open_heap: list[tuple[int, int, int, _Key]] = [(h0, 0, next(counter), start_key)]
    expanded = 0
    blocks = board.blocks
    while open_heap:
        _, neg_g, _, key = heapq.heappop(open_heap)
        g = -neg_g
        if best_g[key] < g:
            continue
        here, box_mask = key
        if box_mask & ~target_mask == 0:
            return _SearchResult(True, _reconstruct(board, key, start_key, parent), expanded)
        expanded += 1
        _check_budget(expanded, expanded_before, max_states, deadline)
        walk = _walk_distances(board, here, box_mask)
        for box, direction, dest, walk_cost in _pushes(board, box_mask, walk):
            new_mask = box_mask ^ (1 << box) | (1 << dest)
            new_key = (box, new_mask)
            new_g = g + walk_cost + 1
            if new_g >= best_g.get(new_key, _INF):
                continue
            if any(block & ~new_mask == 0 and block & ~target_mask for block in blocks[dest]):
                continue
            h = heuristic(new_mask)
            if h >= _INF:
                continue
            best_g[new_key] = new_g
            parent[new_key] = (key, box, direction)
            heapq.heappush(open_heap, (new_g + h, -new_g, next(counter), new_key))
    return _SearchResult(False, [], expanded)


def _pushes(board: _Board, box_mask: int, walk: list[int]) -> Iterator[tuple[int, int, int, int]]:
    """(box, direction, destination, walking cost) of every push the player can walk to and make
    without moving a box onto another or onto a dead square."""
    step = board.step
    live = board.live
    for box in _bits(box_mask):
        neighbours = step[box]
        for direction in range(4):
            behind = neighbours[direction ^ 1]  # the square the player pushes from
            if behind < 0:
                continue
            walk_cost = walk[behind]
            if walk_cost < 0:
                continue
            dest = neighbours[direction]
            if dest < 0 or (box_mask >> dest) & 1 or not live[dest]:
                continue
            yield box, direction, dest, walk_cost


def _reconstruct(board: _Board, key: _Key, start_key: _Key, parent: dict[_Key, tuple[_Key, int, int]]
                 ) -> list[tuple[int, bool]]:
    pushes = []
    while key != start_key:
        previous, box, direction = parent[key]
        pushes.append((previous, box, direction))
        key = previous
    pushes.reverse()
    moves: list[tuple[int, bool]] = []
    for (player, box_mask), box, direction in pushes:
        behind = board.step[box][direction ^ 1]
        moves.extend((walk_direction, False) for walk_direction in _walk_path(board, player, behind, box_mask))
        moves.append((direction, True))
    return moves


def _replay_reward(board: _Board, player: int, boxes: frozenset[int], counter: int,
                   moves: list[tuple[int, bool]]) -> tuple[float, list[bool]]:
    """Apply gym-sokoban's reward rule move by move; also re-derives which moves push."""
    targets = board.targets
    box_set = set(boxes)
    total = 0.0
    pushed_flags = []
    for direction, _ in moves:
        nxt = board.step[player][direction]
        pushed = False
        if nxt >= 0:
            if nxt in box_set:
                dest = board.step[nxt][direction]
                if dest >= 0 and dest not in box_set:
                    box_set.remove(nxt)
                    box_set.add(dest)
                    player = nxt
                    pushed = True
            else:
                player = nxt
        pushed_flags.append(pushed)
        on_target = len(box_set & targets)
        reward = PENALTY_FOR_STEP
        if on_target > counter:
            reward += REWARD_BOX_ON_TARGET
        elif on_target < counter:
            reward += PENALTY_BOX_OFF_TARGET
        if box_set <= targets:
            reward += REWARD_FINISHED
        counter = on_target
        total += reward
    return total, pushed_flags


def _solve(level: Level, counter: int | None, max_states: int | None, time_budget: float | None) -> Solution:
    board = _Board(level)
    heuristic = _Heuristic(board)
    deadline = time.monotonic() + time_budget if time_budget is not None else None
    player = board.index(level.player)
    boxes = frozenset(board.index(cell) for cell in level.boxes)

    candidates: list[tuple[int, frozenset[int], list[tuple[int, bool]]]] = []
    on_target = len(boxes & board.targets)
    if counter is None:
        counter = on_target
    if counter == on_target and not boxes <= board.targets:
        # The usual case: every step's reward follows the room, so fewest moves = highest reward.
        candidates.append((player, boxes, []))
    else:
        # The first step is judged against a stale counter (or the room starts solved and still
        # needs one step to end the episode): try each first move, keep the best outcome.
        for direction in range(4):
            nxt = board.step[player][direction]
            first_player, first_boxes = player, boxes
            if nxt >= 0:
                if nxt in boxes:
                    dest = board.step[nxt][direction]
                    if dest >= 0 and dest not in boxes:
                        first_player, first_boxes = nxt, (boxes - {nxt}) | {dest}
                else:
                    first_player = nxt
            candidates.append((first_player, first_boxes, [(direction, False)]))

    expanded = 0
    best: tuple[float, int, list[tuple[int, bool]]] | None = None
    for start_player, start_boxes, prefix in candidates:
        start_mask = sum(1 << b for b in start_boxes)
        result = _astar(board, start_player, start_mask, heuristic, max_states, deadline, expanded)
        expanded += result.expanded
        if not result.solved:
            continue
        moves = prefix + result.moves
        reward, _ = _replay_reward(board, player, boxes, counter, moves)
        if best is None or round(reward, 6) > round(best[0], 6) or \
                (round(reward, 6) == round(best[0], 6) and len(moves) < best[1]):
            best = (reward, len(moves), moves)
    if best is None:
        raise Unsolvable(f"the level has no solution (searched {expanded} push states)")
    reward, _, moves = best
    _, pushed_flags = _replay_reward(board, player, boxes, counter, moves)
    actions = [ACTION_NAMES[direction] for direction, _ in moves]
    letters = [(_LETTERS[direction].upper() if pushed else _LETTERS[direction])
               for (direction, _), pushed in zip(moves, pushed_flags)]
    return Solution(actions=actions, letters=letters, steps=len(moves), reward=round(reward, 1),
                    expanded=expanded)


def solve_grid(text: str, *, max_states: int | None = None, time_budget: float | None = None) -> Solution:
    """Move-optimal solution of an XSB grid (as played in ``env_from_grid(text)``).

    Raises :class:`Unsolvable` when no solution exists and :class:`SolverBudgetExceeded` when
    ``max_states`` push states were expanded or ``time_budget`` seconds passed first.
    """
    return _solve(parse_grid(text), None, max_states, time_budget)


def solve_env(env: Any, *, max_states: int | None = None, time_budget: float | None = None) -> Solution:
    """Move-optimal solution from an environment's current state, honouring its step limit."""
    solution = _solve(level_from_env(env), int(env.boxes_on_target), max_states, time_budget)
    remaining = int(env.max_steps) - int(env.num_env_steps)
    if solution.steps > remaining:
        raise Unsolvable(f"the optimal solution needs {solution.steps} moves but the environment "
                         f"ends after {remaining} more steps")
    return solution
