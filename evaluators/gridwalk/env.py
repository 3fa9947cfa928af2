"""One GridWalk episode: the walker moves square by square until it reaches the goal or runs out of steps.

Score = 100 · max(0, 1 − d_T / d_0), with d the shortest distance to the goal around the walls (d_0
at the start, d_T now). The reward of a step is the distance it gained (1, 0 or −1).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image

from evaluators.base import Episode, Observation, ScenarioSpec, StepResult
from evaluators.gridwalk.drawing import draw
from evaluators.gridwalk.grid import DEFAULT_MAX_STEPS, MOVES, Cell, Level, score_from
from evaluators.images import resize_longest_side
from evaluators.settings import EvaluationSettings

DEFAULT_RESOLUTION = 320
#: The replay panel's material, stored beside the trajectory (``GridWalkPlugin.replay_panel`` reads it).
ARTIFACT_NAME = "walk.json"


class EpisodeOver(RuntimeError):
    """A step was requested after the episode ended."""


def grid_caption(level: Level) -> str:
    # The frame alone does not say how many squares it holds once it is resized.
    return f"The grid has {level.rows} rows and {level.cols} columns."


def level_of(scenario: ScenarioSpec) -> Level:
    return Level.from_rows(scenario.data["grid"], max_steps=int(scenario.data.get("max_steps", DEFAULT_MAX_STEPS)))


class GridWalkEpisode(Episode):
    def __init__(self, level: Level, *, resolution: int = DEFAULT_RESOLUTION, render_observations: bool = True) -> None:
        self.level = level
        self.resolution = int(resolution)
        # A recorded run or an endpoint that reads no images needs no frames.
        self.render_observations = render_observations
        initial = level.distance(level.start)
        assert initial is not None  # Level.from_rows refuses unreachable goals
        self.initial_distance = initial
        self._restart()

    @classmethod
    def from_scenario(cls, scenario: ScenarioSpec, settings: EvaluationSettings) -> GridWalkEpisode:
        return cls(level_of(scenario), resolution=settings.resolution, render_observations=settings.observation_images)

    def _restart(self) -> None:
        self.position: Cell = self.level.start
        # Every square the walker stood on, in order, for the replay's drawing of the walk.
        self.path: list[Cell] = [self.level.start]
        self.steps = 0
        self.done = False

    @property
    def distance(self) -> int:
        distance = self.level.distance(self.position)
        assert distance is not None  # the walker only ever stands on squares joined to the start
        return distance

    @property
    def reached(self) -> bool:
        return self.position == self.level.goal

    def _observation(self) -> Observation:
        return Observation(text=grid_caption(self.level), image=self.render() if self.render_observations else None)

    def reset(self) -> Observation:
        self._restart()
        return self._observation()

    def step(self, action: Any) -> StepResult:
        if self.done:
            raise EpisodeOver("the GridWalk episode is over; no further steps are allowed")
        if action not in MOVES:
            raise ValueError(f"unknown GridWalk move {action!r}; expected one of {', '.join(MOVES)}")
        before, distance_before = self.position, self.distance
        self.position = self.level.moved(self.position, action)
        self.path.append(self.position)
        self.steps += 1
        self.done = self.reached or self.steps >= self.level.max_steps
        reward = distance_before - self.distance
        return StepResult(
            observation=self._observation(),
            reward=float(reward),
            done=self.done,
            info={"position": list(self.position), "distance": self.distance, "changed": self.position != before,
                  "reached": self.reached, "steps": self.steps},
        )

    def render(self) -> Image.Image:
        return resize_longest_side(draw(self.level, self.position), self.resolution)

    def score(self) -> float:
        return score_from(self.distance, self.initial_distance)

    def running_score(self) -> float | None:
        return self.score()

    def score_details(self) -> dict[str, Any]:
        return {"solved": self.reached, "distance": self.distance, "initial_distance": self.initial_distance,
                "steps": self.steps}

    def save_artifacts(self, directory: Path) -> dict[str, Any]:
        document = {"kind": "gridwalk", "grid": self.level.to_rows(), "path": [list(cell) for cell in self.path],
                    "initial_distance": self.initial_distance, "distance": self.distance, "reached": self.reached}
        (directory / ARTIFACT_NAME).write_text(json.dumps(document, separators=(",", ":")))
        return {"kind": "gridwalk", "file": ARTIFACT_NAME, "moves": self.steps}
