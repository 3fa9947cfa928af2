"""Every request the platform sends, as it reaches an OpenAI-compatible endpoint, is composed as the
official MageBench flows compose theirs.

Each episode plays against a recording HTTP endpoint on 127.0.0.1 (scripted_server.py) through the
real endpoint client, with the prompt sets read from fixtures/official-checkout and again with the
plug-in's own prompt sets. The expected requests are written out below from the official composition
rules and the prompt set's texts:

- every request has the keys model, messages, temperature, top_p, frequency_penalty and max_tokens;
  the model is the first id the endpoint lists; consecutive messages of one role are merged;
- an image is PNG bytes in a data URL labelled image/jpeg, its longest side the resolution and each
  side truncated to whole pixels;
- Global: the rules as a plain string, then one user message with the observation and the format;
- Online: the rules as one text part, the format, then a memory window of ``2·max_memory`` messages
  whose older images are dropped once the newer ones hold ``max_image``;
- WebUI Online: each refinement round repeats the rules and the whole description, then the current
  code, a screenshot and the refinement text; a reply cut inside a code block is followed by one
  request for the rest.

An image in an expected request is written ``Shown(name)``: the request's image is checked (label,
PNG signature, size) and named by the known picture it equals pixel for pixel.
"""
from __future__ import annotations

import base64
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from evaluators.agents.checkout import OfficialCheckout
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, PromptSet, ScenarioSpec, get_plugin
from evaluators.endpoints.client import ChatClient
from evaluators.football.official import official_prompt_set as football_official
from evaluators.football.resources import discover_football
from evaluators.runner import effective_settings, run_attempt
from evaluators.sokoban.official import official_prompt_set as sokoban_official
from evaluators.tests.scripted_server import ScriptedServer
from evaluators.webui.official import official_prompt_set as webui_official

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = OfficialCheckout(ROOT / "fixtures" / "official-checkout")
RESOURCES = ROOT / "fixtures" / "magebench" / "resources"

OFFICIAL_SETS = {"sokoban": sokoban_official, "football": football_official, "webui": webui_official}
#: The prompt sets an attempt runs with: read from the official checkout, or the plug-in's own.
SOURCES = ("checkout", "platform")

REQUEST_KEYS = {"model", "messages", "temperature", "top_p", "frequency_penalty", "max_tokens"}
LISTED = {"object": "list", "data": [{"id": "first-listed", "object": "model"},
                                     {"id": "second-listed", "object": "model"}]}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
OFFICIAL_LABEL = "image/jpeg"


# --- the expected requests, written out ----------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """An image part showing the picture called ``name``."""

    name: str


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def system(content: str | list[Any]) -> dict[str, Any]:
    return {"role": "system", "content": content}


def user(content: str | list[Any]) -> dict[str, Any]:
    return {"role": "user", "content": content}


def assistant(content: str | list[Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def said(reply: str) -> dict[str, Any]:
    """A reply kept in an Online memory: one text part."""
    return assistant([text(reply)])


# --- the endpoint and what it received -----------------------------------------------------------


def chat_answer(reply: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": "first-listed",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


@dataclass
class Played:
    """What one attempt sent: the chat request bodies in order, and the folder it recorded to."""

    bodies: list[dict[str, Any]]
    out: Path

    def frames(self) -> dict[str, Image.Image]:
        """The observation frames the attempt recorded: its first scene, then one per executed action."""
        trajectory = json.loads((self.out / "trajectory.json").read_text())
        names = {"start": trajectory["initial_frame"]}
        names.update({f"after action {n}": step["frame"] for n, step in enumerate(trajectory["steps"], 1)})
        return {name: Image.open(self.out / file).convert("RGB") for name, file in names.items()}


def play(env: str, flow: str, scenario: ScenarioSpec, replies: list[str], out: Path, *,
         prompts: PromptSet | Mapping[str, PromptSet] | None, **overrides: Any) -> Played:
    """Plays one attempt against a recording endpoint answering ``replies`` in order, with no model
    named: the client asks /models first and calls the first model listed."""
    answers: list[tuple[int, Any, dict[str, str]]] = [(200, LISTED, {})]
    answers += [(200, chat_answer(reply), {}) for reply in replies]
    settings = effective_settings(env, flow, overrides)
    with ScriptedServer(answers) as server, ChatClient(server.url, model="") as client:
        run_attempt(scenario=scenario, flow=flow, settings=settings, model=client, out_dir=out, prompts=prompts)
    calls = [(request["method"], request["path"]) for request in server.requests]
    assert calls == [("GET", "/v1/models")] + [("POST", "/v1/chat/completions")] * len(replies)
    return Played([request["json"] for request in server.requests[1:]], out)


def decoded(url: str, label: str) -> tuple[bytes, Image.Image]:
    prefix = f"data:{label};base64,"
    assert url.startswith(prefix), url[:40]
    data = base64.b64decode(url[len(prefix):], validate=True)
    assert data.startswith(PNG_SIGNATURE), "the bytes are not PNG"
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG"
    return data, image.convert("RGB")


def wire(body: dict[str, Any], *, model: str = "first-listed", max_tokens: int,
         pictures: Mapping[str, Image.Image], sizes: Mapping[str, tuple[int, int]],
         label: str = OFFICIAL_LABEL) -> list[dict[str, Any]]:
    """The messages of one request body, each image part checked and written as ``Shown(name)``.

    The body's keys and sampling values are checked first. An image must be labelled ``label``,
    carry PNG bytes and decode to the size its name gives in ``sizes``; it is named by the picture
    of ``pictures`` it equals pixel for pixel, or by the one name in ``sizes`` without a picture.
    """
    assert set(body) == REQUEST_KEYS
    assert body["model"] == model
    assert (body["temperature"], body["top_p"], body["frequency_penalty"]) == (0.1, 0.95, 1.0)
    assert body["max_tokens"] == max_tokens
    unseen = [name for name in sizes if name not in pictures]
    messages = []
    for message in body["messages"]:
        assert set(message) == {"role", "content"}
        content = message["content"]
        if isinstance(content, list):
            parts: list[Any] = []
            for part in content:
                if part.get("type") != "image_url":
                    assert set(part) == {"type", "text"}
                    parts.append(part)
                    continue
                assert set(part) == {"type", "image_url"} and set(part["image_url"]) == {"url"}
                _, image = decoded(part["image_url"]["url"], label)
                same = [name for name, picture in pictures.items()
                        if picture.size == image.size and picture.tobytes() == image.tobytes()]
                names = same or unseen
                assert len(names) == 1, f"an image of size {image.size} matches {names or 'no known picture'}"
                assert image.size == sizes[names[0]], names[0]
                parts.append(Shown(names[0]))
            content = parts
        messages.append({"role": message["role"], "content": content})
    return messages


def official_size(native: tuple[int, int], resolution: int) -> tuple[int, int]:
    """The official resize: the longest side becomes ``resolution``, each side truncated."""
    width, height = native
    scale = resolution / float(max(width, height))
    return int(width * scale), int(height * scale)


def prompt_sets(env: str, source: str, *flows: str) -> tuple[dict[str, PromptSet], dict[str, PromptSet] | None]:
    """The prompt sets of ``flows`` an attempt runs with, and what to pass run_attempt for them
    (None for the plug-in's own, which the attempt then picks itself)."""
    if source == "checkout":
        sets = {flow: OFFICIAL_SETS[env](CHECKOUT, flow) for flow in flows}
        return sets, sets
    own = {flow: get_plugin(env).prompts(flow) for flow in flows}
    for flow in flows:
        # The plug-in's own texts are not the checkout's: the requests below show which were sent.
        assert own[flow].system != OFFICIAL_SETS[env](CHECKOUT, flow).system
    return own, None


# --- Sokoban ------------------------------------------------------------------------------------

# The worker walks right twice, then pushes the crate onto the goal. gym-sokoban draws 16 pixels a
# tile: 112×48, shown at 100×42 (48 · 100/112 = 42.86, truncated).
THREE_STEPS = ScenarioSpec(env="sokoban", key="three-steps", data={
    "grid": "#######\n#@  $.#\n#######", "max_steps": 120,
    "upper_bound": {"actions": ["R", "R", "R"], "steps": 3, "reward": 10.7}})
SOKOBAN_NATIVE = (112, 48)
SOKOBAN_RESOLUTION = 100


@pytest.mark.parametrize("source", SOURCES)
def test_a_sokoban_global_request_is_composed_as_the_official_flow_composes_it(source: str, tmp_path: Path) -> None:
    sets, given = prompt_sets("sokoban", source, FLOW_GLOBAL)
    texts = sets[FLOW_GLOBAL]
    reply = "### Analyze\nwalk twice, then push\n### Actions\nRight, Right, Right"
    played = play("sokoban", FLOW_GLOBAL, THREE_STEPS, [reply], tmp_path, prompts=given,
                  resolution=SOKOBAN_RESOLUTION)

    size = official_size(SOKOBAN_NATIVE, SOKOBAN_RESOLUTION)
    assert size == (100, 42)
    [body] = played.bodies
    assert texts.first_turn == ""  # nothing comes before the level's picture
    assert wire(body, max_tokens=1000, pictures=played.frames(), sizes={"start": size}) == [
        system(texts.system),
        user([Shown("start"), text(texts.format_instruction)]),
    ]


@pytest.mark.parametrize("source", SOURCES)
def test_sokoban_online_requests_are_composed_as_the_official_flow_composes_them(source: str, tmp_path: Path) -> None:
    sets, given = prompt_sets("sokoban", source, FLOW_ONLINE)
    texts = sets[FLOW_ONLINE]
    move, unreadable = "# analyze\none step to the crate\n# action\nRight", "I would rather not say."
    # Move, an unreadable reply, move, then the push that solves the level: four requests, the last
    # one never answered with a new scene. max_memory 2: the window is the last 4 memory messages.
    played = play("sokoban", FLOW_ONLINE, THREE_STEPS, [move, unreadable, move, move], tmp_path, prompts=given,
                  resolution=SOKOBAN_RESOLUTION, max_memory=2, max_loop=6)

    size = official_size(SOKOBAN_NATIVE, SOKOBAN_RESOLUTION)
    frames = played.frames()
    sizes = {name: size for name in frames}
    header = [system([text(texts.system)]), user([text(texts.format_instruction)])]
    opening = [Shown("start"), text(texts.first_turn)]
    first_move = [said(move), user([Shown("after action 1"), text(texts.next_turn)])]
    regenerate = [said(unreadable), user([text(texts.regenerate)])]
    second_move = [said(move), user([Shown("after action 2"), text(texts.next_turn)])]
    assert [wire(body, max_tokens=300, pictures=frames, sizes=sizes) for body in played.bodies] == [
        # The format and the first scene are one user message once merged.
        [header[0], user([text(texts.format_instruction), *opening])],
        # max_image 1: the newer scene keeps its image, the first scene loses it.
        [header[0], user([text(texts.format_instruction), text(texts.first_turn)]), *first_move],
        # The window (4 messages) no longer holds the first scene; a regenerate turn has no image.
        [*header, *first_move, *regenerate],
        [*header, *regenerate, *second_move],
    ]


def test_images_labelled_png_carry_the_same_bytes_as_the_official_jpeg_label(tmp_path: Path) -> None:
    texts = sokoban_official(CHECKOUT, FLOW_GLOBAL)
    reply = "### Actions\nRight, Right, Right"
    sent: dict[str, list[bytes]] = {}
    for label, overrides in (("image/jpeg", {}), ("image/png", {"png_image_label": True})):
        played = play("sokoban", FLOW_GLOBAL, THREE_STEPS, [reply], tmp_path / label.replace("/", "-"),
                      prompts=texts, resolution=SOKOBAN_RESOLUTION, **overrides)
        [body] = played.bodies
        size = official_size(SOKOBAN_NATIVE, SOKOBAN_RESOLUTION)
        assert wire(body, max_tokens=1000, pictures=played.frames(), sizes={"start": size}, label=label) == [
            system(texts.system), user([Shown("start"), text(texts.format_instruction)])]
        sent[label] = [decoded(part["image_url"]["url"], label)[0] for part in body["messages"][1]["content"]
                       if part["type"] == "image_url"]
    assert len(sent["image/png"]) == 1
    assert sent["image/png"] == sent["image/jpeg"]


# --- Football -----------------------------------------------------------------------------------

FOOTBALL_NATIVE = (1280, 720)
FOOTBALL_RESOLUTION = 300  # 720 · 300/1280 = 168.75, truncated to 168


@pytest.fixture(scope="module")
def football_scenario() -> ScenarioSpec:
    [found] = [s for s in discover_football(RESOURCES) if s.key == "R3_R_1"]
    return ScenarioSpec(env="football", key=found.key, data=found.data, resource_path=found.resource_file)


@pytest.mark.parametrize("source", SOURCES)
def test_football_online_requests_are_composed_as_the_official_flow_composes_them(
        source: str, football_scenario: ScenarioSpec, tmp_path: Path) -> None:
    sets, given = prompt_sets("football", source, FLOW_ONLINE)
    texts = sets[FLOW_ONLINE]
    assert texts.observation_lead
    run, unreadable = "# analyze\nspace ahead\n# action\naction_right", "Pass, maybe?"
    played = play("football", FLOW_ONLINE, football_scenario, [run, unreadable, run], tmp_path, prompts=given,
                  seed=9, resolution=FOOTBALL_RESOLUTION, max_loop=3)

    size = official_size(FOOTBALL_NATIVE, FOOTBALL_RESOLUTION)
    assert size == (300, 168)
    frames = played.frames()
    sizes = {name: size for name in frames}
    lead = text(texts.observation_lead)
    header = system([text(texts.system)])
    first_scene = user([text(texts.format_instruction), lead, text(texts.first_turn)])
    after_run = [said(run), user([lead, Shown("after action 1"), text(texts.next_turn)])]
    assert [wire(body, max_tokens=1000, pictures=frames, sizes=sizes) for body in played.bodies] == [
        [header, user([text(texts.format_instruction), lead, Shown("start"), text(texts.first_turn)])],
        # max_image 1: only the newest scene keeps its image; its lead text stays.
        [header, first_scene, *after_run],
        [header, first_scene, *after_run, said(unreadable), user([text(texts.regenerate)])],
    ]


# --- WebUI --------------------------------------------------------------------------------------

PAGE = RESOURCES / "WebUI" / "step-counter"
PAGE_SPEC = ScenarioSpec(env="webui", key="step-counter", data={"page": "step-counter"}, resource_path=PAGE)
#: The image links of the page's tasks.md, in order.
LINKS = (
    ("![The counter as first loaded](./_images/origin.png)", "origin.png"),
    ("![After clicking +1 twice](./_images/after_press_increment_twice.png)", "after_press_increment_twice.png"),
    ("![After clicking −1 once](./_images/after_press_decrement.png)", "after_press_decrement.png"),
    ("![After reaching the goal](./_images/after_reach_goal.png)", "after_reach_goal.png"),
)
WEBUI_RESOLUTION = 300
#: The page's viewport: what the official harness's 1920×1080 window leaves it under today's headless Chromium.
SCREENSHOT_NATIVE = (1920, 937)

HTML = ('<!DOCTYPE html>\n<html lang="en">\n<head><link rel="stylesheet" href="style.css"></head>\n'
        '<body><main class="counter-card"><h1 class="title">Stair Counter</h1></main></body>\n</html>')
CSS = "body { background: #eef2f7; }\n.title { color: #4f46e5; }"


def described(max_image: int | None, unavailable: str) -> list[Any]:
    """tasks.md as the official environment splits it: every stretch of text between the image
    links (a newline alone included), and each linked image; past ``max_image`` images, a text."""
    source = (PAGE / "tasks.md").read_text(encoding="utf-8")
    parts: list[Any] = []
    for link, name in LINKS:
        before, found, source = source.partition(link)
        assert found and before
        parts.append(text(before))
        shown = sum(isinstance(part, Shown) for part in parts)
        parts.append(Shown(name) if max_image is None or shown < max_image else text(unavailable))
    assert source == "\n"  # the file ends with the last link and a newline
    return [*parts, text(source)]


def page_pictures() -> tuple[dict[str, Image.Image], dict[str, tuple[int, int]]]:
    """The description's images resized as the official environment resizes them (LANCZOS)."""
    pictures, sizes = {}, {}
    for _, name in LINKS:
        with Image.open(PAGE / "_images" / name) as image:
            size = official_size(image.size, WEBUI_RESOLUTION)
            pictures[name] = image.convert("RGB").resize(size, Image.Resampling.LANCZOS)
            sizes[name] = size
    sizes["screenshot"] = official_size(SCREENSHOT_NATIVE, WEBUI_RESOLUTION)
    return pictures, sizes


FIRST_PAGE = f"Here is the page.\n```html\n{HTML}\n```\n```css\n{CSS}\n```\n"


@pytest.mark.parametrize("source", SOURCES)
def test_a_webui_global_request_is_composed_as_the_official_flow_composes_it(source: str, tmp_path: Path) -> None:
    sets, given = prompt_sets("webui", source, FLOW_GLOBAL)
    texts = sets[FLOW_GLOBAL]
    played = play("webui", FLOW_GLOBAL, PAGE_SPEC, [FIRST_PAGE], tmp_path, prompts=given,
                  resolution=WEBUI_RESOLUTION)

    pictures, sizes = page_pictures()
    [body] = played.bodies
    # max_image 10: every image of the description is shown, and the newline after the last one is a
    # text part of its own, as officially.
    assert wire(body, max_tokens=4000, pictures=pictures, sizes=sizes) == [
        system(texts.system),
        user([*described(None, texts.unavailable_image), text(texts.format_instruction)]),
    ]


CUT = "# Analyze\nThe title needs the page's indigo.\n# Regenerate\n```css\nbody { background: #ffffff; }"
REST = "\n.title { color: #4338ca; }\n```\n"


def play_webui_online(source: str, out: Path) -> Played:
    _, given = prompt_sets("webui", source, FLOW_GLOBAL, FLOW_ONLINE)
    return play("webui", FLOW_ONLINE, PAGE_SPEC, [FIRST_PAGE, CUT, REST], out, prompts=given,
                resolution=WEBUI_RESOLUTION, max_image=2, max_loop=1)


@pytest.fixture(scope="module", params=SOURCES)
def webui_online(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Played]:
    """One WebUI Online attempt per prompt source, shared by the two tests below."""
    source = request.param
    return source, play_webui_online(source, tmp_path_factory.mktemp(f"webui-{source}"))


def expected_webui_online(source: str) -> list[list[dict[str, Any]]]:
    sets, _ = prompt_sets("webui", source, FLOW_GLOBAL, FLOW_ONLINE)
    opening, rounds = sets[FLOW_GLOBAL], sets[FLOW_ONLINE]
    description = described

    code = rounds.extra["code_html"].format(html=HTML) + rounds.extra["code_css"].format(css=CSS)
    refinement = [
        system([text(rounds.system)]),
        user([*description(None, rounds.unavailable_image),
              text(code), Shown("screenshot"), text(rounds.extra["refine"])]),
    ]
    return [
        # Round 0 is the Global generation: max_image 2 turns the last two images into texts.
        [system(opening.system),
         user([*description(2, opening.unavailable_image), text(opening.format_instruction)])],
        # Round 1: the rules again, the whole description (no image limit), the code written so far
        # (html, then css; no javascript was written), a screenshot and the refinement text.
        refinement,
        # The reply stopped inside a code block: once more, with the reply and the request for the
        # rest as plain strings.
        [*refinement, assistant(CUT), user(rounds.extra["continuation"])],
    ]


def test_webui_online_requests_are_composed_as_the_official_natural_flow_composes_them(
        webui_online: tuple[str, Played]) -> None:
    source, played = webui_online
    pictures, sizes = page_pictures()
    sent = [wire(body, max_tokens=4000, pictures=pictures, sizes=sizes) for body in played.bodies]
    assert sent == expected_webui_online(source)
    # The screenshot is the page round 0 wrote, as first loaded: its corner shows the body's background.
    [*_, screenshot] = [part for part in played.bodies[1]["messages"][1]["content"] if part["type"] == "image_url"]
    assert decoded(screenshot["image_url"]["url"], OFFICIAL_LABEL)[1].getpixel((0, 0)) == (0xEE, 0xF2, 0xF7)

