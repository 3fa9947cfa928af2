"""Sokoban environment and solver cost, measured in one run on the project's fixture levels.

    .venv/bin/python bench/sokoban_env.py [--steps N]

Prints, for the same levels and the same random action sequence:
* raw gym-sokoban ``env.step`` steps/s (its own 4-tuple API; it renders a 16-px frame per step,
  re-reading its sprite PNGs each time), and the same with its cheap ``tiny_rgb_array`` frame,
* ``SokobanEpisode.step`` steps/s without frames and with frames at resolution 640,
  and each episode rate as a ratio of the raw rate;
* the exact solver's wall time and expanded push states on the largest fixture level and its mean
  over all fixture levels.
Only measured numbers are printed; nothing here asserts on time.
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evaluators.sokoban.env import ACTION_CODES, ACTIONS, SokobanEpisode  # noqa: E402
from evaluators.sokoban.levels import grid_from_env, load_pickled_env  # noqa: E402
from evaluators.sokoban.solver import solve_grid  # noqa: E402

RESOURCES = ROOT / "fixtures" / "magebench" / "resources"


def fixture_levels() -> list[tuple[str, Any, float]]:
    names = json.loads((RESOURCES / "Sokoban_all.json").read_text())
    bounds = json.loads((RESOURCES / "Sokoban" / "upper_bound.json").read_text())
    levels = []
    for relative in names:
        path = RESOURCES.parent / relative
        name = path.stem
        levels.append((name, load_pickled_env(path), float(bounds[name]["reward"])))
    return levels


def action_plans(levels: int, per_level: int, seed: int = 7) -> list[list[str]]:
    rng = random.Random(seed)
    return [[rng.choice(ACTIONS) for _ in range(per_level)] for _ in range(levels)]


def raw_rate(levels, plans: list[list[str]], mode: str = "rgb_array") -> float:
    steps = 0
    started = time.perf_counter()
    for (_, pristine, _), plan in zip(levels, plans):
        env = copy.deepcopy(pristine)
        for action in plan:
            _, _, done, _ = env.step(ACTION_CODES[action], observation_mode=mode)
            steps += 1
            if done:
                break
    return steps / (time.perf_counter() - started)


def episode_rate(levels, plans: list[list[str]], render: bool) -> float:
    steps = 0
    started = time.perf_counter()
    for (_, pristine, upper_bound), plan in zip(levels, plans):
        episode = SokobanEpisode(pristine, upper_bound, resolution=640, render_observations=render)
        for action in plan:
            episode.step(action)
            steps += 1
            if episode.done:
                break
    return steps / (time.perf_counter() - started)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Sokoban environment and solver benchmark")
    parser.add_argument("--steps", type=int, default=100, help="random actions per level")
    args = parser.parse_args(argv)

    levels = fixture_levels()
    plans = action_plans(len(levels), args.steps)
    # Warm-up: first calls pay for imports and sprite loading.
    episode_rate(levels[:1], [plans[0][:10]], render=True)
    raw_rate(levels[:1], [plans[0][:10]])

    raw = raw_rate(levels, plans)
    raw_tiny = raw_rate(levels, plans, mode="tiny_rgb_array")
    no_frames = episode_rate(levels, plans, render=False)
    frames = episode_rate(levels, plans, render=True)
    print(f"levels: {len(levels)} fixture levels, up to {args.steps} random actions each")
    rows = [
        ("raw gym-sokoban env.step", raw),
        ("raw env.step, tiny observation mode", raw_tiny),
        ("SokobanEpisode.step, no frames", no_frames),
        ("SokobanEpisode.step, frames at 640", frames),
    ]
    for label, rate in rows:
        print(f"{label + ':':38s}{rate:10.0f} steps/s  ({rate / raw:5.2f}x raw)")

    timings = []
    for name, env, _ in levels:
        grid = grid_from_env(env)
        started = time.perf_counter()
        solution = solve_grid(grid)
        timings.append((name, time.perf_counter() - started, solution.expanded, solution.steps,
                        env.dim_room[0] * env.dim_room[1], env.num_boxes))
    # "Largest": most cells, then most boxes.
    largest = max(timings, key=lambda t: (t[4], t[5], t[1]))
    slowest = max(timings, key=lambda t: t[1])
    mean_time = sum(t[1] for t in timings) / len(timings)
    mean_states = sum(t[2] for t in timings) / len(timings)
    print(f"solver, largest level {largest[0]}: {largest[1] * 1000:8.1f} ms, {largest[2]} expanded states, "
          f"{largest[3]} moves")
    print(f"solver, slowest level {slowest[0]}: {slowest[1] * 1000:8.1f} ms, {slowest[2]} expanded states, "
          f"{slowest[3]} moves")
    print(f"solver, mean over {len(timings)} levels: {mean_time * 1000:8.1f} ms, {mean_states:.0f} expanded states")


if __name__ == "__main__":
    main()
