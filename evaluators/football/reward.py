"""The official MageBench dense reward for Football (reference §2.3), as pure functions of
gfootball's raw observation dicts.

Coordinates are gfootball's: x ∈ [−1, 1] towards the right (opponents') goal, y ∈ [−0.42, 0.42]
with y < 0 at the top. ``right_team`` positions in an observation are already in this absolute
frame. Our team is the left team: ``ball_owned_team`` 0 = ours, 1 = theirs, −1 = nobody.

Every term is kept separately per step so that the replay can plot them; ``StepTerms.reward`` is
what the official code adds to the episode's reward, summed in the official order (terms in the
order 1–6, then ×20) so that the episode total matches it to the last bit.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

#: A position as gfootball gives it (an array) or as a test writes it (a list or tuple).
Point = Sequence[float] | np.ndarray

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
#: shot_distance is 1 when the ball is nearer the goal line than this (official: 1 − x < 0.3).
SHOT_FULL_GAP = 0.3

TERM_NAMES = ("move", "opponents", "score", "stolen", "pass", "shot")

#: The official rules, the default everywhere.
OFFICIAL = "official"
#: A labelled, non-default variant: a shot stays "in flight" until a player other than the shooter
#: holds the ball, so a keeper's save after a shot is not a stolen ball. The official code ends the
#: shot as soon as the ball is loose (its comment says the intent was to let a new holder shoot
#: again). Only the moment the flag ends differs; the order of the tests is the official one.
SHOT_HELD_UNTIL_RECEIVED = "shot-held-until-received"
REWARD_VARIANTS = (OFFICIAL, SHOT_HELD_UNTIL_RECEIVED)


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
    reward: float = 0.0

    @property
    def total(self) -> float:
        return self.reward

    def as_dict(self) -> dict[str, float | None]:
        data = asdict(self)
        data["pass"] = data.pop("pass_")
        return data


def _xy(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=float)[:2]


def length(vector: np.ndarray) -> np.float64:
    """Euclidean length of one 2-vector, bit for bit what ``np.linalg.norm`` returns for it.

    ``np.linalg.norm`` of a 1-D vector is ``sqrt(x.dot(x))``; the dot product may be fused
    (FMA) by the BLAS, so a vectorised ``x0² + x1²`` can differ in the last bit of a clearance or
    flip the move check's 0.01 test. numpy scalars keep the official 0/0 → nan semantics.
    """
    return np.sqrt(vector.dot(vector))


def opponents_behind(ball: Point, right_team: Any) -> int:
    """How many opponents are nearer our own goal than the ball (x < ball.x)."""
    team = np.asarray(right_team, dtype=float).reshape(-1, 2)
    return int(np.count_nonzero(team[:, 0] < float(ball[0])))


def pass_clearance(ball: Point, right_team: Any) -> float:
    """min over opponents of d / (10·max(cos θ, 0) + 1): how free the receiver is towards goal.

    d is the opponent–ball distance and θ the angle between (opponent − ball) and (goal − ball), so
    an opponent standing between the ball and the goal counts up to eleven times closer. The cosine
    is divided by the two lengths one after the other, as officially (the rounding differs from
    dividing by their product).
    """
    position = _xy(ball)
    team = np.asarray(right_team, dtype=float).reshape(-1, 2)
    if len(team) == 0:
        return 0.0
    to_goal = GOAL - position
    scores = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for opponent in team:
            offset = opponent - position
            distance = length(offset)
            cosine = offset.dot(to_goal) / distance / length(to_goal)
            scores.append(distance / (10.0 * max(cosine, 0.0) + 1.0))
    return float(min(scores))


#: The sampled fractions of the ball→goal-point segment: k/100 for k = 1 … 100, computed as the
#: official loop does, so the ball's own position (k = 0) is never a sample.
SHOT_FRACTIONS = np.array([k / 100.0 for k in range(1, SHOT_SAMPLES + 1)])


def shot_clearance(ball: Point, right_team: Any) -> float:
    """max over five goal points of the closest approach of any opponent to the ball→point segment,
    sampled at the fractions ``SHOT_FRACTIONS`` (the ball itself excluded, the goal point included)."""
    position = _xy(ball)
    team = np.asarray(right_team, dtype=float).reshape(-1, 2)
    if len(team) == 0:
        return 0.0
    best = 0.0
    for y in GOAL_POINTS_Y:
        samples = position + SHOT_FRACTIONS[:, None] * (np.array([1.0, y]) - position)
        offsets = samples[:, None, :] - team[None, :, :]
        closest = min(float(length(offset)) for row in offsets for offset in row)
        best = max(best, closest)
    return best


def shot_distance(ball: Point) -> float:
    """1 near the goal, else the ball's x (never negative), computed through the gap 1 − x as
    officially: at x = 0.7 the gap rounds to 0.30000000000000004, so the value is 0.7, not 1."""
    gap = 1.0 - float(ball[0])
    return 1.0 if gap < SHOT_FULL_GAP else max(1.0 - gap, 0.0)


@dataclass
class DenseReward:
    """The reward state machine of one episode; feed it every gfootball step in order.

    The order of the tests within a step decides edge cases and is the official one: move and
    opponents, score, stolen (with the shot flag as the previous step left it), pass; then the
    previous holder is updated (never to "nobody"), a pass action arms the pass flag, the shot is
    scored; last, the shot flag is cleared when the holder differs from the previous one, which
    includes a loose ball. Players are compared by index only, whatever their team, as officially.
    """

    variant: str = OFFICIAL
    initialised: bool = False
    best_x: float = 0.0
    passed: int = 0
    pass_scale: float = 1.0
    passing: bool = False
    performed_shot: bool = False
    task_done: bool = False
    #: The index of the last player seen holding the ball; −1 until someone holds it.
    previous_player: int = -1
    #: Who took the shot in flight (used by the non-default variant only).
    shooter: int = -1
    total: float = 0.0

    def __post_init__(self) -> None:
        if self.variant not in REWARD_VARIANTS:
            raise ValueError(f"unknown Football reward variant {self.variant!r}; one of {REWARD_VARIANTS}")

    def update(self, observation: Mapping[str, Any], action: int) -> StepTerms:
        """The terms of the step whose result is ``observation`` after executing ``action``."""
        ball = _xy(observation["ball"])
        right_team = observation["right_team"]
        owned_team = int(observation["ball_owned_team"])
        player = int(observation["ball_owned_player"])
        if not self.initialised:
            # The official first step only sets the references and scores nothing; it neither
            # records a holder nor arms the pass flag.
            self.initialised = True
            self.best_x = float(ball[0])
            self.passed = opponents_behind(ball, right_team)
            return StepTerms()

        reward = 0.0
        move = opponents = score = stolen = pass_term = shot = 0.0
        pass_clear = shot_clear = None
        if player != -1 and owned_team == 0:
            gain = float(ball[0]) - self.best_x
            move = LAMBDA_MOVE * max(0.0, gain)
            reward += move
            if gain > 0:
                self.best_x = float(ball[0])
            behind = opponents_behind(ball, right_team)
            opponents = LAMBDA_OPPONENTS * (behind - self.passed) / TEAM_SIZE
            reward += opponents
            self.passed = behind
        if int(observation["score"][0]) > 0:
            score = LAMBDA_SCORE
            reward += score
        was_stolen = owned_team == 1 and not self.performed_shot
        if was_stolen:
            # Official sign: subtracting λ4·steps_left/400 − λ4 *adds* the elapsed share of the game.
            penalty = LAMBDA_STOLEN * int(observation["steps_left"]) / NSTEPS - LAMBDA_STOLEN
            reward -= penalty
            stolen = -penalty
            self.task_done = True
        if (self.passing and self.previous_player != -1 and player != -1 and not was_stolen
                and player != self.previous_player):
            pass_clear = pass_clearance(ball, right_team)
            pass_term = LAMBDA_PASS * pass_clear * self.pass_scale
            reward += pass_term
            self.pass_scale *= PASS_DECAY
            self.passing = False
        if player != -1:
            self.previous_player = player
        if action in PASS_ACTIONS:
            self.passing = True
        if action == SHOT_ACTION and player != -1 and owned_team == 0 and not self.performed_shot:
            shot_clear = shot_clearance(ball, right_team)
            shot = min(LAMBDA_SHOT * shot_clear * shot_distance(ball), SHOT_CAP)
            reward += shot
            self.performed_shot = True
            self.shooter = player
        if self.performed_shot:
            if self.variant == OFFICIAL:
                # The holder was just updated unless the ball is loose, so in effect the flag
                # ends on the first loose-ball step after the shot.
                shot_over = self.previous_player != player
            else:
                shot_over = player != -1 and player != self.shooter
            if shot_over:
                self.performed_shot = False
        step = reward * SCALING
        terms = StepTerms(
            move=move * SCALING, opponents=opponents * SCALING, score=score * SCALING, stolen=stolen * SCALING,
            pass_=pass_term * SCALING, shot=shot * SCALING, pass_clearance=pass_clear, shot_clearance=shot_clear,
            reward=step,
        )
        self.total += step
        return terms
