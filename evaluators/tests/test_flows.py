"""The Global and Online flows with scripted replies on a one-push level (R_ub = 10.9)."""
from __future__ import annotations

from typing import Any

import pytest
from PIL import Image

from evaluators.agents.flows import _trim_memory, run_global, run_online
from evaluators.base import ScenarioSpec, get_plugin
from evaluators.endpoints.client import Completion, image_part
from evaluators.runner import effective_settings
from evaluators.trajectory import TrajectoryRecorder

ONE_PUSH = "#####\n#@$.#\n#####"
SPEC = ScenarioSpec(env="sokoban", key="one-push", data={
    "grid": ONE_PUSH, "max_steps": 120, "upper_bound": {"actions": ["R"], "steps": 1, "reward": 10.9}})


class Scripted:
    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.requests: list[list[dict[str, Any]]] = []

    def complete(self, messages, **_):
        self.requests.append(messages)
        return Completion(text=self.replies.pop(0), prompt_tokens=10, completion_tokens=2, latency=0.0, attempts=1,
                          finish_reason="stop")


def _run(flow: str, model: Scripted, tmp_path, **overrides):
    plugin = get_plugin("sokoban")
    settings = effective_settings("sokoban", flow, {"resolution": 80, **overrides})
    runner = run_global if flow == "global" else run_online
    return runner(plugin, plugin.new_episode(SPEC, settings), model, settings, TrajectoryRecorder(tmp_path))


def test_global_executes_the_parsed_actions_and_scores_a_solution_100(tmp_path):
    result = _run("global", Scripted("### Analyze\npush it\n### Actions\nRight"), tmp_path)
    assert result.score == pytest.approx(100.0) and result.steps == 1 and result.model_calls == 1
    assert result.outcome == "solved" and result.prompt_tokens == 10 and result.completion_tokens == 2


def test_global_sends_the_rules_the_image_and_the_format_instruction(tmp_path):
    model = Scripted("### Actions\nRight")
    _run("global", model, tmp_path)
    system, user = model.requests[0]
    assert system["role"] == "system" and "Sokoban" in system["content"]
    kinds = [part["type"] for part in user["content"]]
    assert kinds == ["text", "image_url", "text"] and "### Actions" in user["content"][2]["text"]
    assert user["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_global_asks_again_after_a_reply_without_actions(tmp_path):
    model = Scripted("I am not sure.", "### Actions\nRight")
    result = _run("global", model, tmp_path)
    assert result.model_calls == 2 and result.score == pytest.approx(100.0)
    assert result.diagnostics.parse_errors == 1 and result.diagnostics.invalid_decisions == 0
    assert model.requests[1][-1]["content"][0]["text"].startswith("Please regenerate")


def test_global_with_no_parse_retries_is_the_official_single_generation(tmp_path):
    result = _run("global", Scripted("nothing useful"), tmp_path, parse_retries=0)
    assert result.model_calls == 1 and result.steps == 0
    assert result.score == pytest.approx(100 - 5 * 10.9) and result.diagnostics.invalid_action


def test_global_stops_executing_once_the_level_is_solved(tmp_path):
    result = _run("global", Scripted("### Actions\nRight, Left, Left"), tmp_path)
    assert result.steps == 1 and result.score == pytest.approx(100.0)


def test_online_takes_one_action_per_call_until_solved(tmp_path):
    model = Scripted("# analyze\nwall above\n# action\nUp", "# analyze\npush\n# action\nRight")
    result = _run("online", model, tmp_path)
    assert result.model_calls == 2 and result.steps == 2 and result.outcome == "solved"
    # the useless Up costs 0.1: B_T = -0.1 + 10.9 = 10.8, score = 100 + 5 * (10.8 - 10.9) = 99.5
    assert result.details["best_reward"] == pytest.approx(10.8)
    assert result.score == pytest.approx(99.5)


def test_online_consumes_the_turn_after_the_parse_retries_run_out(tmp_path):
    model = Scripted(*["no idea"] * 4)
    result = _run("online", model, tmp_path, max_loop=2, parse_retries=1)
    assert result.model_calls == 4 and result.steps == 0 and result.extra["decisions"] == 2
    assert result.diagnostics.invalid_decisions == 2 and result.diagnostics.invalid_action


def test_online_with_no_parse_retries_sends_the_regenerate_message_as_the_next_turn(tmp_path):
    model = Scripted("no idea", "# action\nRight")
    result = _run("online", model, tmp_path, parse_retries=0)
    assert result.model_calls == 2 and result.score == pytest.approx(100.0)
    assert model.requests[1][-1]["content"][0]["text"].startswith("Please regenerate")
    assert model.requests[1][-2] == {"role": "assistant", "content": "no idea"}


def test_online_memory_keeps_the_last_exchanges_and_only_the_newest_image():
    image = Image.new("RGB", (4, 4))
    memory = []
    for turn in range(8):
        memory.append({"role": "user", "content": [image_part(image), {"type": "text", "text": f"turn {turn}"}]})
        memory.append({"role": "assistant", "content": f"reply {turn}"})
    trimmed = _trim_memory(memory, max_memory=5, max_image=1)
    assert len(trimmed) == 10 and trimmed[0]["content"][-1]["text"] == "turn 3"
    images = [p for m in trimmed if isinstance(m["content"], list) for p in m["content"] if p["type"] == "image_url"]
    assert len(images) == 1 and trimmed[-2]["content"][0]["type"] == "image_url"
    assert trimmed[-4]["content"] == [{"type": "text", "text": "turn 6"}]


def test_the_runner_records_every_frame_call_and_step(tmp_path):
    import json

    from evaluators.runner import run_attempt

    settings = effective_settings("sokoban", "online", {"resolution": 80})
    result = run_attempt(scenario=SPEC, flow="online", settings=settings,
                         model=Scripted("# action\nUp", "no idea", "# action\nRight"), out_dir=tmp_path)
    trajectory = json.loads((tmp_path / "trajectory.json").read_text())
    assert trajectory["status"] == "scored" and trajectory["score"] == result.score == pytest.approx(99.5)
    assert [c["parse_error"] is None for c in trajectory["calls"]] == [True, False, True]
    assert [s["action"] for s in trajectory["steps"]] == ["Up", "Right"]
    assert [s["call"] for s in trajectory["steps"]] == [0, 2]
    assert trajectory["initial_frame"] == "frame_0000.png"
    for step in trajectory["steps"]:
        assert (tmp_path / step["frame"]).is_file()
    image_refs = [p for m in trajectory["calls"][2]["messages"] if isinstance(m["content"], list)
                  for p in m["content"] if p["type"] == "image_ref"]
    assert image_refs == [{"type": "image_ref", "frame": trajectory["steps"][0]["frame"]}]


def test_images_beyond_max_image_are_replaced_by_a_note(tmp_path):
    from evaluators.agents.flows import UNAVAILABLE_IMAGE, _observation_parts
    from evaluators.base import Observation

    image = Image.new("RGB", (4, 4))
    observation = Observation(text="", parts=["intro", image, "after click", image.copy(), "end"])
    images: dict[int, str] = {}
    parts = _observation_parts(observation, "format", TrajectoryRecorder(tmp_path), images, max_image=1)
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "text", "text", "text"]
    assert parts[3]["text"] == UNAVAILABLE_IMAGE and parts[-1]["text"] == "format"
    assert len(images) == 1
