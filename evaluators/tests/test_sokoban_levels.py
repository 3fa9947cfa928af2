"""Level I/O: XSB grids, gym-sokoban environments built from them, and the fixture levels on disk."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from evaluators.base import ScenarioSpec
from evaluators.sokoban.env import load_scenario_env
from evaluators.sokoban.levels import (
    env_from_grid,
    format_grid,
    grid_from_env,
    load_pickled_env,
    normalize_grid,
    parse_grid,
    render_rgb,
    scenario_data_from_env,
)

RESOURCES = Path(__file__).resolve().parents[2] / "fixtures" / "magebench" / "resources"
SOKOBAN = RESOURCES / "Sokoban"
LEVEL_NAMES = [Path(p).stem for p in json.loads((RESOURCES / "Sokoban_all.json").read_text())]

SAMPLE = "\n".join([
    "#######",
    "#+  . #",
    "# $*$ #",
    "#     #",
    "#######",
])


def test_a_grid_round_trips_through_parse_and_format():
    assert format_grid(parse_grid(SAMPLE)) == SAMPLE
    assert normalize_grid("\n" + SAMPLE.replace(" ", "-") + "\n\n") == SAMPLE


def test_a_grid_round_trips_through_a_gym_sokoban_environment():
    env = env_from_grid(SAMPLE)
    assert grid_from_env(env) == SAMPLE
    assert env.room_fixed.tolist() == [
        [0, 0, 0, 0, 0, 0, 0],
        [0, 2, 1, 1, 2, 1, 0],
        [0, 1, 1, 2, 1, 1, 0],
        [0, 1, 1, 1, 1, 1, 0],
        [0, 0, 0, 0, 0, 0, 0],
    ]
    assert env.room_state[1].tolist() == [0, 5, 1, 1, 2, 1, 0]
    assert env.room_state[2].tolist() == [0, 1, 4, 3, 4, 1, 0]


def test_an_environment_from_a_grid_carries_every_field_a_reset_would_set():
    env = env_from_grid(SAMPLE, max_steps=77)
    assert env.dim_room == (5, 7)
    assert env.num_boxes == 3
    assert env.max_steps == 77
    assert env.num_env_steps == 0
    assert env.boxes_on_target == 1 and env.reward_last == 0  # the counter matches the room's "*"
    assert env.player_position.tolist() == [1, 1]
    assert len(env.box_mapping) == 3
    assert (env.penalty_for_step, env.reward_box_on_target, env.penalty_box_off_target, env.reward_finished) == \
        (-0.1, 1, -1, 10)
    assert render_rgb(env.room_fixed, env.room_state).shape == (80, 112, 3)


@pytest.mark.parametrize("text, problem", [
    ("#####\n#@$.#\n####", "same width"),
    ("#####\n#@$.#\n#@$.#\n#####", "exactly one player"),
    ("#####\n#@$ #\n#####", "as many targets as boxes"),
    ("#####\n#@ .#\n#####", "at least one box"),
    ("#####\n @$.#\n#####", "must all be walls"),
    ("#####\n#@$x#\n#####", "unknown"),
    ("", "empty"),
])
def test_malformed_grids_are_rejected_with_a_clear_message(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_grid(text)


def test_scenario_data_has_the_stored_fields():
    data = scenario_data_from_env(env_from_grid(SAMPLE, max_steps=200), "small-v1")
    assert data == {"variant": "small-v1", "dim_room": [5, 7], "num_boxes": 3, "max_steps": 200, "grid": SAMPLE}
    json.dumps(data)


def test_the_fixture_set_has_the_official_layout():
    all_paths = json.loads((RESOURCES / "Sokoban_all.json").read_text())
    mini_paths = json.loads((RESOURCES / "Sokoban_mini.json").read_text())
    bounds = json.loads((SOKOBAN / "upper_bound.json").read_text())
    assert len(all_paths) >= 30 and len(mini_paths) == 10
    assert set(mini_paths) <= set(all_paths)
    assert set(bounds) == set(LEVEL_NAMES)
    variants = {name.split("-Sokoban-")[1] for name in LEVEL_NAMES}
    assert {"small-v0", "small-v1", "v0", "v1", "v2", "large-v0", "huge-v0"} <= variants
    assert len({Path(p).stem.split("-Sokoban-")[1] for p in mini_paths}) >= 6
    for relative in all_paths:
        assert relative.startswith("resources/Sokoban/") and relative.endswith(".pkl")
        name = Path(relative).stem
        assert (SOKOBAN / f"{name}.pkl").is_file()
        assert (SOKOBAN / f"{name}.txt").is_file()
        assert (SOKOBAN / f"img-{name}.jpg").is_file()
        entry = bounds[name]
        assert set(entry) == {"actions", "steps", "reward"} and len(entry["actions"]) == entry["steps"] <= 45


@pytest.mark.parametrize("name", LEVEL_NAMES)
def test_a_pickled_fixture_level_equals_its_text_grid(name):
    env = load_pickled_env(SOKOBAN / f"{name}.pkl")
    text = (SOKOBAN / f"{name}.txt").read_text()
    assert grid_from_env(env) == normalize_grid(text)
    assert env.num_env_steps == 0
    from_text = env_from_grid(text, max_steps=env.max_steps)
    assert np.array_equal(from_text.room_fixed, env.room_fixed)
    assert np.array_equal(from_text.room_state, env.room_state)
    assert from_text.player_position.tolist() == env.player_position.tolist()
    assert from_text.num_boxes == env.num_boxes and from_text.boxes_on_target == env.boxes_on_target
    # Our cached renderer draws exactly what gym-sokoban draws.
    assert np.array_equal(render_rgb(env.room_fixed, env.room_state), env.render(mode="rgb_array"))


@pytest.mark.parametrize("name", LEVEL_NAMES[::5])
def test_a_level_built_from_its_grid_plays_exactly_like_the_pickled_one(name):
    pickled = load_pickled_env(SOKOBAN / f"{name}.pkl")
    built = env_from_grid((SOKOBAN / f"{name}.txt").read_text(), max_steps=pickled.max_steps)
    rng = random.Random(name)
    for _ in range(60):
        action = rng.randint(1, 4)
        a = pickled.step(action, observation_mode="tiny_rgb_array")
        b = built.step(action, observation_mode="tiny_rgb_array")
        assert a[1:3] == b[1:3]
        assert np.array_equal(pickled.room_state, built.room_state)
        if a[2]:
            break


def test_a_scenario_loads_from_its_pkl_when_present_and_from_its_grid_otherwise(tmp_path):
    name = LEVEL_NAMES[0]
    grid = (SOKOBAN / f"{name}.txt").read_text()
    with_pkl = ScenarioSpec("sokoban", name, {"grid": "#####\n#@$.#\n#####"}, SOKOBAN / f"{name}.pkl")
    assert grid_from_env(load_scenario_env(with_pkl)) == normalize_grid(grid)
    without = ScenarioSpec("sokoban", name, {"grid": grid, "max_steps": 33}, tmp_path / "missing.pkl")
    env = load_scenario_env(without)
    assert grid_from_env(env) == normalize_grid(grid) and env.max_steps == 33
    with pytest.raises(ValueError):
        load_scenario_env(ScenarioSpec("sokoban", "none", {}))


def test_a_grid_with_a_box_already_on_a_target_pays_no_phantom_reward_on_the_first_step():
    env = env_from_grid(SAMPLE)
    _, reward, done, _ = env.step(2)  # Down from the top-left target: a plain move
    assert reward == pytest.approx(-0.1) and not done
