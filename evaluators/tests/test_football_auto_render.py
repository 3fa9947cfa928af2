"""Football auto-rendering against the official rules, decision by decision.

Most tests drive ``FootballEpisode`` with a scripted engine whose ball holder after every engine
step is given in advance, so that the expected engine actions can be worked out by hand; the last
ones play the real gfootball engine.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evaluators.football import env as football_env
from evaluators.football.engine import ACTION_NAMES
from evaluators.football.env import ACCEPTED_ACTIONS, MAX_AUTO_STEPS, FootballEpisode
from evaluators.football.resources import discover_football

#: Decision names by their engine name, whichever spelling the vocabulary uses.
ACT = {name.removeprefix("action_"): name for name in ACCEPTED_ACTIONS}
LOOSE = -1
RESOURCES = Path(__file__).resolve().parents[2] / "fixtures" / "magebench" / "resources"


def _observation(holder: int, steps_left: int) -> dict[str, Any]:
    """Our player ``holder`` on the ball in midfield running right, opponents far away: a move's
    path is always clear, and nothing scores but the ball's small progress."""
    left = np.zeros((11, 2))
    left[:, 0] = np.linspace(-0.9, 0.0, 11)
    right = np.full((11, 2), (0.9, 0.4))
    return {
        "ball": np.array([0.0, 0.0, 0.1]), "ball_direction": np.zeros(3),
        "ball_owned_team": 0 if holder != LOOSE else -1, "ball_owned_player": holder, "active": 1,
        "left_team": left, "left_team_direction": np.tile((0.01, 0.0), (11, 1)),
        "right_team": right, "right_team_direction": np.zeros((11, 2)),
        "score": [0, 0], "game_mode": 0, "steps_left": steps_left,
    }


class ScriptedEngine:
    """The holder after each engine step comes from ``holders``; the last one stays."""

    RED = (200, 0, 0)

    def __init__(self, holders: list[int], start: int = 1) -> None:
        self.holders = list(holders)
        self.holder = start
        self.actions: list[str] = []
        self.observation = _observation(start, 400)

    def step(self, code: int) -> tuple[dict[str, Any], bool]:
        self.actions.append(ACTION_NAMES[code])
        if self.holders:
            self.holder = self.holders.pop(0)
        self.observation = _observation(self.holder, 400 - len(self.actions))
        return self.observation, False

    def frame(self, *, channels_reversed: bool = False) -> np.ndarray:
        """A red picture, as gfootball's observation frame would hold it."""
        frame = np.zeros((72, 128, 3), dtype=np.uint8)
        frame[...] = self.RED
        return frame[..., ::-1].copy() if channels_reversed else frame

    def close(self) -> None:
        pass


def _episode(monkeypatch: pytest.MonkeyPatch, holders: list[int], *, start: int = 1,
             images: bool = False) -> tuple[FootballEpisode, ScriptedEngine]:
    engine = ScriptedEngine(holders, start)
    monkeypatch.setattr(football_env, "Engine", lambda scenario, seed: engine)
    episode = FootballEpisode(scenario={}, seed=1, render_observations=images, resolution=128)
    return episode, engine


def _play(episode: FootballEpisode, *decisions: str) -> list[str]:
    episode.reset()
    for decision in decisions:
        episode.step(ACT[decision])
    return [segment.mode for segment in episode.segments]


def test_the_first_decision_is_not_remembered_so_move_mode_begins_at_the_third_decision(monkeypatch):
    episode, engine = _play_three_rights(monkeypatch)
    assert [s.mode for s in episode.segments] == ["single", "single", "move"]
    # Decision 3 runs while the path is clear, at most MAX_AUTO_STEPS engine steps in all.
    assert engine.actions == ["right"] * (1 + 1 + MAX_AUTO_STEPS)


def _play_three_rights(monkeypatch):
    episode, engine = _episode(monkeypatch, [])
    _play(episode, "right", "right", "right")
    return episode, engine


def test_a_move_repeating_a_non_move_decision_is_a_single_step(monkeypatch):
    episode, _ = _episode(monkeypatch, [])
    # Decision 2 (sprint) is remembered; decision 3 differs from it; decision 4 repeats decision 3.
    assert _play(episode, "right", "sprint", "right", "right") == ["single", "single", "single", "move"]


def test_a_pass_with_no_direction_decided_yet_alternates_with_right_even_after_a_first_move_left(monkeypatch):
    # Holders after each engine step: decision 1 (left) → 1; then the pass decision:
    # pass → 1, right → 1 (pair done, passer holds: again), pass → loose, right → loose
    # (pair done, loose: built-in AI), builtin → loose, builtin → 7 (received: the model decides).
    episode, engine = _episode(monkeypatch, [1, 1, 1, LOOSE, LOOSE, LOOSE, 7])
    assert _play(episode, "left", "short_pass") == ["single", "pass"]
    assert engine.actions == ["left", "short_pass", "right", "short_pass", "right", "builtin_ai", "builtin_ai"]


def test_the_holder_is_re_read_only_after_each_pass_direction_pair(monkeypatch):
    # The pass is received at once (holder 7 after the pass step): the direction step still follows.
    episode, engine = _episode(monkeypatch, [1, 7, 7])
    _play(episode, "sprint", "long_pass")
    assert engine.actions == ["sprint", "long_pass", "right"]
    segment = episode.segments[-1]
    assert (segment.first_step, segment.last_step) == (2, 3)


def test_the_pass_direction_is_the_last_move_decided_after_the_first_decision(monkeypatch):
    episode, engine = _episode(monkeypatch, [1, 1, LOOSE, 4])
    _play(episode, "sprint", "top", "shot")
    assert engine.actions == ["sprint", "top", "shot", "top"]


def test_a_pass_on_a_loose_ball_is_a_single_step(monkeypatch):
    episode, engine = _episode(monkeypatch, [LOOSE, LOOSE], start=LOOSE)
    assert _play(episode, "sprint", "short_pass") == ["single", "single"]
    assert engine.actions == ["sprint", "short_pass"]


def test_without_auto_rendering_every_decision_is_one_engine_step(monkeypatch):
    episode, engine = _episode(monkeypatch, [1, 1, 1, LOOSE])
    episode.auto_render = False
    assert _play(episode, "right", "right", "right", "short_pass") == ["single"] * 4
    assert len(engine.actions) == 4


def test_the_first_frame_keeps_the_official_reversed_channels_and_later_frames_do_not(monkeypatch):
    episode, _ = _episode(monkeypatch, [1], images=True)
    first = np.asarray(episode.reset().image, dtype=int)
    later = np.asarray(episode.step(ACT["sprint"]).observation.image, dtype=int)
    # The engine's picture is red; the official first frame shows it blue.
    assert first[..., 2].mean() > first[..., 0].mean()
    assert later[..., 0].mean() > later[..., 2].mean()


# -- the real engine ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scenarios() -> dict[str, dict[str, Any]]:
    return {s.key: s.data["scenario"] for s in discover_football(RESOURCES)}


def _real(scenario: dict[str, Any], seed: int, decisions: list[str]) -> FootballEpisode:
    episode = FootballEpisode(scenario=scenario, seed=seed, render_observations=False)
    episode.reset()
    try:
        for decision in decisions:
            if decision == "until_held":
                # Single steps until someone holds the ball (the fixtures start with a loose ball).
                while not episode.done and int(episode.engine.observation["ball_owned_player"]) == LOOSE:
                    episode.step(ACT["release_sprint"])
            elif not episode.done:
                episode.step(ACT[decision])
    finally:
        episode.close()
    return episode


def _official_pass_actions(episode: FootballEpisode, decision: int, code: str, direction: str) -> list[str]:
    """The engine actions the official loop plays for a pass decision, derived from the holders."""
    segment = episode.segments[decision - 1]
    records = episode.records[segment.first_step - 1: segment.last_step]
    passer = episode.records[segment.first_step - 2]["observation"]["ball_owned_player"]
    holder, expected = passer, list[str]()
    while len(expected) < len(records):
        if holder == passer:
            expected += [code, direction]
        elif holder == LOOSE:
            expected.append("builtin_ai")
        else:
            break
        holder = records[min(len(expected), len(records)) - 1]["observation"]["ball_owned_player"]
    return expected[:len(records)]


def test_real_games_start_move_mode_at_decision_three(scenarios):
    episode = _real(scenarios["R5_R_1"], 4, ["right", "right", "right"])
    assert [s.mode for s in episode.segments] == ["single", "single", "move"]


def test_a_real_pass_plays_its_direction_step_even_when_the_ball_has_just_left_the_passer(scenarios):
    episode = _real(scenarios["R7_R_1"], 1, ["left", "until_held", "short_pass"])
    segment = episode.segments[-1]
    assert segment.mode == "pass"
    records = episode.records[segment.first_step - 1: segment.last_step]
    actions = [r["action"] for r in records]
    assert actions == _official_pass_actions(episode, segment.decision, "short_pass", "right")
    assert "left" not in actions  # the first decision's direction is not remembered
    # The edge case itself: a pass step after which the ball is loose, and still "right" next.
    loose_after_pass = [i for i, r in enumerate(records[:-1])
                        if r["action"] == "short_pass" and r["observation"]["ball_owned_player"] == LOOSE]
    assert loose_after_pass and all(records[i + 1]["action"] == "right" for i in loose_after_pass)
