"""The official MageBench dense reward for Football (reference §2.3), as pure functions of
gfootball's raw observation dicts.

Coordinates are gfootball's: x ∈ [−1, 1] towards the right (opponents') goal, y ∈ [−0.42, 0.42]
with y < 0 at the top. ``right_team`` positions in an observation are already in this absolute
frame. Our team is the left team: ``ball_owned_team`` 0 = ours, 1 = theirs, −1 = nobody.

Every term is kept separately per step so that the replay can plot them; ``StepTerms.total`` is
what the official code adds to the episode's reward.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

import numpy as np

LAMBDA_MOVE = 0.8
LAMBDA_OPPONENTS = 1.0
LAMBDA_SCORE = 2.0
LAMBDA_STOLEN = 1.0
LAMBDA_PASS = 20.0
LAMBDA_SHOT = 100.0
SHOT_CAP = LAMBDA_SCORE / 3
SCALING = 20.0
PASS_DECAY = 0.75
NSTEPS = 400
TEAM_SIZE = 11

PASS_ACTIONS = frozenset({9, 10, 11})  # long_pass, high_pass, short_pass
SHOT_ACTION = 12
GOAL = np.array([1.0, 0.0])
GOAL_POINTS_Y = (-0.044, -0.02, 0.0, 0.022, 0.044)
SHOT_SAMPLES = 100
SHOT_FULL_DISTANCE_X = 0.7

TERM_NAMES = ("move", "opponents", "score", "stolen", "pass", "shot")


@dataclass(frozen=True)
class StepTerms:
    """One step's six terms, each already multiplied by its λ and by the scaling 20."""

    move: float = 0.0
    opponents: float = 0.0
    score: float = 0.0
    stolen: float = 0.0
    # The pass and shot terms after their decay and cap; the raw clearances are kept beside them.
    pass_: float = 0.0
    shot: float = 0.0
    pass_clearance: float | None = None
    shot_clearance: float | None = None

    @property
    def total(self) -> float:
        return self.move + self.opponents + self.score + self.stolen + self.pass_ + self.shot

    def as_dict(self) -> dict[str, float | None]:
        data = asdict(self)
        data["pass"] = data.pop("pass_")
        return data


def _xy(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=float)[:2]


def opponents_behind(ball: Sequence[float], right_team: Any) -> int:
    """How many opponents are nearer our own goal than the ball (x < ball.x)."""
    team = np.asarray(right_team, dtype=float).reshape(-1, 2)
    return int(np.count_nonzero(team[:, 0] < float(ball[0])))


def pass_clearance(ball: Sequence[float], right_team: Any) -> float:
    """min over opponents of d / (10·max(cos θ, 0) + 1): how free the receiver is towards goal.

    d is the opponent–ball distance and θ the angle between (opponent − ball) and (goal − ball), so
    an opponent standing between the ball and the goal counts up to eleven times closer.
    """
    position = _xy(ball)
    team = np.asarray(right_team, dtype=float).reshape(-1, 2)
    if len(team) == 0:
        return 0.0
    to_goal = GOAL - position
    best = float("inf")
    for opponent in team:
        offset = opponent - position
        distance = float(np.linalg.norm(offset))
        norms = distance * float(np.linalg.norm(to_goal))
        cosine = float(np.dot(offset, to_goal) / norms) if norms > 0 else 0.0
        best = min(best, distance / (10.0 * max(cosine, 0.0) + 1.0))
    return best


def shot_clearance(ball: Sequence[float], right_team: Any) -> float:
    """max over five goal points of the closest approach of any opponent to the ball→point line.

    The segment is sampled at ``SHOT_SAMPLES`` evenly spaced points, ends included.
    """
    position = _xy(ball)
    team = np.asarray(right_team, dtype=float).reshape(-1, 2)
    if len(team) == 0:
        return 0.0
    fractions = np.linspace(0.0, 1.0, SHOT_SAMPLES)[:, None]
    best = 0.0
    for y in GOAL_POINTS_Y:
        samples = position + fractions * (np.array([1.0, y]) - position)
        distances = np.linalg.norm(samples[:, None, :] - team[None, :, :], axis=2)
        best = max(best, float(distances.min()))
    return best


def shot_distance(ball: Sequence[float]) -> float:
    x = float(ball[0])
    return 1.0 if x > SHOT_FULL_DISTANCE_X else max(x, 0.0)


@dataclass
class DenseReward:
    """The reward state machine of one episode; feed it every gfootball step in order."""

    initialised: bool = False
    best_x: float = 0.0
    passed: int = 0
    pass_scale: float = 1.0
    passing: bool = False
    performed_shot: bool = False
    task_done: bool = False
    #: The last (team, player) seen holding the ball; −1 ("nobody") never replaces it.
    previous_owner: tuple[int, int] | None = None
    total: float = 0.0

    def update(self, observation: Mapping[str, Any], action: int) -> StepTerms:
        """The terms of the step whose result is ``observation`` after executing ``action``."""
        ball = _xy(observation["ball"])
        right_team = observation["right_team"]
        owned_team = int(observation["ball_owned_team"])
        owned_player = int(observation["ball_owned_player"])
        if not self.initialised:
            # The official first step only sets the references and scores nothing.
            self.initialised = True
            self.best_x = float(ball[0])
            self.passed = opponents_behind(ball, right_team)
            if owned_team in (0, 1):
                self.previous_owner = (owned_team, owned_player)
            return StepTerms()

        move = opponents = score = stolen = pass_term = shot = 0.0
        pass_clear = shot_clear = None
        if owned_team == 0:
            move = LAMBDA_MOVE * max(0.0, float(ball[0]) - self.best_x)
            self.best_x = max(self.best_x, float(ball[0]))
            behind = opponents_behind(ball, right_team)
            opponents = LAMBDA_OPPONENTS * (behind - self.passed) / TEAM_SIZE
            self.passed = behind
        if int(observation["score"][0]) > 0:
            score = LAMBDA_SCORE
        was_stolen = owned_team == 1 and not self.performed_shot
        if was_stolen:
            # Official sign: subtracting λ4·(steps_left/400 − 1) *adds* the elapsed share of the game.
            stolen = -LAMBDA_STOLEN * (float(observation["steps_left"]) / NSTEPS - 1.0)
            self.task_done = True
        owner = (owned_team, owned_player) if owned_team in (0, 1) else None
        if (self.passing and self.previous_owner is not None and owned_team == 0
                and owner != self.previous_owner and not was_stolen):
            pass_clear = pass_clearance(ball, right_team)
            pass_term = LAMBDA_PASS * pass_clear * self.pass_scale
            self.pass_scale *= PASS_DECAY
            self.passing = False
        if action in PASS_ACTIONS:
            self.passing = True
        # A new owner may shoot at once; the stolen test above still saw the old shot in flight.
        if owner is not None:
            if owner != self.previous_owner:
                self.performed_shot = False
            self.previous_owner = owner
        if action == SHOT_ACTION and owned_team == 0 and not self.performed_shot:
            shot_clear = shot_clearance(ball, right_team)
            shot = min(LAMBDA_SHOT * shot_clear * shot_distance(ball), SHOT_CAP)
            self.performed_shot = True
        terms = StepTerms(
            move=move * SCALING, opponents=opponents * SCALING, score=score * SCALING, stolen=stolen * SCALING,
            pass_=pass_term * SCALING, shot=shot * SCALING, pass_clearance=pass_clear, shot_clearance=shot_clear,
        )
        self.total += terms.total
        return terms
