"""The environment plug-in interface and its registry.

An environment is one folder under ``evaluators/`` that registers an :class:`EnvironmentPlugin`.
Everything here is plain Python (no Django), so an episode can be run and scored from a worker,
a management command or a test alike.
"""
from __future__ import annotations

import abc
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from PIL import Image

if TYPE_CHECKING:
    # evaluators.settings reads the plug-ins' declarations, so this module names it for typing only.
    from evaluators.settings import DefaultValue, EvaluationSettings

FLOW_GLOBAL = "global"
FLOW_ONLINE = "online"
FLOWS = (FLOW_GLOBAL, FLOW_ONLINE)


@dataclass(frozen=True)
class ScenarioSpec:
    """What the database knows about one scenario, handed to the plug-in as plain data."""

    env: str
    key: str
    data: dict[str, Any]
    resource_path: Path | None = None


@dataclass
class Observation:
    """What the model is shown after a reset or a step.

    Most environments show one text and one image; a task description (WebUI) is an interleaved
    sequence of texts and images, given as ``parts``, which then replaces ``text`` and ``image``.
    """

    text: str
    image: Image.Image | None = None
    parts: list[str | Image.Image] | None = None


@dataclass
class StepResult:
    observation: Observation
    reward: float
    done: bool
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class ParseResult:
    """Actions extracted from one model reply.

    ``error`` is set when the reply could not be turned into any usable action; ``foreign_tokens``
    lists tokens that were not in the action vocabulary (they feed the IA diagnostic).
    """

    actions: list[Any]
    error: str | None = None
    foreign_tokens: list[str] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.actions)


@dataclass(frozen=True)
class PromptSet:
    """The texts a flow sends; versioned so a submission records exactly what its model saw."""

    version: str
    system: str
    format_instruction: str
    first_turn: str
    next_turn: str
    regenerate: str


@dataclass
class ImportedScenario:
    """One scenario read from a MageBench ``resources/`` directory, before it is stored."""

    key: str
    in_mini: bool
    in_full: bool
    data: dict[str, Any]
    tags: dict[str, Any]
    content_hash: str
    resource_file: Path | None = None
    warnings: list[str] = field(default_factory=list)


class ResourceError(ValueError):
    """A resources directory that is missing files or holds malformed ones."""


class Episode(abc.ABC):
    """One run of one scenario. Created fresh per attempt (and per parse-retry-free restart)."""

    done: bool = False

    @abc.abstractmethod
    def reset(self) -> Observation: ...

    @abc.abstractmethod
    def step(self, action: Any) -> StepResult: ...

    @abc.abstractmethod
    def render(self) -> Image.Image:
        """The current frame at the submission's resolution."""

    @abc.abstractmethod
    def score(self) -> float:
        """The official metric for the episode so far."""

    def score_details(self) -> dict[str, Any]:
        """Extra metric components stored beside the score (e.g. best-so-far reward)."""
        return {}

    def running_score(self) -> float | None:
        """The score so far, recorded at every step for the replay; None where scoring mid-episode
        is expensive (WebUI's AES renders every state) and only the final score is meaningful."""
        return None

    def replay_frames(self) -> Sequence[Image.Image]:
        """Frames produced since the last call that the replay should keep (default: none)."""
        return ()

    def save_artifacts(self, directory: Path) -> dict[str, Any]:
        """Write environment-specific replay material beside the trajectory; return its index."""
        return {}

    def close(self) -> None:
        """Release what the episode holds (temporary folders, browser contexts)."""


class EnvironmentPlugin(abc.ABC):
    """One environment of the benchmark."""

    slug: ClassVar[str]
    title: ClassVar[str]
    score_label: ClassVar[str]
    flows: ClassVar[tuple[str, ...]] = FLOWS
    #: Whether IA/RA (action diagnostics) mean something here; page-writing environments have none.
    has_action_diagnostics: ClassVar[bool] = True
    #: Names of the lost-score components each scored attempt stores in details["breakdown"].
    breakdown_keys: ClassVar[tuple[str, ...]] = ()
    #: Default settings per flow (the paper's standard setting), each a value or a value per subset
    #: ({"mini": 10, "full": 3}); ``evaluators.settings.EvaluationSettings`` checks and applies them.
    default_settings: ClassVar[Mapping[str, Mapping[str, DefaultValue]]]

    @abc.abstractmethod
    def new_episode(self, scenario: ScenarioSpec, settings: EvaluationSettings) -> Episode: ...

    @abc.abstractmethod
    def prompts(self, flow: str) -> PromptSet: ...

    @abc.abstractmethod
    def parse(self, flow: str, reply: str) -> ParseResult: ...

    def discover(self, resources: Path, *, verify: bool = True) -> list[ImportedScenario]:
        """Read this environment's scenarios from an official ``resources/`` directory.

        Raises ResourceError when the directory has none of this environment's files at all;
        returns an empty list only for an environment that does not import from resources.
        """
        return []

    def flow_runner(self, flow: str) -> Any:
        """The function that plays ``flow`` (default: the shared Global/Online flows)."""
        from evaluators.agents.flows import FLOW_RUNNERS

        return FLOW_RUNNERS[flow]

    def idle_score(self, scenario: ScenarioSpec) -> float | None:
        """The score of an agent that does nothing, when it is known in closed form."""
        return None

    def baseline_reply(self, agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random) -> str | None:
        """What the baseline ``agent`` (idle, random or oracle) answers to a chat request of this
        environment, for a plug-in that plays the baselines itself; None leaves the request to the
        baselines' own policies (evaluators.baselines.agents asks every plug-in first).

        Like the baselines, it reads only what a model reads: the request's messages. ``rng`` is
        the agent's seeded generator.
        """
        return None


_REGISTRY: dict[str, EnvironmentPlugin] = {}


def register(plugin: EnvironmentPlugin) -> EnvironmentPlugin:
    _REGISTRY[plugin.slug] = plugin
    return plugin


def get_plugin(slug: str) -> EnvironmentPlugin:
    _load_builtin_plugins()
    try:
        return _REGISTRY[slug]
    except KeyError:
        raise KeyError(f"unknown environment {slug!r}; known: {sorted(_REGISTRY)}") from None


def all_plugins() -> list[EnvironmentPlugin]:
    """Every environment, by slug: the order of boards and columns must not depend on import order."""
    _load_builtin_plugins()
    return [_REGISTRY[slug] for slug in sorted(_REGISTRY)]


def _load_builtin_plugins() -> None:
    # Imported lazily so that importing this module never pulls in gym or a browser.
    from evaluators import football, sokoban, webui  # noqa: F401
