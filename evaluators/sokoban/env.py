"""One Sokoban episode: gym-sokoban dynamics with the official MageBench bookkeeping (reference §2.2).

The episode drives the *unwrapped* gym-sokoban ``SokobanEnv`` directly, as the official code does
with its pickled levels, rather than an environment made by ``gym.make``. With the pinned
gym 0.26.2 and numpy 2 the wrappers break:

* ``gym.make`` adds ``PassiveEnvChecker`` by default. On the first ``step()`` it checks the result
  with ``isinstance(done, (bool, np.bool8))``; numpy 2 removed ``np.bool8``, so that call raises
  ``AttributeError`` *after* gym-sokoban has already applied the action (the checker accepts 4- and
  5-tuples alike, so both fail). Later steps skip the check, so the failure is easy to miss.
* gym-sokoban's ``step`` returns the old 4-tuple ``(obs, reward, done, info)``. gym 0.26's
  ``TimeLimit`` wrapper (added when ``max_episode_steps`` is given; gym-sokoban registers none)
  unpacks five values and fails with ``ValueError``. Only ``apply_api_compatibility=True`` would
  convert it.

gym-sokoban's own environment needs neither, so nothing is lost by going around them. The episode
calls its ``step`` with ``observation_mode='tiny_rgb_array'``: the dynamics and rewards are
identical, and the cheap tiny frame it builds is thrown away (frames come from :meth:`render`).

Bookkeeping: r_t from gym-sokoban, A_t = Σ r, B_t = max(B_{t−1}, A_t) with B_0 = 0, done from
gym-sokoban (all boxes on targets, or ``num_env_steps`` reaching ``max_steps`` — gym-sokoban tests
equality, so the episode refuses further steps itself). Score = 100 + 5·(B_T − R_ub). Rewards are
multiples of 0.1, so sums are kept in integer tenths to avoid float drift (a perfect run scores
exactly 100).
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np
from PIL import Image

from evaluators.base import Episode, Observation, ScenarioSpec, StepResult
from evaluators.images import resize_longest_side
from evaluators.settings import EvaluationSettings
from evaluators.sokoban.levels import (
    BOX_ON_TARGET,
    DEFAULT_MAX_STEPS,
    env_from_grid,
    load_pickled_env,
    render_rgb,
    unwrap_env,
)

ACTIONS = ("Up", "Down", "Left", "Right")
#: gym-sokoban's "push" codes; a push action moves the player when there is no box to push.
ACTION_CODES = {"Up": 1, "Down": 2, "Left": 3, "Right": 4}
DEFAULT_RESOLUTION = 640


class EpisodeOver(RuntimeError):
    """A step was requested after the episode ended."""


def _tenths(value: float) -> int:
    return int(round(float(value) * 10))


def score_from(best_reward: float, upper_bound: float) -> float:
    """The official Sokoban metric 100 + 5·(B_T − R_ub)."""
    return round(100.0 + 5.0 * (float(best_reward) - float(upper_bound)), 6)


def idle_score_from(upper_bound: float) -> float:
    """Score of zero actions: B stays at B_0 = 0."""
    return score_from(0.0, upper_bound)


def load_scenario_env(scenario: ScenarioSpec) -> Any:
    """A fresh gym-sokoban environment for a scenario: its ``.pkl`` when present, else its grid."""
    path = scenario.resource_path
    if path is not None and path.suffix == ".pkl" and path.exists():
        return load_pickled_env(path)
    grid = scenario.data.get("grid")
    if not grid:
        raise ValueError(f"Sokoban scenario {scenario.key!r} has neither a .pkl resource nor a grid")
    return env_from_grid(grid, max_steps=int(scenario.data.get("max_steps", DEFAULT_MAX_STEPS)))


def scenario_upper_bound(scenario: ScenarioSpec) -> float:
    try:
        return float(scenario.data["upper_bound"]["reward"])
    except (KeyError, TypeError):
        raise ValueError(f"Sokoban scenario {scenario.key!r} has no upper_bound.reward") from None


class SokobanEpisode(Episode):
    """One attempt at a level, starting from the state ``env`` is in.

    The episode works on its own copies: the object passed in is never stepped, so one loaded
    level may seed several episodes.
    """

    def __init__(self, env: Any, upper_bound: float, *, resolution: int = DEFAULT_RESOLUTION,
                 render_observations: bool = True) -> None:
        self._initial = copy.deepcopy(unwrap_env(env))
        self.upper_bound = float(upper_bound)
        self.resolution = int(resolution)
        # Scoring an uploaded action list needs no frames; skipping them is much faster.
        self.render_observations = render_observations
        self._env = copy.deepcopy(self._initial)
        self._clear_bookkeeping()

    @classmethod
    def from_scenario(cls, scenario: ScenarioSpec, settings: EvaluationSettings) -> SokobanEpisode:
        return cls(
            load_scenario_env(scenario),
            scenario_upper_bound(scenario),
            resolution=settings.resolution,
            render_observations=settings.observation_images,
        )

    def _clear_bookkeeping(self) -> None:
        #: False once the model is shown no more frames (see ``stop_observing``).
        self.observing = True
        self.done = False
        self.steps = 0
        self._cumulative = 0
        self._best = 0  # B_0 = 0: the empty prefix counts, so a bad first move cannot lower B.
        self.solved = False

    @property
    def env(self) -> Any:
        """The live gym-sokoban environment (read it, don't step it)."""
        return self._env

    @property
    def cumulative_reward(self) -> float:
        return self._cumulative / 10

    @property
    def best_reward(self) -> float:
        return self._best / 10

    def reset(self) -> Observation:
        # Back to the level's initial room, like the official "Restart" (a fresh copy of the pkl).
        self._env = copy.deepcopy(self._initial)
        self._clear_bookkeeping()
        return Observation(text="", image=self.render())

    def step(self, action: Any) -> StepResult:
        if self.done:
            raise EpisodeOver("the Sokoban episode is over; no further steps are allowed")
        code = ACTION_CODES.get(action) if isinstance(action, str) else None
        if code is None:
            raise ValueError(f"unknown Sokoban action {action!r}; expected one of {', '.join(ACTIONS)}")
        env = self._env
        before = env.room_state.copy()
        _, reward, done, info = env.step(code, observation_mode="tiny_rgb_array")
        self.steps += 1
        r = _tenths(reward)
        self._cumulative += r
        self._best = max(self._best, self._cumulative)
        self.done = bool(done)
        self.solved = bool(env._check_if_all_boxes_on_target())
        seen = self.render_observations and self.observing
        observation = Observation(text="", image=self.render() if seen else None)
        return StepResult(
            observation=observation,
            reward=r / 10,
            done=self.done,
            info={
                "reward": r / 10,
                "cumulative": self.cumulative_reward,
                "best": self.best_reward,
                "moved_player": bool(info.get("action.moved_player", False)),
                "moved_box": bool(info.get("action.moved_box", False)),
                "changed": not np.array_equal(before, env.room_state),
                "boxes_on_target": int(np.count_nonzero(env.room_state == BOX_ON_TARGET)),
                "solved": self.solved,
                "steps": self.steps,
            },
        )

    def render_native(self) -> Image.Image:
        """gym-sokoban's own 16-px-per-tile frame."""
        return Image.fromarray(render_rgb(self._env.room_fixed, self._env.room_state))

    def render(self) -> Image.Image:
        return resize_longest_side(self.render_native(), self.resolution)

    def stop_observing(self) -> None:
        self.observing = False

    def replay_frame(self, result: StepResult) -> Image.Image | None:
        # A frame no model sees is kept at gym-sokoban's own size: the replay page scales it up
        # unsmoothed, which shows the same board as the upscaled frame in 1/40 to 1/110 of the bytes
        # (the mini levels at 640 px), and it skips the upscale and a large PNG encoding per step.
        if result.observation.image is not None or not self.render_observations:
            return result.observation.image
        return self.render_native()

    def score(self) -> float:
        return score_from(self.best_reward, self.upper_bound)

    def running_score(self) -> float | None:
        return self.score()

    def score_details(self) -> dict[str, Any]:
        return {
            "best_reward": self.best_reward,
            "cumulative_reward": self.cumulative_reward,
            "upper_bound": self.upper_bound,
            "solved": self.solved,
            "steps": self.steps,
        }
