"""One Football episode: gfootball steps, the official dense reward and auto-rendering (reference §2.3).

A model *decision* (one ``step`` call) may execute several engine steps, as the official
auto-rendering does:

* the first decision of an episode is one engine step and is not remembered: the auto-acting state
  (previous action none, previous direction right) is created only at the second decision, so a
  repeated move can start a move segment from the third decision on;
* a move (codes 1–8) in the same direction as the previous decision repeats while the path stays
  clear, at most ``MAX_AUTO_STEPS`` engine steps in all ("move" segment);
* a pass or shot (codes 9–12) while someone holds the ball plays (action, last direction) pairs
  while the passer still holds the ball, re-reading the holder only after each pair, then lets
  gfootball's built-in AI play while the ball is loose, until someone receives it ("pass" segment);
  the last direction is right until a move was decided (the first decision's does not count);
* anything else is one engine step.

The model sees only the frame after the last engine step of a decision; every engine step's raw
observation, action and reward terms are kept for the replay. Frames are rendered only for the
model (and never when the submission's endpoint reads no images). The first frame keeps the
official channel order of gfootball's ``render("rgb_array")`` (red and blue swapped); later frames
are the observation's own RGB frames, as officially.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
from PIL import Image

from evaluators.base import Episode, Observation, ScenarioSpec, StepResult
from evaluators.football.engine import ACTION_CODES, ACTION_NAMES, BUILTIN_AI, Engine, colour_fix
from evaluators.football.options import FootballOptions
from evaluators.football.reward import (
    OFFICIAL,
    PASS_ACTIONS,
    REWARD_VARIANTS,
    SHOT_ACTION,
    SHOT_HELD_UNTIL_RECEIVED,
    TERM_NAMES,
    DenseReward,
    length,
)
from evaluators.images import resize_longest_side
from evaluators.settings import EvaluationSettings

MAX_AUTO_STEPS = 10
MOVE_MIN_DISTANCE = 0.01
LOOKAHEAD = 3
EXTRAPOLATION_STEPS = 6  # i = 0..5
FIELD_X = 1.0
FIELD_Y = 0.42
DEFAULT_RESOLUTION = 1280
ARTIFACT_NAME = "football.json"

MOVE_ACTIONS = frozenset(range(1, 9))
#: The official auto-acting state starts with no previous action and the direction right.
NO_ACTION = -1
DEFAULT_DIRECTION = ACTION_CODES["right"]
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
    """Position and direction used by the clear-path test: the holder's when someone holds the ball,
    else the ball's. As officially, the holder is looked up in *our* team whichever team holds it
    (an opponent holding the ball ends the episode anyway)."""
    player = int(observation["ball_owned_player"])
    if player != -1:
        return (np.asarray(observation["left_team"][player], dtype=float),
                np.asarray(observation["left_team_direction"][player], dtype=float))
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
        for theirs in opponents + i * directions:
            if length(ours - theirs) < MOVE_MIN_DISTANCE:
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
class _AutoActing:
    """The official auto-acting memory; it exists from the second decision on."""

    previous_action: int = NO_ACTION
    direction: int = DEFAULT_DIRECTION


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
    reward_variant: str = OFFICIAL
    engine: Engine | None = None
    rewards: DenseReward = field(default_factory=DenseReward)
    records: list[dict[str, Any]] = field(default_factory=list)
    segments: list[_Segment] = field(default_factory=list)
    initial: dict[str, Any] | None = None
    done: bool = False
    outcome: str = "running"
    auto: _AutoActing | None = None
    renders: int = 0

    def __post_init__(self) -> None:
        if self.reward_variant not in REWARD_VARIANTS:
            raise ValueError(f"unknown Football reward variant {self.reward_variant!r}; one of {REWARD_VARIANTS}")

    @classmethod
    def from_scenario(cls, scenario: ScenarioSpec, settings: EvaluationSettings) -> FootballEpisode:
        seed = settings.seed
        options = FootballOptions.of(settings)
        return cls(
            scenario=scenario.data["scenario"],
            seed=seed if seed is not None else random.SystemRandom().randrange(2_000_000_000),
            resolution=settings.resolution,
            render_observations=settings.observation_images,
            auto_render=options.auto_render,
            reward_variant=SHOT_HELD_UNTIL_RECEIVED if options.shot_held_until_received else OFFICIAL,
        )

    # -- Episode interface --------------------------------------------------------------------

    def reset(self) -> Observation:
        self.close()
        self.engine = Engine(self.scenario, seed=self.seed)
        self.rewards = DenseReward(variant=self.reward_variant)
        self.records, self.segments = [], []
        self.done, self.outcome = False, "running"
        self.auto = None
        self.initial = _compact(self.engine.observation)
        return self._observe(initial=True)

    def step(self, action: Any) -> StepResult:
        if self.engine is None:
            raise RuntimeError("reset() the Football episode before stepping it")
        if self.done:
            raise EpisodeOver("the Football episode is over; no further steps are allowed")
        code = OFFICIAL_ACTION_CODES.get(action) if isinstance(action, str) else None
        if code is None:
            raise ValueError(f"unknown Football action {action!r}")
        before = self.engine.observation
        segment = _Segment(decision=len(self.segments) + 1, action=action, mode="single",
                           first_step=len(self.records) + 1)
        if not self.auto_render or not self.records:
            # The official first decision is a plain step that leaves no auto-acting memory.
            total = self._engine_step(code, segment)
        else:
            if self.auto is None:
                self.auto = _AutoActing()
            total = self._auto_act(code, before, segment)
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

    def render(self, *, initial: bool = False) -> Image.Image:
        """The frame the model sees. The official first frame comes from gfootball's
        ``render("rgb_array")``, whose channels are reversed; later ones are observation frames."""
        assert self.engine is not None
        self.renders += 1
        frame = self.engine.frame(channels_reversed=initial)
        return resize_longest_side(colour_fix(frame), self.resolution)

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
            "reward_variant": self.reward_variant,
        }

    def save_artifacts(self, directory: Path) -> dict[str, Any]:
        document = {
            "kind": "football",
            "seed": self.seed,
            "reward_variant": self.reward_variant,
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

    def _observe(self, *, initial: bool = False) -> Observation:
        if not self.render_observations:
            return Observation(text="")
        return Observation(text="", image=self.render(initial=initial))

    def _engine_step(self, code: int, segment: _Segment, auto: bool = False) -> float:
        assert self.engine is not None
        observation, done = self.engine.step(code)
        terms = self.rewards.update(observation, code)
        if self.rewards.task_done:
            # Only the stolen term sets the task's own end (its value may round to 0 on step 1).
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
            # The six terms are numbers; only the clearances beside them may be None.
            "terms": {name: round(cast(float, value), 6) for name, value in terms.as_dict().items()
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

    def _auto_act(self, code: int, before: dict[str, Any], segment: _Segment) -> float:
        """One decision after the first, with the official auto-acting rules."""
        assert self.auto is not None
        if code in MOVE_ACTIONS:
            self.auto.direction = code
            if code == self.auto.previous_action:
                segment.mode = "move"
                return self._move(code, segment)
            self.auto.previous_action = code
            return self._engine_step(code, segment)
        self.auto.previous_action = code
        # Only the holder's index is compared, whatever the team, as officially.
        passer = int(before["ball_owned_player"])
        if code in PASS_ACTIONS | {SHOT_ACTION} and passer != -1:
            segment.mode = "pass"
            return self._pass(code, passer, segment)
        return self._engine_step(code, segment)

    def _move(self, code: int, segment: _Segment) -> float:
        assert self.engine is not None
        total = self._engine_step(code, segment)
        steps = 1
        while not self.done and steps < MAX_AUTO_STEPS and path_is_clear(self.engine.observation):
            total += self._engine_step(code, segment, auto=True)
            steps += 1
        return total

    def _pass(self, code: int, passer: int, segment: _Segment) -> float:
        """(pass, direction) pairs while the passer holds the ball, then the built-in AI while the
        ball is loose; ends when someone else holds it or the episode ends. The game clock (400
        steps) bounds the loop, as officially."""
        assert self.auto is not None and self.engine is not None
        total = 0.0
        holder = passer
        first = True
        while not self.done:
            if holder == passer:
                # The holder is re-read only after the pair, so the direction step follows the
                # pass even when the ball has already left the passer's foot.
                total += self._engine_step(code, segment, auto=not first)
                first = False
                if self.done:
                    break
                total += self._engine_step(self.auto.direction, segment, auto=True)
            elif holder == -1:
                total += self._engine_step(BUILTIN_AI, segment, auto=True)
            else:
                break  # someone else holds the ball: the model decides again
            holder = int(self.engine.observation["ball_owned_player"])
        return total

    @staticmethod
    def _changed(before: dict[str, Any], after: dict[str, Any]) -> bool:
        """Whether the decision moved the game on for the RA diagnostic: the ball moved or changed hands."""
        moved = float(np.linalg.norm(np.asarray(after["ball"], dtype=float)[:2]
                                     - np.asarray(before["ball"], dtype=float)[:2]))
        owner_changed = (int(after["ball_owned_team"]), int(after["ball_owned_player"])) != (
            int(before["ball_owned_team"]), int(before["ball_owned_player"]))
        return moved > 0.005 or owner_changed
