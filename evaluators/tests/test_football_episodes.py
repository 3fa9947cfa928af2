"""Football episodes on the real gfootball engine: fixture scenarios, baseline agents over HTTP,
the Online flow, auto-rendering and the replay file."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from evaluators.base import ScenarioSpec, get_plugin
from evaluators.endpoints.client import ChatClient
from evaluators.football.engine import colour_fix
from evaluators.football.env import ACCEPTED_ACTIONS, FootballEpisode
from evaluators.football.resources import discover_football
from evaluators.football.reward import TERM_NAMES
from evaluators.runner import effective_settings, run_attempt
from evaluators.tests.test_flows import Scripted

RESOURCES = Path(__file__).resolve().parents[2] / "fixtures" / "magebench" / "resources"


@pytest.fixture(scope="module")
def scenarios() -> dict[str, ScenarioSpec]:
    return {s.key: ScenarioSpec(env="football", key=s.key, data=s.data, resource_path=s.resource_file)
            for s in discover_football(RESOURCES)}


def _play(scenario: ScenarioSpec, endpoint_url: str, agent: str, tmp_path: Path, **overrides: Any):
    settings = effective_settings("football", "online", {"observation_images": False, "seed": 5, **overrides})
    with ChatClient(endpoint_url, model=agent) as client:
        return run_attempt(scenario=scenario, flow="online", settings=settings, model=client, out_dir=tmp_path)


def test_the_fixture_set_covers_every_zone_and_category_with_a_mini_subset_of_three():
    found = discover_football(RESOURCES)
    assert {s.tags["zone"] for s in found} == {f"R{i}" for i in range(1, 10)}
    assert {s.tags["category"] for s in found} == {"personal", "teamwork", "real-world"}
    assert sum(s.in_mini for s in found) == 3
    assert all(s.data["scenario"]["config"]["game_duration"] == 400 for s in found)


def test_the_parser_accepts_exactly_the_sixteen_official_action_names():
    plugin = get_plugin("football")
    assert len(ACCEPTED_ACTIONS) == 16
    for name in ACCEPTED_ACTIONS:
        assert plugin.parse("online", f"# analyze\nx\n# action\n{name}\n").actions == [name]
    for name in ("idle", "sliding", "release_direction", "builtin_ai", "Right", "shoot", "right", "action_idle"):
        assert not plugin.parse("online", f"# action\n{name}").ok


def test_football_offers_the_online_flow_with_ten_repeats_on_mini_and_three_on_full():
    plugin = get_plugin("football")
    assert plugin.flows == ("online",)
    assert effective_settings("football", "online", subset="mini").repeats == 10
    assert effective_settings("football", "online", subset="full").repeats == 3


def test_an_idle_episode_runs_end_to_end_and_scores_the_sum_of_its_step_rewards(scenarios, baseline_endpoint,
                                                                                tmp_path):
    server = baseline_endpoint("idle")
    result = _play(scenarios["R2_T_1"], server.url, "idle", tmp_path)
    replay = json.loads((tmp_path / "football.json").read_text())
    steps = replay["steps"]
    assert result.model_calls == result.steps == len(steps)  # one engine step per decision: no auto-rendering
    assert all(s["action"] == "release_sprint" for s in steps)
    assert result.score == pytest.approx(sum(s["reward"] for s in steps), abs=1e-5)
    assert result.score == pytest.approx(sum(result.details["terms"].values()), abs=1e-5)
    assert result.details["renders"] == 0
    assert result.outcome in {"stolen", "possession_lost", "out_of_play", "time_up", "decision_limit", "conceded"}
    if result.outcome == "stolen":
        assert result.details["terms"]["stolen"] > 0  # the official sign
    assert not result.diagnostics.invalid_action


def test_a_random_episode_runs_end_to_end_with_every_engine_step_kept_for_the_replay(scenarios, baseline_endpoint,
                                                                                  tmp_path):
    server = baseline_endpoint("random", seed=3)
    result = _play(scenarios["R5_R_1"], server.url, "random", tmp_path)
    replay = json.loads((tmp_path / "football.json").read_text())
    assert replay["term_names"] == list(TERM_NAMES)
    segments, steps = replay["segments"], replay["steps"]
    assert len(segments) == result.steps == result.model_calls
    assert [s["t"] for s in steps] == list(range(1, len(steps) + 1))
    assert segments[0]["first_step"] == segments[0]["last_step"] == 1  # the first decision is a single step
    for segment in segments:
        covered = steps[segment["first_step"] - 1: segment["last_step"]]
        assert {s["decision"] for s in covered} == {segment["decision"]}
        assert all(s["auto"] for s in covered[1:]) and not covered[0]["auto"]
    first = steps[0]["observation"]
    assert len(first["left_team"]) == 11 and len(first["ball"]) == 3
    assert steps[-1]["cumulative"] == pytest.approx(result.score, abs=1e-5)
    trajectory = json.loads((tmp_path / "trajectory.json").read_text())
    assert trajectory["artifacts"]["kind"] == "football" and trajectory["details"]["seed"] == 5


def test_the_same_seed_replays_the_same_episode_for_an_agent_that_reads_no_images(scenarios):
    def play() -> list[Any]:
        episode = FootballEpisode(scenario=scenarios["R9_T_1"].data["scenario"], seed=123, render_observations=False)
        episode.reset()
        try:
            for action in ["action_right", "action_right", "action_right", "action_short_pass", "action_top_right",
                           "action_shot"]:
                if episode.done:
                    break
                episode.step(action)
            return [(r["action"], r["reward"], r["observation"]["ball"]) for r in episode.records]
        finally:
            episode.close()

    assert play() == play()


def test_auto_rendering_needs_fewer_model_calls_for_the_same_agent(scenarios, baseline_endpoint, tmp_path):
    server = baseline_endpoint("random", seed=11)
    calls: dict[bool, list[int]] = {True: [], False: []}
    steps: dict[bool, list[int]] = {True: [], False: []}
    for auto in (True, False):
        for key in ("R3_R_1", "R5_P_1", "R9_T_1"):
            for seed in (1, 2):
                out = tmp_path / f"{auto}-{key}-{seed}"
                result = _play(scenarios[key], server.url, "random", out, auto_render=auto, seed=seed)
                calls[auto].append(result.model_calls)
                steps[auto].append(result.details["engine_steps"])
    per_step = {auto: sum(calls[auto]) / sum(steps[auto]) for auto in calls}
    print(f"model calls per engine step: auto-render {per_step[True]:.2f}, without {per_step[False]:.2f}; "
          f"calls per episode {sum(calls[True]) / 6:.1f} vs {sum(calls[False]) / 6:.1f}")
    assert per_step[False] == 1.0  # without auto-rendering every engine step is a model call
    assert per_step[True] < 0.8


def test_the_model_sees_one_colour_corrected_frame_per_decision_at_its_resolution(scenarios, tmp_path):
    settings = effective_settings("football", "online", {"seed": 9, "resolution": 320, "max_loop": 3})
    model = Scripted(*["# analyze\nplay\n# action\naction_right"] * 3)
    result = run_attempt(scenario=scenarios["R3_R_1"], flow="online", settings=settings, model=model,
                         out_dir=tmp_path)
    assert result.details["renders"] == result.steps + 1  # the initial scene and one per decision
    for request in model.requests:
        images = [p for m in request if isinstance(m["content"], list) for p in m["content"]
                  if p["type"] == "image_url"]
        assert len(images) == 1  # max_image = 1: only the latest frame
        texts = [p["text"] for m in request if isinstance(m["content"], list) for p in m["content"]
                 if p["type"] == "text"]
        assert get_plugin("football").prompts("online").observation_lead in texts
    trajectory = json.loads((tmp_path / "trajectory.json").read_text())
    frame = Image.open(tmp_path / trajectory["steps"][0]["frame"])
    assert frame.size == (320, 180)
    # The correction lifts gfootball's dark pitch (a raw frame's mean grey level is about 40).
    assert float(np.asarray(frame.convert("L")).mean()) > 60


def test_the_colour_correction_is_brightness_then_contrast_then_brightness():
    # A uniform grey 100: brightness ×1.5 → 150; contrast ×0.6 around the mean (150) → 150; ×1.2 → 180.
    flat = colour_fix(np.full((4, 4, 3), 100, dtype=np.uint8))
    assert set(np.asarray(flat).ravel().tolist()) == {180}
    # Two greys 40 and 80: ×1.5 → 60 and 120 (mean 90); contrast ×0.6 → 72 and 108; ×1.2 → 86 and 130.
    half = np.zeros((2, 2, 3), dtype=np.uint8)
    half[0], half[1] = 40, 80
    fixed = np.asarray(colour_fix(half))[:, 0, 0].tolist()
    assert all(abs(a - b) <= 1 for a, b in zip(fixed, [86, 130]))
