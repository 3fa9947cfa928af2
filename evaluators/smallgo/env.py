"""One Small Go episode: each Black move of the model is answered by GNU Go's White move.

Score = 100 · Black's area / the board's points, when the episode ends: after two passes in a row
(Black's, then White's), White's resignation, or the scenario's ``max_moves`` Black moves. A move
the engine refuses (an occupied point, suicide, a ko, a point off the board) is played as a pass.
The reward of a step is the change of Black's area.
"""
from __future__ import annotations

from typing import Any

from PIL import Image

from evaluators.base import Episode, Observation, ScenarioSpec, StepResult
from evaluators.images import resize_longest_side
from evaluators.settings import EvaluationSettings

from .board import ACTIONS, BLACK, PASS, WHITE, Position, area_score, point_at, point_name
from .drawing import draw
from .engine import GnuGo

DEFAULT_RESOLUTION = 320
DEFAULT_MAX_MOVES = 20


class EpisodeOver(RuntimeError):
    """A step was requested after the episode ended."""


class SmallGoEpisode(Episode):
    def __init__(self, data: dict[str, Any], *, resolution: int = DEFAULT_RESOLUTION,
                 render_observations: bool = True) -> None:
        self.start = Position.from_rows(data["rows"])
        self.komi = float(data.get("komi", 0.5))
        self.level = int(data.get("level", 1))
        self.seed = int(data.get("seed", 1))
        self.max_moves = int(data.get("max_moves", DEFAULT_MAX_MOVES))
        self.resolution = int(resolution)
        self.render_observations = render_observations
        self._engine: GnuGo | None = None

    @classmethod
    def from_scenario(cls, scenario: ScenarioSpec, settings: EvaluationSettings) -> SmallGoEpisode:
        return cls(scenario.data, resolution=settings.resolution, render_observations=settings.observation_images)

    def _caption(self) -> str:
        size = self.position.size
        last = f"White's last move: {self.white_move}." if self.white_move else "White has not moved yet."
        return f"The board has {size} rows and {size} columns; you play Black. {last}"

    def _observation(self) -> Observation:
        return Observation(text=self._caption(), image=self.render() if self.render_observations else None)

    def reset(self) -> Observation:
        self.close()
        self._engine = GnuGo(size=self.start.size, komi=self.komi, level=self.level, seed=self.seed)
        for colour in (BLACK, WHITE):
            for point in sorted(self.start.stones(colour)):
                self._engine.play(colour, point_name(point, self.start.size))
        self.position = self.start
        self.moves = 0
        self.white_move = ""
        self.resigned = False
        self.done = False
        return self._observation()

    def step(self, action: Any) -> StepResult:
        if self.done or self._engine is None:
            raise EpisodeOver("the Small Go episode is over (or was never reset); no further steps are allowed")
        if action not in ACTIONS:
            raise ValueError(f"unknown Small Go move {action!r}: a point such as C3, or {PASS}")
        legal = action == PASS or (point_at(action, self.start.size) is not None and self._engine.play(BLACK, action))
        self.white_move = self._engine.genmove(WHITE)
        self.moves += 1
        before = self.position
        self.position = Position.from_names(self.start.size, self._engine.stones(BLACK), self._engine.stones(WHITE))
        black_passed = action == PASS or not legal
        self.resigned = self.white_move == "resign"
        self.done = (black_passed and self.white_move == PASS) or self.resigned or self.moves >= self.max_moves
        return StepResult(
            observation=self._observation(),
            reward=float(self.position.area(BLACK) - before.area(BLACK)),
            done=self.done,
            info={"legal": legal, "white": self.white_move, "changed": self.position != before,
                  "black_area": self.position.area(BLACK), "white_area": self.position.area(WHITE)},
        )

    def render(self) -> Image.Image:
        last = point_at(self.white_move, self.start.size) if self.white_move else None
        return resize_longest_side(draw(self.position, last), self.resolution)

    def score(self) -> float:
        return area_score(self.position)

    def running_score(self) -> float | None:
        return self.score()

    def score_details(self) -> dict[str, Any]:
        return {"black_area": self.position.area(BLACK), "white_area": self.position.area(WHITE),
                "moves": self.moves, "white_resigned": self.resigned}

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None
