"""Baseline agents, the server that exposes them, and the command that starts it."""
from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from PIL import Image

from evaluators import registry
from evaluators.agents.parsing import (
    ERR_NO_ACTIONS,
    ERR_NOT_AN_ACTION,
    parse_global_actions,
    parse_online_action,
)
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, BaselineOptions, PromptSet, get_plugin
from evaluators.baselines.agents import (
    RANDOM_MAX_PLAN,
    EnvironmentProfile,
    IdleAgent,
    OracleAgent,
    Plan,
    RandomAgent,
    detect_environment,
    detect_flow,
    last_image,
    make_agent,
    play_actions,
)
from evaluators.baselines.server import FAULT_MODES, RAMBLING_REPLY, Fault, start_server
from evaluators.endpoints import ChatClient, InfraError, image_part, text_part
from evaluators.sokoban import baselines as sokoban_baselines
from evaluators.sokoban.baselines import SokobanPlanner
from evaluators.sokoban.plugin import ACTIONS as SOKOBAN_ACTIONS
from evaluators.sokoban.prompts import GLOBAL, ONLINE

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "magebench" / "resources" / "Sokoban"

TWO_BOXES = "\n".join(
    [
        "########",
        "#      #",
        "# .$ @ #",
        "#   $  #",
        "#   .  #",
        "########",
    ]
)


def _request(
    prompts: PromptSet, image: Image.Image | dict[str, Any] | None = None, *, turn: str | None = None
) -> list[dict[str, Any]]:
    """Messages laid out as the platform's flows send them (``image`` may be a ready part)."""
    content: list[dict[str, Any]] = [text_part(turn or prompts.first_turn)] if turn or prompts.first_turn else []
    if isinstance(image, Image.Image):
        content.append(image_part(image))
    elif image is not None:
        content.append(image)
    content.append(text_part(prompts.format_instruction))
    return [{"role": "system", "content": prompts.system}, {"role": "user", "content": content}]


def _jpeg_part_labelled_png(image: Image.Image) -> dict[str, Any]:
    # As the official code does, only the other way round: the label need not match the bytes.
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="JPEG", quality=90)
    encoded = base64.b64encode(buffer.getvalue()).decode()
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{encoded}"}}


def _no_env_request(prompts: PromptSet) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are playing chess."},
        {"role": "user", "content": prompts.format_instruction},
    ]


# --------------------------------------------------------------------------------------------
# Reading requests
# --------------------------------------------------------------------------------------------


def test_the_flow_is_recognised_from_the_format_the_prompt_asks_for() -> None:
    assert detect_flow(_request(GLOBAL)) == FLOW_GLOBAL
    assert detect_flow(_request(ONLINE)) == FLOW_ONLINE
    assert detect_flow([{"role": "user", "content": "hello"}]) is None


def test_earlier_assistant_replies_do_not_decide_the_flow() -> None:
    messages = _request(ONLINE) + [{"role": "assistant", "content": "### Actions\nUp"}]
    assert detect_flow(messages) == FLOW_ONLINE


def test_the_environment_is_recognised_from_the_prompt() -> None:
    assert detect_environment(_request(GLOBAL)).slug == "sokoban"
    assert detect_environment(_no_env_request(GLOBAL)) is None


def test_new_environments_can_be_registered_for_the_baselines(monkeypatch: pytest.MonkeyPatch) -> None:
    football = EnvironmentProfile("football", ("shot", "long_pass"), lambda text: "football" in text.lower())

    class FootballPlugin(type(get_plugin("football"))):  # type: ignore[misc]
        def baseline_reply(self, agent: str, messages: Any, rng: Any, options: BaselineOptions) -> str | None:
            return play_actions(football, agent, messages, rng, options)

    plugin = FootballPlugin()
    monkeypatch.setitem(registry._REGISTRY, "football", plugin)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You control a Football team."},
        {"role": "user", "content": ONLINE.format_instruction},
    ]
    assert detect_environment(messages) is plugin
    reply = RandomAgent(seed=3).reply(messages)
    assert parse_online_action(reply, football.actions).actions[0] in football.actions


def test_football_baselines_answer_in_the_official_vocabulary() -> None:
    from evaluators.football.prompts import ONLINE as FOOTBALL_ONLINE

    plugin: Any = get_plugin("football")
    messages = _request(FOOTBALL_ONLINE)
    assert detect_environment(messages).slug == "football"
    agent = RandomAgent(seed=5)
    seen = {plugin.parse("online", agent.reply(messages)).actions[0] for _ in range(200)}
    assert seen == set(plugin.ACTIONS) and all(name.startswith("action_") for name in seen)
    assert plugin.parse("online", IdleAgent().reply(messages)).actions == ["action_release_sprint"]


def test_a_football_prompt_worded_by_another_harness_is_recognised_too() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are about to play a Football game on a pitch."},
        {"role": "user", "content": [text_part("# analyze\n...\n# action\naction_left")]}]
    assert detect_environment(messages).slug == "football"


def test_the_last_image_is_decoded_whatever_its_label_says() -> None:
    first, last = Image.new("RGB", (4, 4), "red"), Image.new("RGB", (6, 2), "blue")
    messages = _request(ONLINE, first) + [{"role": "user", "content": [_jpeg_part_labelled_png(last)]}]
    decoded = last_image(messages)
    assert decoded is not None and decoded.size == (6, 2)
    assert last_image(_request(ONLINE)) is None
    bogus = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]
    assert last_image(bogus) is None


# --------------------------------------------------------------------------------------------
# Idle and random
# --------------------------------------------------------------------------------------------


def test_idle_answers_global_requests_in_format_with_no_action() -> None:
    reply = IdleAgent().reply(_request(GLOBAL))
    assert reply.startswith("### Analyze\n") and reply.endswith("### Actions")
    parsed = parse_global_actions(reply, SOKOBAN_ACTIONS)
    assert (parsed.actions, parsed.error, parsed.foreign_tokens) == ([], ERR_NO_ACTIONS, [])


def test_idle_answers_online_requests_in_format_with_no_action() -> None:
    reply = IdleAgent().reply(_request(ONLINE))
    assert reply.startswith("# analyze\n") and reply.endswith("# action")
    parsed = parse_online_action(reply, SOKOBAN_ACTIONS)
    assert (parsed.actions, parsed.error, parsed.foreign_tokens) == ([], ERR_NOT_AN_ACTION, [])


def test_random_online_replies_are_exactly_one_valid_action() -> None:
    agent = RandomAgent(seed=1)
    seen = set()
    for _ in range(60):
        parsed = parse_online_action(agent.reply(_request(ONLINE)), SOKOBAN_ACTIONS)
        assert parsed.ok and len(parsed.actions) == 1
        seen.update(parsed.actions)
    assert seen == set(SOKOBAN_ACTIONS)


def test_random_global_replies_are_one_to_fifty_valid_actions() -> None:
    agent = RandomAgent(seed=2)
    lengths = []
    for _ in range(200):
        reply = agent.reply(_request(GLOBAL))
        assert "### Actions\n" in reply
        parsed = parse_global_actions(reply, SOKOBAN_ACTIONS)
        assert parsed.ok and parsed.foreign_tokens == []
        lengths.append(len(parsed.actions))
    assert min(lengths) >= 1 and max(lengths) <= RANDOM_MAX_PLAN
    assert len(set(lengths)) > 20


def test_random_replies_differ_across_calls_but_a_seed_repeats_the_session() -> None:
    first, second = RandomAgent(seed=42), RandomAgent(seed=42)
    run_a = [first.reply(_request(GLOBAL)) for _ in range(5)]
    run_b = [second.reply(_request(GLOBAL)) for _ in range(5)]
    assert run_a == run_b
    assert len(set(run_a)) > 1
    assert RandomAgent(seed=43).reply(_request(GLOBAL)) != run_a[0]


@pytest.mark.parametrize("agent", [IdleAgent(), RandomAgent(seed=0), OracleAgent()], ids=lambda a: a.name)
def test_a_request_without_a_known_format_gets_a_reply_without_any_action(agent: Any) -> None:
    reply = agent.reply([{"role": "user", "content": "Say something."}])
    assert parse_online_action(reply, SOKOBAN_ACTIONS).error == ERR_NOT_AN_ACTION
    assert parse_global_actions(reply, SOKOBAN_ACTIONS).actions == []


@pytest.mark.parametrize("agent", [RandomAgent(seed=0), OracleAgent()], ids=lambda a: a.name)
@pytest.mark.parametrize("prompts", [GLOBAL, ONLINE], ids=["global", "online"])
def test_an_unknown_game_gets_an_in_format_reply_without_any_action(agent: Any, prompts: PromptSet) -> None:
    reply = agent.reply(_no_env_request(prompts))
    assert "cannot play" in reply
    assert parse_global_actions(reply, SOKOBAN_ACTIONS).actions == []
    assert not parse_online_action(reply, SOKOBAN_ACTIONS).ok


def test_agents_are_built_by_name() -> None:
    assert [make_agent(name).name for name in ("idle", "random", "oracle")] == ["idle", "random", "oracle"]
    with pytest.raises(ValueError, match="unknown baseline agent"):
        make_agent("genius")


# --------------------------------------------------------------------------------------------
# Oracle, with its board reader and solver replaced or real
# --------------------------------------------------------------------------------------------


class _FixedPlanner:
    def __init__(self, plan: Plan | None) -> None:
        self.plan_to_give = plan
        self.images: list[Image.Image] = []

    def plan(self, image: Image.Image) -> Plan | None:
        self.images.append(image)
        return self.plan_to_give


def test_the_oracle_plays_the_whole_plan_globally_and_its_first_move_online() -> None:
    planner = _FixedPlanner(Plan(("Left", "Down", "Up"), "A plan.", solves=True))
    oracle = OracleAgent({"sokoban": planner})
    image = Image.new("RGB", (8, 8), "green")
    global_reply = oracle.reply(_request(GLOBAL, image))
    online_reply = oracle.reply(_request(ONLINE, image))
    assert parse_global_actions(global_reply, SOKOBAN_ACTIONS).actions == ["Left", "Down", "Up"]
    assert parse_online_action(online_reply, SOKOBAN_ACTIONS).actions == ["Left"]
    assert planner.images[0].size == (8, 8)


def test_the_oracle_says_so_without_acting_when_there_is_no_image_or_no_board() -> None:
    image = Image.new("RGB", (8, 8), "green")
    no_image = OracleAgent({"sokoban": _FixedPlanner(None)}).reply(_request(ONLINE))
    unreadable = OracleAgent({"sokoban": _FixedPlanner(None)}).reply(_request(ONLINE, image))
    assert "no image" in no_image and "could not read the board" in unreadable
    for reply in (no_image, unreadable):
        assert parse_online_action(reply, SOKOBAN_ACTIONS).error == ERR_NOT_AN_ACTION


def _grid_reader(grids: dict[tuple[int, int], str]) -> Any:
    # Stands in for read_grid: each test image's size names the grid it shows.
    return lambda image: grids[image.size]


def test_the_sokoban_planner_solves_once_and_follows_its_solution_from_cached_positions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evaluators.sokoban import solver
    from evaluators.sokoban.levels import normalize_grid

    calls: list[str] = []
    real_solve = solver.solve_grid

    def counting_solve(text: str, **kwargs: Any) -> Any:
        calls.append(text)
        return real_solve(text, **kwargs)

    monkeypatch.setattr(solver, "solve_grid", counting_solve)
    # The frame after the first move, drawn by hand (walls, then the pieces) rather than simulated.
    after_first = "\n".join(
        [
            "########",
            "#      #",
            "# .$@  #",
            "#   $  #",
            "#   .  #",
            "########",
        ]
    )
    grids = {(1, 1): TWO_BOXES, (2, 2): after_first}
    planner = SokobanPlanner(reader=_grid_reader(grids))
    first = planner.plan(Image.new("RGB", (1, 1)))
    second = planner.plan(Image.new("RGB", (2, 2)))
    assert first is not None and second is not None and first.solves
    assert first.actions[0] == "Left"
    assert second.actions == first.actions[1:]
    assert calls == [normalize_grid(TWO_BOXES)]


def test_the_sokoban_planner_makes_one_harmless_move_on_a_solved_or_hopeless_board() -> None:
    solved = "\n".join(["######", "#    #", "# @* #", "#    #", "######"])
    # The box sits in a corner away from the target: no push can ever move it again.
    hopeless = "\n".join(["######", "#$   #", "#  @.#", "######"])
    # Boxed in: walls above, below and left, a box on the right.
    cornered = "\n".join(["######", "##.###", "#@$ .#", "##$###", "######"])
    grids = {(1, 1): solved, (2, 2): hopeless, (3, 3): cornered}
    planner = SokobanPlanner(reader=_grid_reader(grids))
    on_solved = planner.plan(Image.new("RGB", (1, 1)))
    on_hopeless = planner.plan(Image.new("RGB", (2, 2)))
    assert on_solved is not None and on_hopeless is not None
    assert (on_solved.actions, on_solved.solves) == (("Up",), False)
    assert "already on a target" in on_solved.note
    assert (on_hopeless.actions, on_hopeless.solves) == (("Up",), False)
    assert "cannot be solved" in on_hopeless.note
    from evaluators.sokoban.levels import parse_grid

    assert sokoban_baselines._harmless_move(parse_grid(cornered)) == "Up"


def test_the_sokoban_planner_treats_an_unreadable_board_as_no_board() -> None:
    planner = SokobanPlanner(reader=lambda image: "not a sokoban grid")
    assert planner.plan(Image.new("RGB", (1, 1))) is None


def test_the_sokoban_planner_reads_a_frame_it_has_seen_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from evaluators.sokoban import vision

    reads: list[tuple[int, int]] = []
    grids = {(8, 8): "#####\n#@$.#\n#####", (9, 8): "#####\n#.$@#\n#####"}

    def read_grid(image: Image.Image) -> str:
        reads.append(image.size)
        return grids[image.size]

    monkeypatch.setattr(vision, "read_grid", read_grid)
    planner = SokobanPlanner()
    first = planner.plan(Image.new("RGB", (8, 8), "white"))
    again = planner.plan(Image.new("RGB", (8, 8), "white"))  # another object, the same pixels
    other = planner.plan(Image.new("RGB", (9, 8), "white"))
    assert first == again and first is not None and first.actions == ("Right",)
    assert other is not None and other.actions == ("Left",)
    assert reads == [(8, 8), (9, 8)]
    planner.plan(Image.new("RGB", (8, 8), "black"))  # one pixel value differs: read again
    assert len(reads) == 3


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


def test_the_server_answers_in_the_openai_response_shape() -> None:
    with start_server(IdleAgent()) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1")
        response = requests.post(
            f"{server.url}/chat/completions",
            json={"model": "my-idle", "messages": _request(ONLINE, Image.new("RGB", (4, 4)))},
            timeout=5,
        )
        models = requests.get(f"{server.url}/models", timeout=5).json()
    assert response.status_code == 200
    body = response.json()
    assert body["id"].startswith("chatcmpl-") and body["object"] == "chat.completion"
    assert isinstance(body["created"], int) and body["model"] == "my-idle"
    choice = body["choices"][0]
    assert choice["message"]["role"] == "assistant" and choice["message"]["content"].endswith("# action")
    assert choice["finish_reason"] == "stop"
    usage = body["usage"]
    assert usage["prompt_tokens"] > 85 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert models["data"][0]["id"] == "idle"


def test_the_server_requires_the_bearer_key_when_it_has_one() -> None:
    with start_server(IdleAgent(), api_key="sk-local") as server:
        url = f"{server.url}/chat/completions"
        payload = {"model": "m", "messages": _request(ONLINE)}
        missing = requests.post(url, json=payload, timeout=5)
        wrong = requests.post(url, json=payload, headers={"Authorization": "Bearer nope"}, timeout=5)
        right = requests.post(url, json=payload, headers={"Authorization": "Bearer sk-local"}, timeout=5)
        models = requests.get(f"{server.url}/models", timeout=5)
    assert missing.status_code == wrong.status_code == models.status_code == 401
    assert missing.json()["error"]["code"] == "invalid_api_key"
    assert right.status_code == 200


@pytest.mark.parametrize(
    "body",
    [b"{not json", b"[1, 2]", json.dumps({"model": "m"}).encode(), json.dumps({"messages": "hi"}).encode()],
)
def test_the_server_answers_malformed_requests_with_a_400_json_error(body: bytes) -> None:
    with start_server(IdleAgent()) as server:
        response = requests.post(
            f"{server.url}/chat/completions", data=body, headers={"Content-Type": "application/json"}, timeout=5
        )
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_the_server_refuses_streaming_and_unknown_routes() -> None:
    with start_server(IdleAgent()) as server:
        streamed = requests.post(
            f"{server.url}/chat/completions", json={"messages": [], "stream": True}, timeout=5
        )
        unknown = requests.post(f"{server.url}/completions", json={"messages": []}, timeout=5)
    assert streamed.status_code == 400 and unknown.status_code == 404


def test_a_crashing_agent_is_a_500_not_a_dead_server() -> None:
    class Crashing:
        name = "crashing"

        def reply(self, messages: Any) -> str:
            raise RuntimeError("boom")

    with start_server(Crashing()) as server:
        first = requests.post(f"{server.url}/chat/completions", json={"messages": []}, timeout=5)
        second = requests.post(f"{server.url}/chat/completions", json={"messages": []}, timeout=5)
    assert first.status_code == second.status_code == 500


def test_faults_validate_their_settings_and_count_requests_from_one() -> None:
    assert set(FAULT_MODES) == {"500", "429", "timeout", "garbage", "drop", "empty_choices", "rambling"}
    with pytest.raises(ValueError):
        Fault("teapot")
    with pytest.raises(ValueError):
        Fault("500", first_n=0)
    assert [Fault("500", first_n=2).applies_to(n) for n in (1, 2, 3)] == [True, True, False]
    assert [Fault("500", every_n=3).applies_to(n) for n in (1, 2, 3, 6)] == [False, False, True, True]
    assert all(Fault("drop").applies_to(n) for n in (1, 50))


def test_a_429_fault_sends_its_retry_after_header() -> None:
    with start_server(IdleAgent(), fault=Fault("429", retry_after=2)) as server:
        response = requests.post(f"{server.url}/chat/completions", json={"messages": []}, timeout=5)
    assert response.status_code == 429 and response.headers["Retry-After"] == "2"


def test_a_rambling_fault_is_a_well_formed_completion_that_holds_no_action() -> None:
    messages = [{"role": "user", "content": "# action"}]
    with start_server(IdleAgent(), fault=Fault("rambling", every_n=2)) as server:
        client = ChatClient(server.url, "idle")
        first, second = (client.complete(messages, temperature=0.0, max_tokens=50).text for _ in range(2))
    assert second == RAMBLING_REPLY != first
    assert parse_online_action(RAMBLING_REPLY, SOKOBAN_ACTIONS).error == ERR_NOT_AN_ACTION


def test_stopping_the_server_ends_a_stalled_timeout_fault_at_once() -> None:
    server = start_server(IdleAgent(), fault=Fault("timeout", delay=30))
    client = ChatClient(server.url, "m", timeout=0.2, max_retries=0)
    with pytest.raises(InfraError):
        client.complete(_request(ONLINE), temperature=0, max_tokens=5)
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 2


# --------------------------------------------------------------------------------------------
# The oracle end to end: rendered frame -> real server -> real client -> replay in gym-sokoban
# --------------------------------------------------------------------------------------------

_ACTION_CODES = {"Up": 1, "Down": 2, "Left": 3, "Right": 4}


def _fixture_levels() -> list[tuple[str, str]]:
    """A hand-made level and the first fixture level of each gym-sokoban variant."""
    levels = [("two-boxes", TWO_BOXES)]
    seen: set[str] = set()
    for path in sorted(FIXTURES.glob("*.txt"), key=lambda p: int(p.name.split("-", 1)[0])):
        variant = path.stem.split("-", 1)[1]
        if variant not in seen:
            seen.add(variant)
            levels.append((path.stem, path.read_text(encoding="utf-8")))
    return levels


def _frame(env: Any) -> Image.Image:
    from evaluators.sokoban.levels import render_rgb

    image = Image.fromarray(render_rgb(env.room_fixed, env.room_state))
    # The platform upscales the 16-px tiles so the longest side is 640 px.
    scale = 640 / max(image.size)
    return image.resize((round(image.width * scale), round(image.height * scale)), Image.Resampling.LANCZOS)


def _all_boxes_on_targets(env: Any) -> bool:
    from evaluators.sokoban.levels import level_from_env

    return level_from_env(env).is_solved()


@pytest.mark.parametrize(("name", "grid"), _fixture_levels(), ids=[name for name, _ in _fixture_levels()])
def test_the_oracle_solves_rendered_levels_through_the_real_server_in_the_global_flow(name: str, grid: str) -> None:
    pytest.importorskip("evaluators.sokoban.vision")
    from evaluators.sokoban.levels import env_from_grid

    env = env_from_grid(grid)
    with start_server(OracleAgent(), api_key="sk-oracle") as server:
        client = ChatClient(server.url, "oracle", "sk-oracle", timeout=60, max_retries=0)
        completion = client.complete(_request(GLOBAL, _frame(env)), temperature=0.1, max_tokens=1000)
    parsed = parse_global_actions(completion.text, SOKOBAN_ACTIONS)
    assert parsed.ok and parsed.foreign_tokens == []
    for action in parsed.actions:
        env.step(_ACTION_CODES[action], observation_mode="tiny_rgb_array")
    assert _all_boxes_on_targets(env), f"{name}: {completion.text}"


def test_the_oracle_solves_a_level_move_by_move_in_the_online_flow_from_jpeg_frames() -> None:
    pytest.importorskip("evaluators.sokoban.vision")
    from evaluators.sokoban.levels import env_from_grid

    name, grid = _fixture_levels()[-1]
    env = env_from_grid(grid)
    with start_server(OracleAgent()) as server:
        client = ChatClient(server.url, "oracle", timeout=60, max_retries=0)
        for turn in range(100):
            prompt = ONLINE.first_turn if turn == 0 else ONLINE.next_turn
            messages = _request(ONLINE, _jpeg_part_labelled_png(_frame(env)), turn=prompt)
            reply = client.complete(messages, temperature=0.1, max_tokens=300).text
            parsed = parse_online_action(reply, SOKOBAN_ACTIONS)
            assert parsed.ok, reply
            env.step(_ACTION_CODES[parsed.actions[0]], observation_mode="tiny_rgb_array")
            if _all_boxes_on_targets(env):
                break
    assert _all_boxes_on_targets(env), name


def test_the_baselines_answer_with_their_own_policies_where_no_environments_are_loaded() -> None:
    # Plain Python, no Django: the registry is empty, so no plug-in is asked.
    script = ("from evaluators.baselines.agents import make_agent; "
              "print(make_agent('random', seed=1).reply([{'role': 'system', 'content': 'You are playing Sokoban.'}, "
              "{'role': 'user', 'content': '# action'}]))")
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[2],
                          env={k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert parse_online_action(done.stdout.strip(), SOKOBAN_ACTIONS).ok
