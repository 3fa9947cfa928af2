"""Small Go episodes against the GNU Go the folder's install/ declares: passes, refused moves, the
engine's fixed answers, and the conformance check."""
from __future__ import annotations

from typing import Any

import pytest

from evaluators.conformance import check_plugin

from .. import plugin
from ..engine import EngineUnavailable, engine_path
from ..env import SmallGoEpisode

try:
    engine_path()
except EngineUnavailable:  # pragma: no cover - scripts/setup installs it
    pytest.fail("GNU Go is missing: scripts/setup installs what install/system-packages.txt declares")

EMPTY = {"rows": ["....."] * 5, "seed": 1, "max_moves": 10}
# White holds C3: a Black move there is refused.
HELD = {"rows": [".....", ".....", "..O..", ".....", "....."], "seed": 2, "max_moves": 10}


def _play(data: dict[str, Any], moves: list[str]) -> tuple[SmallGoEpisode, list[dict[str, Any]]]:
    episode = SmallGoEpisode(data, render_observations=False)
    episode.reset()
    infos = []
    try:
        for move in moves:
            if episode.done:
                break
            infos.append(episode.step(move).info)
    finally:
        episode.close()
    return episode, infos


def test_black_passing_throughout_holds_nothing_and_the_game_ends_on_whites_pass() -> None:
    episode, infos = _play(EMPTY, ["pass"] * 10)
    assert episode.score() == 0.0 and episode.done
    assert infos[-1]["white"] == "pass" and len(infos) < 10


def test_a_move_onto_a_held_point_is_refused_and_played_as_a_pass() -> None:
    _, infos = _play(HELD, ["C3"])
    assert infos[0]["legal"] is False


def test_the_same_moves_meet_the_same_answers() -> None:
    moves = ["C3", "B2", "D4", "B4", "D2"]
    first = [info["white"] for info in _play(EMPTY, moves)[1]]
    second = [info["white"] for info in _play(EMPTY, moves)[1]]
    assert first == second and len(first) >= 2


def test_small_go_conforms_to_the_plugin_interface() -> None:
    check_plugin(plugin)
