"""One Football episode: gfootball steps, the official dense reward and auto-rendering (reference §2.3).

A model *decision* (one ``step`` call) may execute several engine steps:

* the first decision of an episode is always one engine step;
* a move (codes 1–8) in the same direction as the previous decision repeats while the path stays
  clear, at most ``MAX_AUTO_STEPS`` engine steps in all ("move" segment);
* a pass or shot (codes 9–12) while someone holds the ball alternates the action with the last
  direction while the passer still holds the ball, then lets gfootball's built-in AI play while the
  ball is loose, until someone receives it ("pass" segment);
* anything else is one engine step.

The model sees only the frame after the last engine step of a decision; every engine step's raw
observation, action and reward terms are kept for the replay. Frames are rendered only for the
model (and never when the submission's endpoint reads no images).
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from evaluators.base import Episode, Observation, ScenarioSpec, StepResult
from evaluators.football.engine import ACTION_CODES, ACTION_NAMES, BUILTIN_AI, Engine, colour_fix
from evaluators.football.reward import PASS_ACTIONS, SHOT_ACTION, TERM_NAMES, DenseReward
from evaluators.images import resize_longest_side

MAX_AUTO_STEPS = 10
MOVE_MIN_DISTANCE = 0.01
LOOKAHEAD = 3
EXTRAPOLATION_STEPS = 6  # i = 0..5
FIELD_X = 1.0
FIELD_Y = 0.42
#: A pass segment ends when the ball is received; the game clock bounds it anyway (400 steps).
MAX_PASS_SEGMENT = 400
DEFAULT_RESOLUTION = 1280
OBSERVATION_TEXT = "Current game scene:"
ARTIFACT_NAME = "football.json"

MOVE_ACTIONS = frozenset(range(1, 9))
#: The official action names (FootballAction): the engine's name prefixed with "action_", all 20 codes.
OFFICIAL_ACTION_CODES = {f"action_{name}": code for name, code in ACTION_CODES.items()}
#: The 16 names the official Online parser accepts (reference §2.3): not idle, sliding, release_direction,
#: builtin_ai, and never a bare name without the prefix.
ACCEPTED_ACTIONS = tuple(f"action_{name}" for name in (
    "left", "top_left", "top", "top_right", "right", "bottom_right", "bottom", "bottom_left",
    "long_pass", "high_pass", "short_pass", "shot", "sprint", "release_sprint", "dribble", "release_dribble",
))


class EpisodeOver(RuntimeError):
    """A step was requested after the episode ended."""


def _owner_state(observation: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Position and direction used by the clear-path test: the owner's when owned, else the ball's."""
    team = int(observation["ball_owned_team"])
    player = int(observation["ball_owned_player"])
    if team == 0 and player >= 0:
        return (np.asarray(observation["left_team"][player], dtype=float),
                np.asarray(observation["left_team_direction"][player], dtype=float))
    if team == 1 and player >= 0:
        return (np.asarray(observation["right_team"][player], dtype=float),
                np.asarray(observation["right_team_direction"][player], dtype=float))
    return (np.asarray(observation["ball"], dtype=float)[:2],
            np.asarray(observation["ball_direction"], dtype=float)[:2])


def path_is_clear(observation: dict[str, Any]) -> bool:
    """The official test for continuing a move: still on the pitch 3 steps ahead, and no opponent
    within MOVE_MIN_DISTANCE of our extrapolated position over the next 6 steps."""
    position, direction = _owner_state(observation)
    ahead = position + LOOKAHEAD * direction
    if not (-FIELD_X < ahead[0] < FIELD_X and -FIELD_Y < ahead[1] < FIELD_Y):
        return False
    opponents = np.asarray(observation["right_team"], dtype=float).reshape(-1, 2)
    directions = np.asarray(observation["right_team_direction"], dtype=float).reshape(-1, 2)
    for i in range(EXTRAPOLATION_STEPS):
        ours = position + i * direction
        theirs = opponents + i * directions
        if len(theirs) and float(np.min(np.linalg.norm(theirs - ours, axis=1))) < MOVE_MIN_DISTANCE:
            return False
    return True


def _compact(observation: dict[str, Any]) -> dict[str, Any]:
    """The raw observation fields the replay draws, rounded for storage."""
    def points(value: Any) -> list[list[float]]:
        return np.round(np.asarray(value, dtype=float).reshape(-1, 2), 4).tolist()

    return {
        "ball": np.round(np.asarray(observation["ball"], dtype=float), 4).tolist(),
        "ball_direction": np.round(np.asarray(observation["ball_direction"], dtype=float), 4).tolist(),
        "ball_owned_team": int(observation["ball_owned_team"]),
        "ball_owned_player": int(observation["ball_owned_player"]),
        "active": int(observation.get("active", -1)),
        "left_team": points(observation["left_team"]),
        "right_team": points(observation["right_team"]),
        "left_team_direction": points(observation["left_team_direction"]),
        "right_team_direction": points(observation["right_team_direction"]),
        "score": [int(s) for s in observation["score"]],
        "game_mode": int(observation["game_mode"]),
        "steps_left": int(observation["steps_left"]),
    }


def _term_sums(records: list[dict[str, Any]]) -> dict[str, float]:
    """Each reward term summed over engine-step records."""
    return {name: round(sum(record["terms"][name] for record in records), 6) for name in TERM_NAMES}


@dataclass
class _Segment:
    decision: int
    action: str
    mode: str
    first_step: int
    last_step: int = 0


@dataclass
class FootballEpisode(Episode):
    scenario: dict[str, Any]
    seed: int
    resolution: int = DEFAULT_RESOLUTION
    render_observations: bool = True
    auto_render: bool = True
    engine: Engine | None = None
    rewards: DenseReward = field(default_factory=DenseReward)
    records: list[dict[str, Any]] = field(default_factory=list)
    segments: list[_Segment] = field(default_factory=list)
    initial: dict[str, Any] | None = None
    done: bool = False
    outcome: str = "running"
    previous_action: int | None = None
    last_direction: int | None = None
    renders: int = 0

    @classmethod
    def from_scenario(cls, scenario: ScenarioSpec, settings: dict[str, Any]) -> "FootballEpisode":
        seed = settings.get("seed")
        return cls(
            scenario=scenario.data["scenario"],
            seed=int(seed) if seed is not None else random.SystemRandom().randrange(2_000_000_000),
            resolution=int(settings.get("resolution", DEFAULT_RESOLUTION)),
            render_observations=bool(settings.get("observation_images", True)),
            auto_render=bool(settings.get("auto_render", True)),
        )

    # -- Episode interface --------------------------------------------------------------------

    def reset(self) -> Observation:
        self.close()
        self.engine = Engine(self.scenario, seed=self.seed)
        self.rewards = DenseReward()
        self.records, self.segments = [], []
        self.done, self.outcome = False, "running"
        self.previous_action = self.last_direction = None
        self.initial = _compact(self.engine.observation)
        return self._observe()

    def step(self, action: Any) -> StepResult:
        if self.engine is None:
            raise RuntimeError("reset() the Football episode before stepping it")
        if self.done:
            raise EpisodeOver("the Football episode is over; no further steps are allowed")
        code = OFFICIAL_ACTION_CODES.get(action) if isinstance(action, str) else None
        if code is None:
            raise ValueError(f"unknown Football action {action!r}")
        before = self.engine.observation
        segment = _Segment(decision=len(self.segments) + 1, action=action, mode="single", first_step=len(self.records) + 1)
        first_decision = self.previous_action is None
        total = self._engine_step(code, segment)
        if self.auto_render and not first_decision and not self.done:
            if code in MOVE_ACTIONS and code == self.previous_action:
                segment.mode = "move"
                total += self._continue_move(code, segment)
            elif code in PASS_ACTIONS | {SHOT_ACTION} and int(before["ball_owned_team"]) != -1:
                segment.mode = "pass"
                total += self._continue_pass(code, int(before["ball_owned_team"]),
                                             int(before["ball_owned_player"]), segment)
        if code in MOVE_ACTIONS:
            self.last_direction = code
        self.previous_action = code
        segment.last_step = len(self.records)
        self.segments.append(segment)
        observation = self._observe()
        after = self.engine.observation
        return StepResult(
            observation=observation,
            reward=total,
            done=self.done,
            info={
                "engine_steps": segment.last_step - segment.first_step + 1,
                "mode": segment.mode,
                "cumulative": round(self.rewards.total, 6),
                "terms": _term_sums(self.records[segment.first_step - 1: segment.last_step]),
                "changed": self._changed(before, after),
                "outcome": self.outcome,
            },
        )

    def render(self) -> Image.Image:
        assert self.engine is not None
        self.renders += 1
        return resize_longest_side(colour_fix(self.engine.frame()), self.resolution)

    def score(self) -> float:
        return round(self.rewards.total, 6)

    def running_score(self) -> float | None:
        return self.score()

    def score_details(self) -> dict[str, Any]:
        final = self.records[-1]["observation"] if self.records else self.initial or {}
        return {
            # Still running here means the flow's decision budget (max_loop) ran out first.
            "outcome": self.outcome if self.done else "decision_limit",
            "terms": _term_sums(self.records),
            "engine_steps": len(self.records),
            "decisions": len(self.segments),
            "auto_steps": sum(1 for r in self.records if r["auto"]),
            "renders": self.renders,
            "score_line": final.get("score", [0, 0]),
            "seed": self.seed,
        }

    def save_artifacts(self, directory: Path) -> dict[str, Any]:
        document = {
            "kind": "football",
            "seed": self.seed,
            "initial": self.initial,
            "term_names": list(TERM_NAMES),
            "steps": self.records,
            "segments": [vars(s) for s in self.segments],
        }
        (directory / ARTIFACT_NAME).write_text(json.dumps(document, separators=(",", ":")))
        return {"kind": "football", "file": ARTIFACT_NAME, "engine_steps": len(self.records),
                "segments": len(self.segments)}

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None

    # -- internals ----------------------------------------------------------------------------

    def _observe(self) -> Observation:
        if not self.render_observations:
            return Observation(text=OBSERVATION_TEXT)
        return Observation(text=OBSERVATION_TEXT, image=self.render())

    def _engine_step(self, code: int, segment: _Segment, auto: bool = False) -> float:
        assert self.engine is not None
        observation, done = self.engine.step(code)
        terms = self.rewards.update(observation, code)
        if terms.stolen:
            self.outcome = "stolen"
        if self.rewards.task_done or done:
            self.done = True
            if self.outcome == "running":
                self.outcome = self._end_reason(observation)
        self.records.append({
            "t": len(self.records) + 1,
            "decision": segment.decision,
            "action": ACTION_NAMES[code],
            "auto": auto,
            "mode": segment.mode,
            "terms": {name: round(value, 6) for name, value in terms.as_dict().items()
                      if name in TERM_NAMES},
            "pass_clearance": terms.pass_clearance,
            "shot_clearance": terms.shot_clearance,
            "reward": round(terms.total, 6),
            "cumulative": round(self.rewards.total, 6),
            "observation": _compact(observation),
        })
        return terms.total

    def _end_reason(self, observation: dict[str, Any]) -> str:
        if int(observation["score"][0]) > 0:
            return "scored"
        if int(observation["score"][1]) > 0:
            return "conceded"
        if int(observation["steps_left"]) <= 0:
            return "time_up"
        if int(observation["ball_owned_team"]) == 1:
            return "possession_lost"
        if int(observation["game_mode"]) != 0:
            return "out_of_play"
        return "ended"

    def _continue_move(self, code: int, segment: _Segment) -> float:
        total = 0.0
        steps = 1
        while steps < MAX_AUTO_STEPS and not self.done and path_is_clear(self.engine.observation):
            total += self._engine_step(code, segment, auto=True)
            steps += 1
        return total

    def _continue_pass(self, code: int, passer_team: int, passer: int, segment: _Segment) -> float:
        total = 0.0
        steps = 1
        alternate = self.last_direction if self.last_direction is not None else ACTION_CODES["idle"]
        turn = 1
        while not self.done and steps < MAX_PASS_SEGMENT:
            observation = self.engine.observation
            team, player = int(observation["ball_owned_team"]), int(observation["ball_owned_player"])
            if team == passer_team and player == passer:
                # The passer still holds the ball: keep asking for the pass, with the last direction between.
                total += self._engine_step(code if turn % 2 == 0 else alternate, segment, auto=True)
                turn += 1
            elif team == -1:
                total += self._engine_step(BUILTIN_AI, segment, auto=True)
            else:
                break  # someone received the ball: the model decides again
            steps += 1
        return total

    @staticmethod
    def _changed(before: dict[str, Any], after: dict[str, Any]) -> bool:
        """Whether the decision moved the game on for the RA diagnostic: the ball moved or changed hands."""
        moved = float(np.linalg.norm(np.asarray(after["ball"], dtype=float)[:2] - np.asarray(before["ball"], dtype=float)[:2]))
        owner_changed = (int(after["ball_owned_team"]), int(after["ball_owned_player"])) != (
            int(before["ball_owned_team"]), int(before["ball_owned_player"]))
        return moved > 0.005 or owner_changed
