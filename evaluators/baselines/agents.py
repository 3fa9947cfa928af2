"""Baseline agents that answer chat-completions requests like a model would.

They read only what a model reads: the request's messages. Each environment's plug-in plays them
(``EnvironmentPlugin.baseline_reply``): it recognises its own requests and answers them, mostly
through the shared policies here for environments whose replies are actions (the flow recognised
from the reply format the prompt asks for, the oracle seeing the board only through the last
image). A request no plug-in claims gets a reply without any action.
"""
from __future__ import annotations

import base64
import binascii
import io
import random
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PIL import Image, UnidentifiedImageError

from evaluators.agents.parsing import GLOBAL_MARKER, ONLINE_MARKER
from evaluators.declarations import FLOW_GLOBAL, FLOW_ONLINE, BaselineOptions
from evaluators.interface import default_environments

if TYPE_CHECKING:  # pragma: no cover
    from evaluators.interface import EnvironmentPlugin

Message = Mapping[str, Any]

#: The random agent's Global plans are this long at most: longer than most optimal solutions of
#: the benchmark's levels, short enough to stay far from any max_tokens limit.
RANDOM_MAX_PLAN = BaselineOptions().max_plan


class BaselineAgent(Protocol):
    """Anything the baseline server can put behind the chat-completions protocol."""

    name: str

    def reply(self, messages: Sequence[Message]) -> str:
        """The assistant's text for a request's messages."""


# --------------------------------------------------------------------------------------------
# Reading requests
# --------------------------------------------------------------------------------------------


def message_text(message: Message) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type", "text") == "text"
        ]
        return "\n".join(t for t in texts if isinstance(t, str))
    return ""


def message_image_urls(message: Message) -> list[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    urls: list[str] = []
    for part in content:
        if not isinstance(part, dict) or part.get("type") != "image_url":
            continue
        image_url = part.get("image_url")
        # Both the object form and the older bare-string form are in use.
        url = image_url.get("url") if isinstance(image_url, dict) else image_url
        if isinstance(url, str):
            urls.append(url)
    return urls


def prompt_text(messages: Sequence[Message]) -> str:
    """The platform's side of the conversation: everything but earlier assistant replies."""
    return "\n".join(
        message_text(m) for m in messages if isinstance(m, Mapping) and m.get("role") != "assistant"
    )


def detect_flow(messages: Sequence[Message]) -> str | None:
    # Earlier assistant replies are left out: they are ours to get wrong, not the prompt's.
    text = prompt_text(messages)
    if GLOBAL_MARKER in text:
        return FLOW_GLOBAL
    if ONLINE_MARKER in text:
        return FLOW_ONLINE
    return None


def last_image(messages: Sequence[Message]) -> Image.Image | None:
    """The last image in the request, decoded from its data URI whatever its label claims."""
    urls = [url for m in messages if isinstance(m, Mapping) for url in message_image_urls(m)]
    if not urls:
        return None
    header, comma, data = urls[-1].partition(",")
    if not comma or not header.startswith("data:") or not header.endswith(";base64"):
        return None
    try:
        raw = base64.b64decode("".join(data.split()), validate=False)
        image = Image.open(io.BytesIO(raw))
        image.load()
    except (binascii.Error, ValueError, UnidentifiedImageError, OSError):
        return None
    return image.convert("RGB")


# --------------------------------------------------------------------------------------------
# Environments
# --------------------------------------------------------------------------------------------


def plugin_reply(agent: str, messages: Sequence[Message], rng: random.Random, options: BaselineOptions) -> str | None:
    """The reply of the plug-in whose environment the request is; None when no plug-in claims it."""
    for plugin in _plugins():
        reply = plugin.baseline_reply(agent, messages, rng, options)
        if reply is not None:
            return reply
    return None


def detect_environment(messages: Sequence[Message]) -> EnvironmentPlugin | None:
    """The plug-in whose environment the request is: the one that answers it for the idle agent."""
    for plugin in _plugins():
        if plugin.baseline_reply("idle", messages, random.Random(0), BaselineOptions()) is not None:
            return plugin
    return None


def _plugins() -> list[EnvironmentPlugin]:
    from evaluators.interface import plugin_from_module
    from evaluators.registry import PluginConfigurationError, all_plugins

    try:
        return all_plugins()
    except PluginConfigurationError:
        # A plain-Python caller that loaded no environments plays the benchmark's own, without
        # filling the registry it chose to leave empty.
        return [plugin_from_module(path) for path in default_environments()]


@dataclass(frozen=True)
class EnvironmentProfile:
    """What the shared action policies need of an environment: its actions and how to know it."""

    slug: str
    actions: tuple[str, ...]
    matches: Callable[[str], bool]
    #: An accepted action that changes nothing, for environments whose parser accepts no "idle".
    idle_action: str | None = None


def play_actions(profile: EnvironmentProfile, agent: str, messages: Sequence[Message], rng: random.Random,
                 options: BaselineOptions, planner: Planner | None = None) -> str | None:
    """The idle, random and oracle policies of an environment whose replies are actions in the
    official formats; None when the request is not ``profile``'s or asks for no known format."""
    flow = detect_flow(messages)
    if flow is None or not profile.matches(prompt_text(messages)):
        return None
    if agent == "random":
        if flow == FLOW_ONLINE:
            actions = [rng.choice(profile.actions)]
        else:
            length = rng.randint(1, options.max_plan)
            actions = [rng.choice(profile.actions) for _ in range(length)]
        return format_reply(flow, "I pick my moves at random.", actions)
    if agent == "oracle":
        return _play_plan(flow, messages, options.planners.get(profile.slug, planner))
    # idle, and the degraded oracle, which has nothing to degrade where replies are actions.
    idle = [profile.idle_action] if profile.idle_action and flow == FLOW_ONLINE else []
    return format_reply(flow, "I prefer to stay where I am.", idle)


def _play_plan(flow: str, messages: Sequence[Message], planner: Planner | None) -> str:
    if planner is None:
        return cannot_interpret(flow, "I have no solver for this game")
    image = last_image(messages)
    if image is None:
        return cannot_interpret(flow, "the request carries no image I can decode")
    plan = planner.plan(image)
    if plan is None:
        return cannot_interpret(flow, "I could not read the board in the image")
    actions = list(plan.actions) if flow == FLOW_GLOBAL else list(plan.actions[:1])
    return format_reply(flow, plan.note, actions)


# --------------------------------------------------------------------------------------------
# Reply formats
# --------------------------------------------------------------------------------------------


def format_reply(flow: str, analysis: str, actions: Sequence[str]) -> str:
    """A reply in the flow's format; no actions gives the marker with nothing after it."""
    if flow == FLOW_GLOBAL:
        head = f"### Analyze\n{analysis}\n{GLOBAL_MARKER}"
        return f"{head}\n{', '.join(actions)}" if actions else head
    if len(actions) > 1:
        raise ValueError("an Online reply carries at most one action")
    head = f"# analyze\n{analysis}\n{ONLINE_MARKER}"
    return f"{head}\n{actions[0]}" if actions else head


def cannot_interpret(flow: str | None, reason: str) -> str:
    """An answer, not an error: the platform sees a model reply without a usable action."""
    analysis = f"I cannot play this request: {reason}."
    return format_reply(flow, analysis, []) if flow else analysis


# --------------------------------------------------------------------------------------------
# Policies
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What a planner makes of one frame: the moves from there, and a sentence about them.

    ``solves`` tells a plan that wins from a stop-gap move made when there is nothing to win.
    """

    actions: tuple[str, ...]
    note: str
    solves: bool = False


class Planner(Protocol):
    def plan(self, image: Image.Image) -> Plan | None:
        """A plan for the position in ``image``, or None when the image cannot be read."""


class _PluginAgent:
    """A baseline that the environments' plug-ins play; what none claims gets no action."""

    name: str
    options: BaselineOptions

    def reply(self, messages: Sequence[Message]) -> str:
        claimed = plugin_reply(self.name, messages, random.Random(0), self.options)
        return claimed if claimed is not None else self.unclaimed(messages)

    def unclaimed(self, messages: Sequence[Message]) -> str:
        flow = detect_flow(messages)
        if flow is None:
            return cannot_interpret(None, "the prompt asks for no reply format I know")
        return format_reply(flow, "I prefer to stay where I am.", [])


class IdleAgent(_PluginAgent):
    """Never acts: the format is right, the action list is empty (or the environment's no-op)."""

    def __init__(self, *, name: str = "idle", pages: Sequence[Path] = ()) -> None:
        # The degraded oracle is idle wherever its environment has no degraded answer of its own.
        self.name = name
        self.options = BaselineOptions(pages=tuple(pages))


class RandomAgent(_PluginAgent):
    """Uniformly random actions; a seed makes a whole session reproducible, not every reply equal."""

    name = "random"

    def __init__(self, seed: int | None = None, *, max_plan: int = RANDOM_MAX_PLAN) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.max_plan = max_plan
        self.options = BaselineOptions(max_plan=max_plan)

    def reply(self, messages: Sequence[Message]) -> str:
        # The server answers from several threads; one generator keeps the seeded sequence.
        with self._lock:
            claimed = plugin_reply(self.name, messages, self._rng, self.options)
        return claimed if claimed is not None else self.unclaimed(messages)

    def unclaimed(self, messages: Sequence[Message]) -> str:
        flow = detect_flow(messages)
        if flow is None:
            return cannot_interpret(None, "the prompt asks for no reply format I know")
        return cannot_interpret(flow, "I do not recognise the game")


class OracleAgent(_PluginAgent):
    """Reads the board from the image, solves it, and plays the solution.

    ``planners`` replace, per environment slug, the planner its plug-in would use.
    """

    name = "oracle"

    def __init__(self, planners: Mapping[str, Planner] | None = None, *, pages: Sequence[Path] = ()) -> None:
        self.planners: dict[str, Planner] = dict(planners) if planners is not None else {}
        self.options = BaselineOptions(pages=tuple(pages), planners=self.planners)

    def unclaimed(self, messages: Sequence[Message]) -> str:
        flow = detect_flow(messages)
        if flow is None:
            return cannot_interpret(None, "the prompt asks for no reply format I know")
        return cannot_interpret(flow, "I have no solver for this game")


# --------------------------------------------------------------------------------------------
# Construction by name
# --------------------------------------------------------------------------------------------

AGENT_NAMES = ("idle", "random", "oracle", "degraded")


def make_agent(name: str, *, seed: int | None = None, pages: Sequence[Any] = ()) -> BaselineAgent:
    """A baseline by name. ``pages`` are WebUI page roots the oracles may read (the targets)."""
    if name not in AGENT_NAMES:
        raise ValueError(f"unknown baseline agent {name!r}; choose one of {', '.join(AGENT_NAMES)}")
    if name == "random":
        return RandomAgent(seed)
    roots = tuple(Path(root) for root in pages)
    if name == "oracle":
        return OracleAgent(pages=roots)
    return IdleAgent(name=name, pages=roots if name == "degraded" else ())
