"""The Global and Online flows with scripted replies on a one-push level (R_ub = 10.9)."""
from __future__ import annotations

import json
from typing import Any

import pytest
from PIL import Image

from evaluators.agents.flows import _trim_memory, run_global, run_online
from evaluators.base import ScenarioSpec, get_plugin
from evaluators.endpoints.messages import Completion, image_part
from evaluators.endpoints.profile import OFFICIAL_PROFILE
from evaluators.runner import effective_settings
from evaluators.sokoban.env import SokobanEpisode
from evaluators.trajectory import TrajectoryRecorder

ONE_PUSH = "#####\n#@$.#\n#####"
SPEC = ScenarioSpec(env="sokoban", key="one-push", data={
    "grid": ONE_PUSH, "max_steps": 120, "upper_bound": {"actions": ["R"], "steps": 1, "reward": 10.9}})


class Scripted:
    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.requests: list[list[dict[str, Any]]] = []
        self.sampling: list[dict[str, Any]] = []

    def complete(self, messages, **sampling):
        self.requests.append(messages)
        self.sampling.append(sampling)
        return Completion(text=self.replies.pop(0), prompt_tokens=10, completion_tokens=2, latency=0.0, attempts=1,
                          finish_reason="stop")


def _roles(request: list[dict[str, Any]]) -> list[str]:
    return [message["role"] for message in request]


def _kinds(message: dict[str, Any]) -> list[str]:
    return [part["type"] for part in message["content"]]


def _run(flow: str, model: Scripted, tmp_path, **overrides):
    plugin = get_plugin("sokoban")
    settings = effective_settings("sokoban", flow, {"resolution": 80, **overrides})
    runner = run_global if flow == "global" else run_online
    return runner(plugin, plugin.new_episode(SPEC, settings), model, settings, TrajectoryRecorder(tmp_path))


def test_global_executes_the_parsed_actions_and_scores_a_solution_100(tmp_path):
    result = _run("global", Scripted("### Analyze\npush it\n### Actions\nRight"), tmp_path)
    assert result.score == pytest.approx(100.0) and result.steps == 1 and result.model_calls == 1
    assert result.outcome == "solved" and result.prompt_tokens == 10 and result.completion_tokens == 2


def test_global_sends_the_rules_as_a_string_then_the_image_and_the_format_instruction(tmp_path):
    model = Scripted("### Actions\nRight")
    _run("global", model, tmp_path)
    system, user = model.requests[0]
    assert system["role"] == "system" and isinstance(system["content"], str) and "Sokoban" in system["content"]
    assert _kinds(user) == ["image_url", "text"] and "### Actions" in user["content"][1]["text"]
    assert user["content"][0]["image_url"]["url"].startswith("data:image/jpeg;base64,")


def test_global_with_the_default_settings_makes_one_generation(tmp_path):
    model = Scripted("I am not sure.", "### Actions\nRight")
    result = _run("global", model, tmp_path)
    assert result.model_calls == 1 and result.steps == 0 and result.outcome == "no_action"
    assert result.score == pytest.approx(100 - 5 * 10.9) and result.diagnostics.invalid_action


def test_global_asks_again_only_with_the_paper_retry_option_and_the_failed_reply_stays_ia(tmp_path):
    model = Scripted("I am not sure.", "### Actions\nRight")
    result = _run("global", model, tmp_path, parse_retries=2)
    assert result.model_calls == 2 and result.score == pytest.approx(100.0)
    assert result.diagnostics.parse_errors == 1 and result.diagnostics.invalid_decisions == 0
    assert result.diagnostics.invalid_action  # the first reply broke the format; the retry does not undo it
    assert _roles(model.requests[1]) == ["system", "user", "assistant", "user"]
    assert model.requests[1][-1]["content"][0]["text"] == get_plugin("sokoban").prompts("global").regenerate


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


def test_online_by_default_counts_a_failed_reply_as_a_turn_and_sends_the_regenerate_message_next(tmp_path):
    model = Scripted("no idea", "# action\nRight")
    result = _run("online", model, tmp_path, max_loop=2)
    assert result.model_calls == 2 and result.extra["decisions"] == 2 and result.score == pytest.approx(100.0)
    assert model.requests[1][-1]["content"] == [{"type": "text", "text": prompts_regenerate()}]
    assert model.requests[1][-2] == {"role": "assistant", "content": [{"type": "text", "text": "no idea"}]}


def test_online_with_the_default_settings_never_asks_twice_within_a_turn(tmp_path):
    model = Scripted("no idea", "still no idea")
    result = _run("online", model, tmp_path, max_loop=2)
    assert result.model_calls == 2 and result.extra["decisions"] == 2 and result.steps == 0


def prompts_regenerate() -> str:
    return get_plugin("sokoban").prompts("online").regenerate


def test_online_requests_one_to_five_send_the_format_and_the_first_observation_as_one_user_message(tmp_path):
    model = Scripted(*["# action\nUp"] * 6)  # Up walks into the wall: six turns, nothing changes
    _run("online", model, tmp_path, max_loop=6)
    online = get_plugin("sokoban").prompts("online")
    for number, request in enumerate(model.requests[:5]):
        assert _roles(request) == ["system", "user"] + ["assistant", "user"] * number
        system, opening = request[0], request[1]
        assert system["content"] == [{"type": "text", "text": online.system}]
        # max_image = 1: the first frame stays only while it is the newest one.
        assert _kinds(opening) == (["text", "image_url", "text"] if number == 0 else ["text", "text"])
        assert opening["content"][0]["text"] == online.format_instruction
        assert opening["content"][-1]["text"] == online.first_turn
    sixth = model.requests[5]
    assert _roles(sixth) == ["system", "user"] + ["assistant", "user"] * 5  # 2 + 2 · max_memory messages
    assert sixth[1]["content"] == [{"type": "text", "text": online.format_instruction}]


def test_no_request_of_either_flow_holds_two_consecutive_messages_of_one_role(tmp_path):
    online = Scripted("no idea", "# action\nUp", "# action\nRight")
    _run("online", online, tmp_path / "online", parse_retries=1)
    globally = Scripted("nothing", "### Actions\nRight")
    _run("global", globally, tmp_path / "global", parse_retries=1)
    for request in online.requests + globally.requests:
        roles = _roles(request)
        assert all(a != b for a, b in zip(roles, roles[1:])), roles


def test_the_no_system_role_variant_opens_the_first_user_message_with_the_rules(tmp_path):
    online, globally = Scripted("# action\nRight"), Scripted("### Actions\nRight")
    _run("online", online, tmp_path / "online", no_system_role=True)
    _run("global", globally, tmp_path / "global", no_system_role=True)
    plugin = get_plugin("sokoban")
    (opening,) = online.requests[0]
    assert opening["role"] == "user" and _kinds(opening) == ["text", "text", "image_url", "text"]
    assert [p.get("text") for p in opening["content"]] == [
        plugin.prompts("online").system, plugin.prompts("online").format_instruction, None,
        plugin.prompts("online").first_turn]
    (only,) = globally.requests[0]
    assert only["role"] == "user" and _kinds(only) == ["text", "image_url", "text"]
    assert only["content"][0]["text"] == plugin.prompts("global").system


@pytest.mark.parametrize("flow, max_tokens", [("global", 1000), ("online", 300)])
def test_every_request_carries_the_official_sampling_settings(tmp_path, flow, max_tokens):
    model = Scripted("### Actions\nRight" if flow == "global" else "# action\nRight")
    _run(flow, model, tmp_path)
    assert model.sampling == [{"temperature": 0.1, "top_p": 0.95, "frequency_penalty": 1.0,
                               "max_tokens": max_tokens, "profile": OFFICIAL_PROFILE}]
    body = model.sampling[0]["profile"].body(temperature=0.1, max_tokens=max_tokens, top_p=0.95, frequency_penalty=1.0)
    assert body == {"temperature": 0.1, "top_p": 0.95, "frequency_penalty": 1.0, "max_tokens": max_tokens}


@pytest.mark.parametrize("env, flow, max_tokens", [("sokoban", "global", 1000), ("sokoban", "online", 300),
                                                   ("football", "online", 1000), ("webui", "global", 4000)])
def test_the_frozen_defaults_are_the_official_request_settings(env, flow, max_tokens):
    settings = effective_settings(env, flow)
    assert {k: getattr(settings, k) for k in ("temperature", "top_p", "frequency_penalty", "max_tokens",
                                              "parse_retries", "no_system_role")} == {
        "temperature": 0.1, "top_p": 0.95, "frequency_penalty": 1.0, "max_tokens": max_tokens, "parse_retries": 0,
        "no_system_role": False}


def test_an_uploaded_run_replays_through_the_same_flow(tmp_path):
    from evaluators.agents.replay import RecordedModel

    plugin = get_plugin("sokoban")
    settings = effective_settings("sokoban", "online", {"resolution": 80})
    result = run_online(plugin, plugin.new_episode(SPEC, settings), RecordedModel(["Up", "no idea", "Right"]),
                        settings, TrajectoryRecorder(tmp_path))
    assert result.model_calls == 3 and result.steps == 2 and result.score == pytest.approx(99.5)
    assert result.diagnostics.invalid_action and not result.diagnostics.repeating_action


CORRIDOR = "############\n#@       $.#\n############"
CORRIDOR_SPEC = ScenarioSpec(env="sokoban", key="corridor", data={
    "grid": CORRIDOR, "max_steps": 120, "upper_bound": {"actions": ["r"] * 7 + ["R"], "steps": 8, "reward": 10.2}})


def test_a_global_plan_of_many_identical_moves_that_change_the_board_is_not_repeating(tmp_path):
    plugin = get_plugin("sokoban")
    settings = effective_settings("sokoban", "global", {"resolution": 80})
    model = Scripted("### Analyze\nstraight on\n### Actions\n" + ", ".join(["Right"] * 8))
    result = run_global(plugin, plugin.new_episode(CORRIDOR_SPEC, settings), model, settings,
                        TrajectoryRecorder(tmp_path))
    assert result.steps == 8 and result.score == pytest.approx(100.0)
    assert not result.diagnostics.repeating_action and not result.diagnostics.invalid_action


def test_a_global_plan_that_keeps_walking_into_a_wall_is_repeating(tmp_path):
    result = _run("global", Scripted("### Actions\n" + ", ".join(["Up"] * 5 + ["Right"])), tmp_path)
    assert result.steps == 6 and result.score == pytest.approx(100 + 5 * (10.4 - 10.9))
    assert result.diagnostics.repeating_action and result.diagnostics.longest_noop_streak == 5


def test_four_moves_into_a_wall_are_not_yet_repeating(tmp_path):
    result = _run("global", Scripted("### Actions\n" + ", ".join(["Up"] * 4 + ["Right"])), tmp_path)
    assert not result.diagnostics.repeating_action


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


@pytest.mark.parametrize("flow", ["global", "online"])
def test_a_step_frame_no_model_sees_is_kept_at_gym_sokobans_own_size_and_a_seen_one_as_sent(tmp_path, flow):
    reply = "### Actions\nLeft, Right" if flow == "global" else "# action\nRight"
    settings = effective_settings("sokoban", flow, {"resolution": 240})
    plugin = get_plugin("sokoban")
    episode = plugin.new_episode(SPEC, settings)
    assert isinstance(episode, SokobanEpisode)
    runner = run_global if flow == "global" else run_online
    recorder = TrajectoryRecorder(tmp_path)
    runner(plugin, episode, Scripted(reply, reply), settings, recorder)
    recorder.finish({})
    trajectory = json.loads((tmp_path / "trajectory.json").read_text())
    with Image.open(tmp_path / trajectory["initial_frame"]) as initial:
        assert initial.size == (240, 144)  # the board of 5 by 3 tiles, as the model was sent it
    frames = [tmp_path / step["frame"] for step in trajectory["steps"]]
    assert len(frames) == (2 if flow == "global" else 1)
    with Image.open(frames[-1]) as last:
        if flow == "global":
            # 16 px tiles, the same board as the solved room rendered by gym-sokoban
            assert last.size == (80, 48)
            assert last.convert("RGB").tobytes() == episode.render_native().tobytes()
        else:
            assert last.size == (240, 144)


def test_images_beyond_max_image_are_replaced_by_the_prompt_sets_note(tmp_path):
    from evaluators.agents.flows import _observation_parts
    from evaluators.base import Observation

    prompts = get_plugin("sokoban").prompts("global")
    image = Image.new("RGB", (4, 4))
    observation = Observation(text="", parts=["intro", image, "after click", image.copy(), "end"])
    images: dict[int, str] = {}
    parts = _observation_parts(observation, "format", TrajectoryRecorder(tmp_path), images, max_image=1,
                               prompts=prompts, settings=effective_settings("sokoban", "global"))
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "text", "text", "text"]
    assert parts[3]["text"] == prompts.unavailable_image == "(image left out)" and parts[-1]["text"] == "format"
    assert len(images) == 1


def test_images_go_out_labelled_image_jpeg_as_officially_and_image_png_only_with_the_labelled_option(tmp_path):
    from evaluators.agents.flows import _observation_parts
    from evaluators.base import Observation

    prompts = get_plugin("sokoban").prompts("online")
    observation = Observation(text="", image=Image.new("RGB", (4, 4)))
    urls = []
    for overrides in ({}, {"png_image_label": True}):
        settings = effective_settings("sokoban", "online", overrides)
        parts = _observation_parts(observation, "", TrajectoryRecorder(tmp_path), {}, prompts=prompts,
                                   settings=settings)
        urls.append(parts[0]["image_url"]["url"])
    assert urls[0].startswith("data:image/jpeg;base64,iVBORw0KGgo")  # PNG bytes, as officially
    assert urls[1].startswith("data:image/png;base64,iVBORw0KGgo")
    assert urls[0].split(",")[1] == urls[1].split(",")[1]
    assert effective_settings("sokoban", "online", {"png_image_label": True}).variant_names() == ["png_image_label"]


def test_a_frame_recorded_after_another_was_freed_is_stored_as_its_own_picture(tmp_path):
    # A freed image's id is soon reused by a new one: the recorder must not take the new frame for the old.
    recorder = TrajectoryRecorder(tmp_path)
    names = []
    for shade in range(40):
        names.append(recorder.frame(Image.new("RGB", (4, 4), (shade, 0, 0))))
    assert len(set(names)) == 40
    for shade, name in enumerate(names):
        with Image.open(tmp_path / name) as stored:
            assert stored.getpixel((0, 0)) == (shade, 0, 0)
    image = Image.new("RGB", (4, 4))
    assert recorder.frame(image) == recorder.frame(image)  # the same live image is stored once


def test_a_frame_sent_to_the_model_and_kept_for_the_replay_is_encoded_once(tmp_path, monkeypatch):
    import base64

    from evaluators import images

    encodings = []
    real_encoding = images._encoded_png

    def counting_encoding(image):
        encodings.append("PNG")
        return real_encoding(image)

    monkeypatch.setattr(images, "_encoded_png", counting_encoding)
    frame = Image.new("RGB", (64, 36), (10, 120, 30))
    url = image_part(frame)["image_url"]["url"]
    name = TrajectoryRecorder(tmp_path).frame(frame)
    assert encodings == ["PNG"]
    assert (tmp_path / name).read_bytes() == base64.b64decode(url.split(",", 1)[1]) == images.png_bytes(frame)
    image_part(Image.new("RGB", (64, 36), (10, 120, 30)))  # another image, though alike, is encoded anew
    assert encodings == ["PNG", "PNG"]
