"""GridWalk's own panels: the replay's walk, stored beside the trajectory, and the analysis page's
mean score by route length."""
from __future__ import annotations

import json
from pathlib import Path

from evaluators.gridwalk import plugin
from evaluators.gridwalk.analysis import by_distance
from evaluators.gridwalk.env import ARTIFACT_NAME, GridWalkEpisode
from evaluators.gridwalk.grid import Level
from evaluators.gridwalk.parsing import parse_route

CORRIDOR = Level.from_rows(["#####", "#@.G#", "#####"])


def test_the_walk_is_stored_with_every_square_the_walker_stood_on(tmp_path: Path) -> None:
    episode = GridWalkEpisode(CORRIDOR, render_observations=False)
    episode.reset()
    for move in ("West", "East", "East"):
        episode.step(move)
    index = episode.save_artifacts(tmp_path)
    assert index == {"kind": "gridwalk", "file": ARTIFACT_NAME, "moves": 3}
    walk = json.loads((tmp_path / ARTIFACT_NAME).read_text())
    assert walk["path"] == [[1, 1], [1, 1], [1, 2], [1, 3]] and walk["reached"] is True
    assert walk["grid"] == CORRIDOR.to_rows() and walk["initial_distance"] == 2 and walk["distance"] == 0


def test_the_replay_panel_draws_the_stored_walk_with_its_own_script_and_style_sheet() -> None:
    walk = {"grid": CORRIDOR.to_rows(), "path": [[1, 1]]}
    panel = plugin.replay_panel({"kind": "gridwalk", "file": ARTIFACT_NAME}, {ARTIFACT_NAME: walk}.get)
    assert panel is not None and panel.template == "gridwalk/replay.html" and panel.context == {"walk": walk}
    assert panel.scripts == ("js/replay_gridwalk.js",) and panel.styles == ("css/replay_gridwalk.css",)


def test_a_replay_without_the_stored_walk_or_of_another_environment_has_no_panel() -> None:
    assert plugin.replay_panel({"kind": "gridwalk", "file": ARTIFACT_NAME}, lambda name: None) is None
    assert plugin.replay_panel({"kind": "sokoban"}, lambda name: {"grid": []}) is None


def test_the_analysis_panel_averages_each_route_length_and_skips_scenarios_without_one() -> None:
    means: list[tuple[dict[str, object], float]] = [
        ({"distance": 2}, 100.0), ({"distance": 6}, 50.0), ({"distance": 2}, 0.0), ({}, 80.0),
        ({"distance": "x"}, 10.0), ({"distance": True}, 10.0)]
    assert by_distance(means) == {"distances": [2, 6], "means": [50.0, 50.0], "counts": [2, 1]}
    assert by_distance([({}, 1.0)]) is None


def test_a_global_reply_with_a_route_block_is_read_from_the_block_alone() -> None:
    parsed = parse_route("Moves: West\n```route\nNorth\nEast, up\n```", plugin.ACTIONS)
    assert parsed.actions == ["North", "East"] and parsed.foreign_tokens == ["up"]
