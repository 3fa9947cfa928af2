"""Sokoban level I/O: XSB text grids, official pickled levels and gym-sokoban environments.

The official MageBench levels are pickled gym-sokoban ``SokobanEnv`` objects (reference §2.2).
The platform also keeps every level as an XSB grid, one row per line, all rows the same width:

====  ==========================
``#``  wall
`` `` floor
``.``  target
``$``  box
``*``  box on a target
``@``  player
``+``  player on a target
====  ==========================

gym-sokoban encodes a room with two integer arrays, which this module converts to and from:
``room_fixed`` (0 wall, 1 floor, 2 target) and ``room_state`` (0 wall, 1 floor, 2 empty target,
3 box on target, 4 box off target, 5 player).

gym and gym-sokoban are imported inside the functions that need them: importing this module must
stay cheap because the plug-in registry imports the Sokoban package on every lookup.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from gym_sokoban.envs.sokoban_env import SokobanEnv  # type: ignore[import-untyped]

WALL, FLOOR, TARGET, BOX_ON_TARGET, BOX, PLAYER = 0, 1, 2, 3, 4, 5
#: Sprite index used only for rendering (gym-sokoban draws a player standing on a target apart).
PLAYER_ON_TARGET = 6
TILE = 16

DEFAULT_MAX_STEPS = 120

_FLOOR_ALIASES = {" ", "-", "_"}
_CHAR_TO_CELL = {
    "#": (WALL, WALL),
    " ": (FLOOR, FLOOR),
    ".": (TARGET, TARGET),
    "$": (FLOOR, BOX),
    "*": (TARGET, BOX_ON_TARGET),
    "@": (FLOOR, PLAYER),
    "+": (TARGET, PLAYER),
}


Cell = tuple[int, int]


@dataclass(frozen=True)
class Level:
    """A parsed room: geometry plus the movable pieces, in (row, column) coordinates."""

    height: int
    width: int
    walls: frozenset[Cell]
    targets: frozenset[Cell]
    boxes: frozenset[Cell]
    player: Cell

    @property
    def num_boxes(self) -> int:
        return len(self.boxes)

    @property
    def boxes_on_target(self) -> int:
        return len(self.boxes & self.targets)

    def is_solved(self) -> bool:
        return self.boxes <= self.targets


def parse_grid(text: str) -> Level:
    """Parse an XSB grid, checking everything gym-sokoban silently assumes about a room."""
    rows = _grid_rows(text)
    height, width = len(rows), len(rows[0])
    if height < 3 or width < 3:
        raise ValueError(f"a Sokoban room needs at least 3x3 cells, got {height}x{width}")
    walls, targets, boxes, players = _grid_cells(rows)
    if len(players) != 1:
        raise ValueError(f"a Sokoban grid needs exactly one player, found {len(players)}")
    if not boxes:
        raise ValueError("a Sokoban grid needs at least one box")
    if len(boxes) != len(targets):
        raise ValueError(f"a Sokoban grid needs as many targets as boxes, found {len(targets)} targets "
                         f"for {len(boxes)} boxes")
    border = {(r, c) for r in range(height) for c in range(width) if r in (0, height - 1) or c in (0, width - 1)}
    if not border <= walls:
        # gym-sokoban never bounds-checks a move to the left or upwards (numpy wraps the index), so
        # an open border would let pieces teleport; its own generator always walls the border.
        raise ValueError("the outermost rows and columns of a Sokoban grid must all be walls")
    return Level(height, width, frozenset(walls), frozenset(targets), frozenset(boxes), players[0])


def _grid_rows(text: str) -> list[str]:
    """The grid's rows, at least one, all of one width."""
    lines = text.split("\n")
    # Editors add or drop trailing newlines; blank lines around the grid carry no information.
    while lines and not lines[-1].strip("\r"):
        lines.pop()
    while lines and not lines[0].strip("\r"):
        lines.pop(0)
    rows = [line.rstrip("\r") for line in lines]
    if not rows:
        raise ValueError("empty Sokoban grid")
    width = len(rows[0])
    if any(len(row) != width for row in rows):
        widths = sorted({len(row) for row in rows})
        raise ValueError(f"every row of a Sokoban grid must have the same width, got widths {widths}")
    return rows


def _grid_cells(rows: list[str]) -> tuple[set[Cell], set[Cell], set[Cell], list[Cell]]:
    """Walls, targets, boxes and players of the rows, in reading order."""
    walls: set[Cell] = set()
    targets: set[Cell] = set()
    boxes: set[Cell] = set()
    players: list[Cell] = []
    for r, row in enumerate(rows):
        for c, char in enumerate(row):
            fixed, state = _cell(" " if char in _FLOOR_ALIASES else char, r, c)
            if fixed == WALL:
                walls.add((r, c))
            if fixed == TARGET:
                targets.add((r, c))
            if state in (BOX, BOX_ON_TARGET):
                boxes.add((r, c))
            if state == PLAYER:
                players.append((r, c))
    return walls, targets, boxes, players


def _cell(char: str, r: int, c: int) -> tuple[int, int]:
    if char not in _CHAR_TO_CELL:
        raise ValueError(f"unknown Sokoban grid character {char!r} at row {r}, column {c}")
    return _CHAR_TO_CELL[char]


def format_grid(level: Level) -> str:
    """The XSB text of a level (rows joined by newlines, no trailing newline)."""
    rows = []
    for r in range(level.height):
        chars = []
        for c in range(level.width):
            cell = (r, c)
            on_target = cell in level.targets
            if cell in level.walls:
                chars.append("#")
            elif cell == level.player:
                chars.append("+" if on_target else "@")
            elif cell in level.boxes:
                chars.append("*" if on_target else "$")
            else:
                chars.append("." if on_target else " ")
        rows.append("".join(chars))
    return "\n".join(rows)


def normalize_grid(text: str) -> str:
    """Canonical XSB text for comparisons (floor aliases replaced, surrounding blank lines dropped)."""
    return format_grid(parse_grid(text))


def level_to_arrays(level: Level) -> tuple[np.ndarray, np.ndarray]:
    """``(room_fixed, room_state)`` with gym-sokoban's codes and dtype."""
    # gym-sokoban's generator builds its rooms as default-int arrays; matching it keeps pickles alike.
    fixed = np.full((level.height, level.width), FLOOR, dtype=int)
    for cell in level.walls:
        fixed[cell] = WALL
    for cell in level.targets:
        fixed[cell] = TARGET
    state = fixed.copy()
    for cell in level.boxes:
        state[cell] = BOX_ON_TARGET if cell in level.targets else BOX
    state[level.player] = PLAYER
    return fixed, state


def level_from_arrays(room_fixed: np.ndarray, room_state: np.ndarray) -> Level:
    fixed = np.asarray(room_fixed)
    state = np.asarray(room_state)
    if fixed.shape != state.shape or fixed.ndim != 2:
        raise ValueError(f"room arrays disagree: room_fixed {fixed.shape}, room_state {state.shape}")
    height, width = fixed.shape
    walls = {(int(r), int(c)) for r, c in np.argwhere(fixed == WALL)}
    targets = {(int(r), int(c)) for r, c in np.argwhere(fixed == TARGET)}
    boxes = {(int(r), int(c)) for r, c in np.argwhere((state == BOX) | (state == BOX_ON_TARGET))}
    players = [(int(r), int(c)) for r, c in np.argwhere(state == PLAYER)]
    if len(players) != 1:
        raise ValueError(f"the room has {len(players)} players, expected one")
    return Level(height, width, frozenset(walls), frozenset(targets), frozenset(boxes), players[0])


def level_from_env(env: Any) -> Level:
    return level_from_arrays(env.room_fixed, env.room_state)


def grid_from_env(env: Any) -> str:
    """The XSB grid of an environment's current state."""
    return format_grid(level_from_env(env))


def _sokoban_env_class() -> type:
    from gym_sokoban.envs.sokoban_env import SokobanEnv

    return SokobanEnv


def unwrap_env(obj: Any) -> SokobanEnv:
    """The bare gym-sokoban environment inside ``obj`` (gym wrappers are peeled off)."""
    env_class = _sokoban_env_class()
    env = obj
    # A level pickled from ``gym.make`` would carry wrappers that break on numpy 2 (see env.py).
    for _ in range(16):
        if isinstance(env, env_class):
            return env
        inner = getattr(env, "env", None)
        if inner is None or inner is env:
            break
        env = inner
    raise TypeError(f"expected a gym-sokoban SokobanEnv, got {type(obj).__name__}")


def load_pickled_env(path: str | Path) -> SokobanEnv:
    """Unpickle an official level (a pickled, already reset gym-sokoban ``SokobanEnv``).

    Unpickling runs arbitrary code named by the file: only call this on paths an administrator
    supplied (the imported MageBench resources or the project's own fixtures), never on uploads.
    """
    # The pickle names classes in gym_sokoban.envs; importing it first also registers its envs.
    _sokoban_env_class()
    with open(path, "rb") as handle:
        obj = pickle.load(handle)  # noqa: S301 - trusted, administrator-supplied resource
    return unwrap_env(obj)


def env_from_level(level: Level, max_steps: int = DEFAULT_MAX_STEPS) -> SokobanEnv:
    """A gym-sokoban environment at the start of ``level``, as ``reset()`` would leave it."""
    env_class = _sokoban_env_class()
    # reset=False skips gym-sokoban's random room generator; the fields it would set are filled in.
    env = env_class(dim_room=(level.height, level.width), max_steps=max_steps, num_boxes=level.num_boxes,
                    reset=False)
    env.room_fixed, env.room_state = level_to_arrays(level)
    env.box_mapping = _box_mapping(level)
    env.player_position = np.argwhere(env.room_state == PLAYER)[0]
    env.num_env_steps = 0
    env.reward_last = 0
    # gym-sokoban rewards a step by comparing the boxes on targets with this counter. reset() sets
    # it to 0, which is right for every room its generator makes (all targets start empty); for a
    # grid with a box already on a target, 0 would pay a phantom +1 on the first step, so the
    # counter is set to match the room instead.
    env.boxes_on_target = level.boxes_on_target
    return env


def env_from_grid(text: str, max_steps: int = DEFAULT_MAX_STEPS) -> SokobanEnv:
    """Build an unwrapped gym-sokoban environment equivalent to an official level for ``text``."""
    return env_from_level(parse_grid(text), max_steps=max_steps)


def _box_mapping(level: Level) -> dict[tuple[np.int64, np.int64], tuple[np.int64, np.int64]]:
    # gym-sokoban maps each target to the box its generator pulled away from it; nothing reads the
    # mapping after generation, so pair boxes already on a target with it and the rest in order.
    on_target = sorted(level.boxes & level.targets)
    free_targets = sorted(level.targets - level.boxes)
    free_boxes = sorted(level.boxes - level.targets)
    pairs = [(cell, cell) for cell in on_target] + list(zip(free_targets, free_boxes))
    return {(np.int64(t[0]), np.int64(t[1])): (np.int64(b[0]), np.int64(b[1])) for t, b in sorted(pairs)}


def scenario_data_from_env(env: Any, variant: str) -> dict[str, Any]:
    """The JSON-able scenario data the platform stores for a level (the importer adds ``upper_bound``)."""
    level = level_from_env(env)
    return {
        "variant": variant,
        "dim_room": [level.height, level.width],
        "num_boxes": level.num_boxes,
        "max_steps": int(env.max_steps),
        "grid": format_grid(level),
    }


@lru_cache(maxsize=1)
def tile_sprites() -> np.ndarray:
    """gym-sokoban's 16x16 RGB tiles, shape (7, 16, 16, 3), indexed by room code (6 = player on target).

    They are obtained by letting gym-sokoban render a synthetic one-row room, so they are exactly
    the pixels its ``render('rgb_array')`` uses, whatever files the installed package ships.
    """
    from gym_sokoban.envs.render_utils import room_to_rgb  # type: ignore[import-untyped]

    strip = room_to_rgb(np.arange(7, dtype=int).reshape(1, 7))
    sprites = np.stack([strip[:, i * TILE:(i + 1) * TILE, :] for i in range(7)])
    sprites.setflags(write=False)
    return sprites


def render_rgb(room_fixed: np.ndarray, room_state: np.ndarray) -> np.ndarray:
    """The same pixels as gym-sokoban's ``render('rgb_array')``, without re-reading its PNGs per call."""
    codes = np.array(room_state, dtype=np.intp)
    codes[(codes == PLAYER) & (np.asarray(room_fixed) == TARGET)] = PLAYER_ON_TARGET
    height, width = codes.shape
    tiles = tile_sprites()[codes]  # (h, w, 16, 16, 3)
    return np.ascontiguousarray(tiles.transpose(0, 2, 1, 3, 4).reshape(height * TILE, width * TILE, 3))
