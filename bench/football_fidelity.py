"""Football scoring fidelity: how far each rule change moves the scores, measured in one run.

    .venv/bin/python bench/football_fidelity.py [--episodes-per-scenario N] [--legacy-rev REV] [--rendering]

Random decisions (uniform over the 16 accepted actions, seeded) on every fixture scenario, without
images, so that a seed replays an episode exactly. For every (scenario, seed) it plays:

* the official rules (``FootballEpisode`` with its defaults);
* the platform's rules at revision ``REV`` (reward and auto-rendering read from git history), with
  the same engine seed and the same decisions;
* the rules at ``REV`` for auto-rendering with today's official reward, to split the two changes.

On the official games it also scores, step by step on the same observations, the reward of ``REV``
and the non-default variant ``shot-held-until-received``, and re-computes each scored shot with the
old sampling of the shot line (``linspace(0, 1, 100)``, ball included).

Each comparison prints how many episodes differ, the mean difference per episode (new − old) with
its standard error, the mean absolute difference and the largest one.

``--rendering`` also plays a few fixed action sequences three ways on the same seed: rendering every
engine step (the official env renders every step), rendering only at decision points (the
platform, every third step here) and never rendering (an endpoint that reads no images); it prints
the first engine step at which the games part and the mean absolute pixel difference between the
official frame and the platform's at each decision point. Rendering costs about 0.5 s a frame.

Only measured numbers are printed; nothing asserts.
"""
from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evaluators.football import reward as official_reward  # noqa: E402
from evaluators.football.engine import make_env  # noqa: E402
from evaluators.football.env import ACCEPTED_ACTIONS, FootballEpisode  # noqa: E402
from evaluators.football.resources import discover_football  # noqa: E402

RESOURCES = ROOT / "fixtures" / "magebench" / "resources"
#: The last revision whose Football rules kept the shot flag until a new holder, sampled the ball
#: itself on the shot line and remembered the first decision for auto-rendering.
LEGACY_REV = "f8e65372e572267da4c56c83ed9c68e9ad0b4d01"
#: The official Online flow allows at most 400 model calls.
MAX_DECISIONS = 400
#: Scores are reported rounded to 6 decimals; a smaller difference is rounding, not a rule.
SAME = 2e-6


def load_legacy(rev: str) -> tuple[types.ModuleType, types.ModuleType]:
    """The reward and episode modules of ``rev``, from git history, as fresh modules."""
    def source(path: str) -> str:
        return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True,
                              text=True).stdout

    modules = []
    for name, path in (("legacy_football_reward", "evaluators/football/reward.py"),
                       ("legacy_football_env", "evaluators/football/env.py")):
        module = types.ModuleType(name)
        module.__file__ = f"{rev[:8]}:{path}"
        sys.modules[name] = module  # dataclasses look their module up while building the classes
        exec(compile(source(path), module.__file__, "exec"), module.__dict__)  # noqa: S102 - our own history
        modules.append(module)
    return modules[0], modules[1]


def legacy_shot_clearance(ball: Any, right_team: Any) -> float:
    """The shot clearance as the platform computed it before: 100 samples from the ball itself."""
    position = np.asarray(ball, dtype=float)[:2]
    team = np.asarray(right_team, dtype=float).reshape(-1, 2)
    fractions = np.linspace(0.0, 1.0, official_reward.SHOT_SAMPLES)[:, None]
    best = 0.0
    for y in official_reward.GOAL_POINTS_Y:
        samples = position + fractions * (np.array([1.0, y]) - position)
        best = max(best, float(np.linalg.norm(samples[:, None, :] - team[None, :, :], axis=2).min()))
    return best


@dataclass
class Shadow:
    """A reward machine fed the same engine steps as an episode, until its own task ends."""

    machine: Any
    stopped: bool = False
    #: The episode ended while this machine's task went on (its game would have continued).
    cut_short: bool = False

    def feed(self, observation: dict[str, Any], code: int) -> None:
        if not self.stopped:
            self.machine.update(observation, code)
            self.stopped = bool(self.machine.task_done)

    @property
    def total(self) -> float:
        return round(float(self.machine.total), 6)


@dataclass
class Official:
    score: float
    steps: int
    shadows: dict[str, Shadow]
    shots: int = 0
    shots_changed: int = 0
    shot_sampling_delta: float = 0.0


def play(episode: Any, actions: tuple[str, ...], seed: int,
         on_step: Callable[[dict[str, Any], int, bool], None] | None = None) -> Any:
    """Random decisions until the episode ends (or the official 400 model calls are used)."""
    rng = random.Random(seed)
    episode.reset()
    if on_step is not None:
        engine_step = episode.engine.step

        def observed(code: int) -> tuple[dict[str, Any], bool]:
            observation, done = engine_step(code)
            on_step(observation, code, done)
            return observation, done

        episode.engine.step = observed
    decisions = 0
    while not episode.done and decisions < MAX_DECISIONS:
        # The index, not the name: the vocabulary of REV may spell the actions differently.
        episode.step(actions[rng.randrange(len(actions))])
        decisions += 1
    return episode


def official_episode(scenario: dict[str, Any], seed: int, legacy_reward: types.ModuleType) -> Official:
    shadows = {
        "legacy reward": Shadow(legacy_reward.DenseReward()),
        "shot-held variant": Shadow(official_reward.DenseReward(variant=official_reward.SHOT_HELD_UNTIL_RECEIVED)),
    }
    result = Official(score=0.0, steps=0, shadows=shadows)
    positions: list[tuple[np.ndarray, np.ndarray]] = []
    last_done = [False]

    def on_step(observation: dict[str, Any], code: int, done: bool) -> None:
        for shadow in shadows.values():
            shadow.feed(observation, code)
        positions.append((np.array(observation["ball"][:2], dtype=float),
                          np.array(observation["right_team"], dtype=float)))
        last_done[0] = done

    episode = FootballEpisode(scenario=scenario, seed=seed, render_observations=False)
    try:
        play(episode, ACCEPTED_ACTIONS, seed, on_step)
        for shadow in shadows.values():
            # The official task ended (stolen) while the engine's game and this machine's task went on.
            shadow.cut_short = episode.done and not last_done[0] and not shadow.stopped
        result.score, result.steps = episode.score(), len(episode.records)
        for record, (ball, right_team) in zip(episode.records, positions):
            if record["shot_clearance"] is None:
                continue
            result.shots += 1
            old = legacy_shot_clearance(ball, right_team)
            new = float(record["shot_clearance"])
            result.shots_changed += old != new
            result.shot_sampling_delta += _shot_term(new, ball) - _shot_term(old, ball)
    finally:
        episode.close()
    return result


def _shot_term(clearance: float, ball: np.ndarray) -> float:
    capped = min(official_reward.LAMBDA_SHOT * clearance * official_reward.shot_distance(ball),
                 official_reward.SHOT_CAP)
    return capped * official_reward.SCALING


def legacy_episode(scenario: dict[str, Any], seed: int, legacy_env: Any,
                   reward_class: type) -> float:
    legacy_env.DenseReward = reward_class  # the episode builds its reward machine from this name at reset
    episode = legacy_env.FootballEpisode(scenario=scenario, seed=seed, render_observations=False)
    try:
        play(episode, legacy_env.ACCEPTED_ACTIONS, seed)
        return float(episode.score())
    finally:
        episode.close()


@dataclass
class Comparison:
    label: str
    pairs: list[tuple[float, float]] = field(default_factory=list)  # (old, new)

    def report(self) -> str:
        deltas = [new - old for old, new in self.pairs]
        differ = sum(1 for d in deltas if abs(d) > SAME)
        largest = max(deltas, key=abs) if deltas else 0.0
        error = statistics.stdev(deltas) / len(deltas) ** 0.5 if len(deltas) > 1 else 0.0
        return (f"  {self.label:58s} {differ:3d}/{len(deltas)} differ   mean {statistics.mean(deltas):+7.3f} "
                f"± {error:5.3f}   "
                f"mean |Δ| {statistics.mean(abs(d) for d in deltas):6.3f}   largest {largest:+8.3f}   "
                f"(old mean {statistics.mean(o for o, _ in self.pairs):6.3f}, "
                f"new {statistics.mean(n for _, n in self.pairs):6.3f})")


RENDER_CHECKS = (("R5_R_1", 11), ("R3_R_1", 12), ("R9_T_1", 13))
RENDER_STEPS = 24
DECISION_EVERY = 3


def _rendered_game(scenario: dict[str, Any], seed: int, codes: list[int],
                   mode: str) -> tuple[list[tuple[Any, ...]], dict[int, np.ndarray]]:
    """The positions after every engine step and the frames at the decision points.

    ``mode``: "every" keeps gfootball rendering on through every step, as the official env does
    after its first render; "decisions" renders the first frame and one after every decision, as
    the platform does; "never" renders nothing.
    """
    env = make_env(scenario, seed=seed)
    positions: list[tuple[Any, ...]] = []
    frames: dict[int, np.ndarray] = {}
    try:
        if mode != "never":
            env.render(mode="rgb_array")
            if mode == "decisions":
                env.disable_render()
        for step, code in enumerate(codes, start=1):
            observations, _, done, _ = env.step([code])
            observation = observations[0]
            positions.append((observation["ball"].tobytes(), observation["left_team"].tobytes(),
                              observation["right_team"].tobytes(), int(observation["ball_owned_player"])))
            if step % DECISION_EVERY == 0:
                if mode == "every":
                    frames[step] = observation["frame"].astype(int)
                elif mode == "decisions":
                    frames[step] = env.render(mode="rgb_array")[..., ::-1].astype(int)
                    env.disable_render()
            if done:
                break
    finally:
        env.close()
    return positions, frames


def rendering_report(scenarios: dict[str, dict[str, Any]]) -> None:
    def parting(a: list[Any], b: list[Any]) -> str:
        for step, (x, y) in enumerate(zip(a, b), start=1):
            if x != y:
                return f"step {step}"
        return "never" if len(a) == len(b) else f"step {min(len(a), len(b)) + 1}"

    print(f"rendering ({len(RENDER_CHECKS)} fixed sequences of {RENDER_STEPS} engine steps, a decision every "
          f"{DECISION_EVERY} steps):")
    # Moves, short pass, sprint and dribble: actions that keep a random game going for a while.
    moves = [1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 17]
    for key, seed in RENDER_CHECKS:
        rng = random.Random(seed)
        codes = [rng.choice(moves) for _ in range(RENDER_STEPS)]
        every, official_frames = _rendered_game(scenarios[key], seed, codes, "every")
        decisions, platform_frames = _rendered_game(scenarios[key], seed, codes, "decisions")
        never, _ = _rendered_game(scenarios[key], seed, codes, "never")
        pixels = [float(np.abs(official_frames[s] - platform_frames[s]).mean())
                  for s in sorted(set(official_frames) & set(platform_frames))]
        print(f"  {key} seed {seed}: games part, every step vs decisions: {parting(every, decisions)}; "
              f"decisions vs never: {parting(decisions, never)}; mean |pixel difference| official vs platform "
              f"frame: {', '.join(f'{p:.2f}' for p in pixels)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes-per-scenario", type=int, default=5)
    parser.add_argument("--legacy-rev", default=LEGACY_REV)
    parser.add_argument("--rendering", action="store_true", help="also measure the rendering deviations")
    args = parser.parse_args()
    legacy_reward, legacy_env = load_legacy(args.legacy_rev)
    scenarios = discover_football(RESOURCES)
    same_game = {key: Comparison(label) for key, label in (
        ("legacy reward", f"reward of {args.legacy_rev[:8]} → official (same games)"),
        ("shot-held variant", "shot-held-until-received variant → official (same games)"),
    )}
    sampling = Comparison("shot-line samples from the ball → k/100 (same games)")
    auto = Comparison(f"auto-rendering of {args.legacy_rev[:8]} → official (official reward)")
    overall = Comparison(f"all Football rules of {args.legacy_rev[:8]} → official")
    shots = shots_changed = cut_short = 0
    steps: list[int] = []
    for index, spec in enumerate(scenarios):
        for k in range(args.episodes_per_scenario):
            seed = 1000 * (index + 1) + k
            scenario = spec.data["scenario"]
            result = official_episode(scenario, seed, legacy_reward)
            steps.append(result.steps)
            for key, comparison in same_game.items():
                comparison.pairs.append((result.shadows[key].total, result.score))
                cut_short += result.shadows[key].cut_short
            sampling.pairs.append((result.score - result.shot_sampling_delta, result.score))
            shots += result.shots
            shots_changed += result.shots_changed
            auto.pairs.append((legacy_episode(scenario, seed, legacy_env, official_reward.DenseReward), result.score))
            overall.pairs.append((legacy_episode(scenario, seed, legacy_env, legacy_reward.DenseReward), result.score))
    episodes = len(overall.pairs)
    print(f"football fixtures ({len(scenarios)} scenarios × {args.episodes_per_scenario} seeds = {episodes} "
          f"episodes), random decisions, no images; {statistics.mean(steps):.1f} engine steps per official episode")
    for comparison in (*same_game.values(), sampling, auto, overall):
        print(comparison.report())
    print(f"  scored shots {shots}, of which {shots_changed} change clearance with the sampling; "
          f"same-game machines whose task outlived the official episode: {cut_short}")
    if args.rendering:
        rendering_report({spec.key: spec.data["scenario"] for spec in scenarios})


if __name__ == "__main__":
    main()
