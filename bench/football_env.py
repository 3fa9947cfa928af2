"""Football episode cost and auto-rendering, measured in one run on the project's fixture scenarios.

    .venv/bin/python bench/football_env.py [--episodes-per-scenario N]

Prints:
* the wall time of platform episodes (``FootballEpisode``: dense reward, auto-rendering, raw
  observations kept for the replay, frames colour-corrected and resized for the model) against the
  same engine actions replayed on a bare gfootball ``FootballEnv`` that renders at the same points
  (the frames the model needs), as a ratio (target ≤ 1.2);
* the same comparison for an agent that reads no images (no renders on either side);
* model calls and engine steps per episode for the random agent, served over HTTP by the baseline
  server, with and without auto-rendering.
Only measured numbers are printed; nothing here asserts on time.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evaluators.base import ScenarioSpec, default_environments, load_plugins  # noqa: E402
from evaluators.football.engine import ACTION_CODES, make_env  # noqa: E402
from evaluators.football.env import ACCEPTED_ACTIONS, FootballEpisode  # noqa: E402
from evaluators.football.resources import discover_football  # noqa: E402

RESOURCES = ROOT / "fixtures" / "magebench" / "resources"


def platform_episode(scenario: dict, seed: int, images: bool, rng: random.Random) -> tuple[float, list[str], list[int]]:
    """Play random decisions; return the wall time, the engine actions and after which engine steps a frame was made."""
    episode = FootballEpisode(scenario=scenario, seed=seed, render_observations=images)
    started = time.perf_counter()
    episode.reset()
    render_points = [0] if images else []
    while not episode.done:
        episode.step(rng.choice(ACCEPTED_ACTIONS))
        if images:
            render_points.append(len(episode.records))
    elapsed = time.perf_counter() - started
    actions = [r["action"] for r in episode.records]
    episode.close()
    return elapsed, actions, render_points


def raw_episode(scenario: dict, seed: int, actions: list[str], render_points: list[int]) -> tuple[float, int, int]:
    """The same engine actions on a bare FootballEnv, rendering exactly where the model needed a frame.

    Returns the wall time and the engine steps and renders done: the game is stochastic and
    rendering perturbs it, so the bare run may end earlier than the platform's.
    """
    started = time.perf_counter()
    env = make_env(scenario, seed=seed)
    wanted = set(render_points)
    steps = renders = 0
    if 0 in wanted:
        env.render(mode="rgb_array")
        env.disable_render()
        renders += 1
    for index, action in enumerate(actions, start=1):
        _, _, done, _ = env.step([ACTION_CODES[action]])
        steps += 1
        if index in wanted:
            env.render(mode="rgb_array")
            env.disable_render()
            renders += 1
        if done:
            break
    elapsed = time.perf_counter() - started
    env.close()
    return elapsed, steps, renders


def compare(scenarios: list[ScenarioSpec], per_scenario: int, images: bool) -> None:
    platform_total = raw_total = 0.0
    steps = renders = skipped = 0
    for spec in scenarios:
        for k in range(per_scenario):
            seed = 1000 + k
            elapsed, actions, points = platform_episode(spec.data["scenario"], seed, images, random.Random(seed))
            raw_elapsed, done_steps, done_renders = raw_episode(spec.data["scenario"], seed, actions, points)
            if done_steps != len(actions):
                skipped += 1
                continue  # the bare game diverged and ended early: not the same work, left out
            platform_total += elapsed
            raw_total += raw_elapsed
            steps += len(actions)
            renders += len(points)
    label = "with the model's frames" if images else "no images"
    print(f"  {label:24s} platform {platform_total:7.2f} s   raw gfootball {raw_total:7.2f} s   "
          f"ratio {platform_total / raw_total:.3f}   ({steps} engine steps, {renders} renders, "
          f"{skipped} diverged episodes left out)")


def model_calls(scenarios: list[ScenarioSpec], per_scenario: int) -> None:
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import start_server
    from evaluators.endpoints.client import ChatClient
    from evaluators.runner import effective_settings, run_attempt

    with start_server(make_agent("random", seed=5)) as server, ChatClient(server.url, model="random") as client:
        for auto in (True, False):
            calls, steps, walls = [], [], []
            for spec in scenarios:
                for k in range(per_scenario):
                    settings = effective_settings("football", "online", {
                        "observation_images": False, "seed": 2000 + k, "auto_render": auto})
                    started = time.perf_counter()
                    with tempfile.TemporaryDirectory() as out:
                        result = run_attempt(scenario=spec, flow="online", settings=settings, model=client,
                                             out_dir=Path(out))
                    walls.append(time.perf_counter() - started)
                    calls.append(result.model_calls)
                    steps.append(result.details["engine_steps"])
            label = "with auto-rendering" if auto else "without auto-rendering"
            print(f"  {label:24s} model calls/episode {statistics.mean(calls):6.1f}   engine steps/episode "
                  f"{statistics.mean(steps):6.1f}   calls per engine step {sum(calls) / sum(steps):.2f}   "
                  f"wall {statistics.mean(walls):.2f} s/episode   ({len(calls)} episodes)")


def main() -> None:
    load_plugins(default_environments())  # plain Python: no Django app loads them here
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes-per-scenario", type=int, default=2)
    args = parser.parse_args()
    found = discover_football(RESOURCES)
    mini = [ScenarioSpec(env="football", key=s.key, data=s.data) for s in found if s.in_mini]
    # The first frame of a process starts gfootball's renderer (EGL, shaders, textures): a one-off
    # per worker process, measured apart so that it does not blur the per-episode ratio.
    started = time.perf_counter()
    warm = FootballEpisode(scenario=mini[0].data["scenario"], seed=1)
    warm.reset()
    warm.close()
    print(f"football mini set ({len(mini)} scenarios), random decisions, {args.episodes_per_scenario} episodes each")
    print(f"  renderer start-up (once per worker process): {time.perf_counter() - started:.1f} s")
    print("episode wall time, platform against raw gfootball (same engine actions, same render points):")
    compare(mini, args.episodes_per_scenario, images=True)
    compare(mini, args.episodes_per_scenario, images=False)
    print("random agent over HTTP (no images):")
    model_calls(mini, args.episodes_per_scenario * 3)


if __name__ == "__main__":
    main()
