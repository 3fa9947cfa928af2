"""Baseline policies that answer chat-completions requests like a model would.

They read only what a model reads: the request's messages. The flow is recognised from the
reply format the prompt asks for, the environment from the prompt's wording (a small registry,
so other environments can be added beside Sokoban), and the oracle sees the board only through
the last image in the request. An environment plug-in may play the baselines itself
(``EnvironmentPlugin.baseline_reply``); it is asked first, so a new environment needs no change here.
"""
from __future__ import annotations

import base64
import binascii
import dataclasses
import io
import logging
import random
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from PIL import Image, UnidentifiedImageError

from evaluators.agents.parsing import GLOBAL_MARKER, ONLINE_MARKER
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE
from evaluators.football.env import ACCEPTED_ACTIONS as FOOTBALL_ACTIONS

if TYPE_CHECKING:  # pragma: no cover
    from evaluators.sokoban.levels import Level

logger = logging.getLogger(__name__)

Message = Mapping[str, Any]

#: The random agent's Global plans are this long at most: longer than most optimal solutions of
#: the benchmark's levels, short enough to stay far from any max_tokens limit.
RANDOM_MAX_PLAN = 50


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


@dataclass(frozen=True)
class EnvironmentProfile:
    """How a baseline recognises an environment and what it may answer there."""

    slug: str
    actions: tuple[str, ...]
    matches: Callable[[str], bool]
    #: An accepted action that changes nothing, for environments whose parser accepts no "idle".
    idle_action: str | None = None


_ENVIRONMENTS: dict[str, EnvironmentProfile] = {}


def register_environment(profile: EnvironmentProfile) -> EnvironmentProfile:
    _ENVIRONMENTS[profile.slug] = profile
    return profile


def plugin_reply(agent: str, messages: Sequence[Message], rng: random.Random) -> str | None:
    """The reply of a plug-in that plays the baselines of its environment itself; None when no
    plug-in claims the request."""
    from evaluators.base import PluginConfigurationError, all_plugins

    try:
        plugins = all_plugins()
    except PluginConfigurationError:
        # A plain-Python caller that loaded no environments still gets the built-in policies.
        return None
    for plugin in plugins:
        reply = plugin.baseline_reply(agent, messages, rng)
        if reply is not None:
            return reply
    return None


def detect_environment(messages: Sequence[Message]) -> EnvironmentProfile | None:
    text = prompt_text(messages)
    for profile in _ENVIRONMENTS.values():
        if profile.matches(text):
            return profile
    return None


SOKOBAN_ACTIONS = ("Up", "Down", "Left", "Right")
SOKOBAN = register_environment(
    EnvironmentProfile("sokoban", SOKOBAN_ACTIONS, lambda text: "Sokoban" in text)
)
# A reply without an action consumes an Online turn without moving the game clock, so a silent
# agent would never finish a Football episode; action_release_sprint, with no sprint on, stands still.
FOOTBALL = register_environment(
    EnvironmentProfile("football", FOOTBALL_ACTIONS, lambda text: "football game" in text.lower(),
                       idle_action="action_release_sprint")
)


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


class IdleAgent:
    """Never acts: the format is right, the action list is empty (or the environment's no-op)."""

    name = "idle"

    def reply(self, messages: Sequence[Message]) -> str:
        claimed = plugin_reply(self.name, messages, random.Random(0))
        if claimed is not None:
            return claimed
        flow = detect_flow(messages)
        if flow is None:
            return cannot_interpret(None, "the prompt asks for no reply format I know")
        env = detect_environment(messages)
        idle = [env.idle_action] if env is not None and env.idle_action and flow == FLOW_ONLINE else []
        return format_reply(flow, "I prefer to stay where I am.", idle)


class RandomAgent:
    """Uniformly random actions; a seed makes a whole session reproducible, not every reply equal."""

    name = "random"

    def __init__(self, seed: int | None = None, *, max_plan: int = RANDOM_MAX_PLAN) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.max_plan = max_plan

    def reply(self, messages: Sequence[Message]) -> str:
        with self._lock:
            claimed = plugin_reply(self.name, messages, self._rng)
        if claimed is not None:
            return claimed
        flow = detect_flow(messages)
        if flow is None:
            return cannot_interpret(None, "the prompt asks for no reply format I know")
        env = detect_environment(messages)
        if env is None:
            return cannot_interpret(flow, "I do not recognise the game")
        # The server answers from several threads; one generator keeps the seeded sequence.
        with self._lock:
            if flow == FLOW_ONLINE:
                actions = [self._rng.choice(env.actions)]
            else:
                length = self._rng.randint(1, self.max_plan)
                actions = [self._rng.choice(env.actions) for _ in range(length)]
        return format_reply(flow, "I pick my moves at random.", actions)


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


class OracleAgent:
    """Reads the board from the image, solves it, and plays the solution."""

    name = "oracle"

    def __init__(self, planners: Mapping[str, Planner] | None = None) -> None:
        self.planners: dict[str, Planner] = (
            dict(planners) if planners is not None else {"sokoban": SokobanPlanner()}
        )

    def reply(self, messages: Sequence[Message]) -> str:
        claimed = plugin_reply(self.name, messages, random.Random(0))
        if claimed is not None:
            return claimed
        flow = detect_flow(messages)
        if flow is None:
            return cannot_interpret(None, "the prompt asks for no reply format I know")
        env = detect_environment(messages)
        planner = self.planners.get(env.slug) if env is not None else None
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
# Sokoban oracle
# --------------------------------------------------------------------------------------------

_STEPS = {"Up": (-1, 0), "Down": (1, 0), "Left": (0, -1), "Right": (0, 1)}


class SokobanPlanner:
    """Sokoban through :func:`read_grid` and :func:`solve_grid`, with solutions cached by grid.

    ``reader`` replaces :func:`read_grid` (the board must still come from the image alone).

    Every grid along a solution is cached with the rest of the solution, so the Online flow,
    which sends a new frame for each move, solves a level once rather than once per move.
    """

    def __init__(
        self,
        *,
        time_budget: float | None = 30.0,
        max_states: int | None = None,
        cache_size: int = 4096,
        reader: Callable[[Image.Image], str] | None = None,
    ) -> None:
        self._reader = reader
        self.time_budget = time_budget
        self.max_states = max_states
        self.cache_size = cache_size
        self._cache: OrderedDict[str, Plan] = OrderedDict()
        self._lock = threading.Lock()

    def plan(self, image: Image.Image) -> Plan | None:
        from evaluators.sokoban.levels import format_grid, parse_grid

        try:
            level = parse_grid(self._read(image))
        except Exception:  # noqa: BLE001 - any failure to read is "the image is not a board"
            logger.info("the oracle could not read a Sokoban board", exc_info=True)
            return None
        # Keyed by the canonical text so grids read from frames and grids stepped along a
        # solution agree.
        grid = format_grid(level)
        cached = self._cached(grid)
        if cached is not None:
            return cached
        plan = self._solve(level, grid)
        entries = [(grid, plan)]
        if plan.solves:
            entries.extend(_positions_along(level, plan))
        self._remember(entries)
        return plan

    def _read(self, image: Image.Image) -> str:
        if self._reader is not None:
            return self._reader(image)
        from evaluators.sokoban.vision import read_grid

        return read_grid(image)

    def _solve(self, level: Level, grid: str) -> Plan:
        from evaluators.sokoban.solver import SolverBudgetExceeded, Unsolvable, solve_grid

        if level.is_solved():
            # Checked here because the solver, modelling gym-sokoban, still plans one step to
            # collect the completion reward on such a board; the frame shows a finished level.
            return _fallback(level, "Every box is already on a target.")
        try:
            solution = solve_grid(grid, max_states=self.max_states, time_budget=self.time_budget)
        except Unsolvable:
            return _fallback(level, "This position cannot be solved any more.")
        except SolverBudgetExceeded:
            return _fallback(level, "I could not find a solution in time.")
        actions = tuple(solution.actions)
        return Plan(actions, f"I found a solution in {len(actions)} moves.", solves=True)

    def _cached(self, grid: str) -> Plan | None:
        with self._lock:
            plan = self._cache.get(grid)
            if plan is not None:
                self._cache.move_to_end(grid)
            return plan

    def _remember(self, entries: list[tuple[str, Plan]]) -> None:
        with self._lock:
            for key, value in entries:
                self._cache[key] = value
                self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)


def _fallback(level: Level, note: str) -> Plan:
    # A single move that pushes nothing: the reply stays well-formed without making things
    # worse, which is all a player can sensibly do when there is nothing left to win.
    return Plan((_harmless_move(level),), f"{note} I make one harmless move.")


def _positions_along(level: Level, plan: Plan) -> list[tuple[str, Plan]]:
    """The grid after each move of ``plan`` with the moves left from there."""
    from evaluators.sokoban.levels import format_grid

    entries: list[tuple[str, Plan]] = []
    for index, move in enumerate(plan.actions[:-1]):
        level = _moved(level, move)
        rest = plan.actions[index + 1 :]
        note = f"I follow my solution: {len(rest)} moves to go."
        entries.append((format_grid(level), Plan(rest, note, solves=True)))
    return entries


def _moved(level: Level, move: str) -> Level:
    """The level after ``move`` by gym-sokoban's rules (a blocked move changes nothing)."""
    dr, dc = _STEPS[move]
    r, c = level.player
    ahead = (r + dr, c + dc)
    if ahead in level.walls:
        return level
    boxes = level.boxes
    if ahead in boxes:
        beyond = (r + 2 * dr, c + 2 * dc)
        if beyond in level.walls or beyond in boxes:
            return level
        boxes = (boxes - {ahead}) | {beyond}
    return dataclasses.replace(level, boxes=boxes, player=ahead)


def _harmless_move(level: Level) -> str:
    """A move that pushes no box (Up when every side is blocked)."""
    r, c = level.player
    for move, (dr, dc) in _STEPS.items():
        ahead = (r + dr, c + dc)
        if ahead not in level.walls and ahead not in level.boxes:
            return move
    return SOKOBAN_ACTIONS[0]


# --------------------------------------------------------------------------------------------
# Construction by name
# --------------------------------------------------------------------------------------------

AGENT_NAMES = ("idle", "random", "oracle", "degraded")


class WithWebUI:
    """Answers WebUI requests with a page policy and everything else with the action agent."""

    def __init__(self, name: str, actions: BaselineAgent, webui: Any) -> None:
        self.name = name
        self.actions = actions
        self.webui = webui

    def reply(self, messages: Sequence[Message]) -> str:
        from evaluators.baselines.webui import is_webui

        text = prompt_text(messages)
        if is_webui(text):
            return self.webui.reply(text)
        return self.actions.reply(messages)


def make_agent(name: str, *, seed: int | None = None, pages: Sequence[Any] = ()) -> BaselineAgent:
    """A baseline by name. ``pages`` are WebUI page roots the oracles may read (the targets)."""
    from evaluators.baselines.webui import PageIndex, WebUIPolicy

    if name not in AGENT_NAMES:
        raise ValueError(f"unknown baseline agent {name!r}; choose one of {', '.join(AGENT_NAMES)}")
    actions: BaselineAgent
    if name == "random":
        actions = RandomAgent(seed)
    elif name == "oracle":
        actions = OracleAgent()
    else:
        # idle plays nothing anywhere; the degraded oracle exists for WebUI only.
        actions = IdleAgent()
    index = PageIndex(list(pages)) if pages and name in {"oracle", "degraded"} else None
    webui_mode = name if name in {"oracle", "degraded"} else "idle"
    return WithWebUI(name, actions, WebUIPolicy(webui_mode, index))
