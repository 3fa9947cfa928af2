"""The plain data of the plug-in interface: flows, the values a plug-in declares and the episodes it runs.

Everything here is a constant, a dataclass or the ``Episode`` base class, and imports nothing of the
platform's, so that the flows, the settings, the baselines and the conformance check can name these
types without importing the plug-in interface (``evaluators.interface``) or the registry that loads
plug-ins (``evaluators.base``), which reach them in turn. Import them from ``evaluators.base`` as
before; the modules under that interface import them from here.
"""
from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

FLOW_GLOBAL = "global"
FLOW_ONLINE = "online"
FLOWS = (FLOW_GLOBAL, FLOW_ONLINE)

#: The scenario sets every flow is ranked on: a board is an environment, a flow and one of these.
SUBSETS = ("mini", "full")
SUBSET_MINI, SUBSET_FULL = SUBSETS

#: The value of a plug-in's own setting.
OptionValue = bool | int | float | str


@dataclass(frozen=True)
class SettingOption:
    """A setting one environment adds to the platform's (``EnvironmentPlugin.setting_options``).

    ``evaluators.settings.EvaluationSettings`` checks it like the platform's own settings and stores
    it under its name beside them, so submitters, stored rows and the boards see one flat mapping.
    """

    kind: type[bool] | type[int] | type[float] | type[str]
    #: The value of a run that does not set it (and the official one when ``variant`` is set).
    default: OptionValue
    low: float | None = None
    high: float | None = None
    #: Set by the platform itself, never by a submitter.
    platform_only: bool = False
    #: Any other value than ``default`` makes the run a labelled variant rather than the official protocol.
    variant: bool = False
    #: The values a text setting may take (empty: any text); any other is refused, naming these.
    choices: tuple[str, ...] = ()


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


PROMPTS_PLATFORM = "platform"
PROMPTS_OFFICIAL = "official"


@dataclass(frozen=True)
class PromptSet:
    """The texts a flow sends; versioned so a submission records exactly what its model saw.

    A plug-in's own prompt sets are in the platform's wording (``source`` "platform"); a suite
    imported with an official checkout beside it gets the official texts, read from that checkout
    as data (``source`` "official", ``evaluators.agents.checkout``). Either way the flows compose
    the requests the way the official flows do.
    """

    version: str
    system: str
    #: Global: after the observation; Online: the first user message, before the first observation.
    format_instruction: str
    #: Global: before the observation; Online: after the first observation.
    first_turn: str
    #: Online: after every later observation.
    next_turn: str
    #: Online: the whole user turn after a reply without a usable action.
    regenerate: str
    #: Stands where an image past ``max_image`` would be.
    unavailable_image: str = "(image left out)"
    #: Before every observation of an environment whose observations open with a text (Football).
    observation_lead: str = ""
    #: "platform" (the platform's wording) or "official" (read from an official checkout).
    source: str = PROMPTS_PLATFORM
    #: Further texts and templates one flow needs (WebUI Online's code and refinement turns), by name.
    extra: Mapping[str, str] = field(default_factory=dict, hash=False)

    def texts(self) -> dict[str, str]:
        """Every text by name, extras after the common ones (what a prompt set's page lists)."""
        common = {name: getattr(self, name) for name in (
            "system", "format_instruction", "first_turn", "next_turn", "regenerate", "unavailable_image",
            "observation_lead")}
        return {**common, **dict(self.extra)}


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


@dataclass(frozen=True)
class ReplayPanel:
    """An environment's own part of a replay page: a template, its extra context, its scripts and its
    style sheets (static paths, loaded after the site's own)."""

    template: str
    context: dict[str, Any] = field(default_factory=dict)
    scripts: tuple[str, ...] = ()
    styles: tuple[str, ...] = ()


@dataclass(frozen=True)
class BreakdownPart:
    """One component of an environment's lost score (``EnvironmentPlugin.breakdown_parts``): what the
    pages call it and the colour its share is drawn in, declared by the environment that records it."""

    key: str
    #: What the score was lost to, as a phrase of the analysis page's sentence ("unparsable replies").
    label: str
    #: Its colour in the lost-score bars and charts: a CSS hex colour, "#rrggbb".
    colour: str


#: The plotly.js bundles an analysis panel may need: "basic" (bars, lines, scatter) or "cartesian"
#: (heatmaps too), the smallest that draws it (static/vendor/README.md).
PLOTLY_BUNDLES = ("basic", "cartesian")

#: What an analysis panel aggregates for one entry: (the scenario's tags, the entry's mean there)
#: for each scenario the entry has a mean for, in the scenarios' natural order.
ScenarioMeans = Sequence[tuple[Mapping[str, Any], float]]


@dataclass(frozen=True)
class AnalysisPanel:
    """An environment's own section of a board's analysis page (``EnvironmentPlugin.analysis_panels``).

    ``aggregate`` runs once per entry when the entry's stored analysis is computed, and its answer is
    stored under ``key``; the page includes ``template`` (its context: ``panel``, a
    ``leaderboard.analysis.PanelView``) and loads ``script``, which registers a drawing function
    under ``key`` in ``window.MageAnalysisPanels`` (see static/js/analysis.js).
    """

    key: str
    title: str
    #: The entry's share of the panel as JSON-able data, or None when none of its scenarios concern
    #: the panel; pure Python, so that it can run wherever an entry's analysis is stored.
    aggregate: Callable[[ScenarioMeans], dict[str, Any] | None]
    template: str
    #: A static path; the script draws the panel from the charts' data.
    script: str
    #: One of ``PLOTLY_BUNDLES``.
    plotly: str = "basic"
    #: Constants the script reads beside every entry's aggregate (axis names), sent once per board.
    chart: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class ReferenceScore:
    """A fixed score the summary across environments reads as a board's floor or ceiling where the
    metric has none in closed form (``EnvironmentPlugin.summary_references``): a published number,
    the same for every scenario of the board, with where it comes from."""

    value: float
    #: Who scored it, where, on what: the page and the metric card show it as the floor's or ceiling's meaning.
    source: str


@dataclass(frozen=True)
class SummaryReference:
    """One board's fixed floor and ceiling, by (flow, subset); ``floor`` None keeps the environment's
    own floor (its ``idle_score``, else the board's Idle baseline entry)."""

    ceiling: ReferenceScore
    floor: ReferenceScore | None = None


@dataclass(frozen=True)
class StoredScenario:
    """A scenario as the catalogue stores it, handed to an environment's import-time check."""

    key: str
    path: Path
    content_hash: str
    data: Mapping[str, Any]
    tags: Mapping[str, Any]


@dataclass(frozen=True)
class ScenarioCheck:
    """One scenario's import-time check: its record and status are stored with the scenario (in
    ``data`` and ``tags``, under the plug-in's ``scenario_check``); ``message`` is its progress line."""

    key: str
    status: str
    record: dict[str, Any]
    message: str = ""


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

    def stop_observing(self) -> None:  # noqa: B027 (optional: most episodes render what they are asked)
        """No later frame reaches the model (the Global flow, once its one reply is in): an episode
        may stop rendering its observation images from here on; ``replay_frame`` gives the replay's."""

    def replay_frame(self, result: StepResult) -> Image.Image | None:
        """The frame the replay keeps for a step whose frame the model is not shown (default: the
        step's observation image). An environment whose own frame shows the same in fewer pixels
        (Sokoban's 16 px tiles, which the replay page scales up unsmoothed) keeps that instead."""
        return result.observation.image

    def save_artifacts(self, directory: Path) -> dict[str, Any]:
        """Write environment-specific replay material beside the trajectory; return its index."""
        return {}

    def close(self) -> None:  # noqa: B027 (optional: an episode that holds nothing keeps this)
        """Release what the episode holds (temporary folders, browser contexts)."""


@dataclass(frozen=True)
class BaselineOptions:
    """How a baseline agent was built (``evaluators.baselines.make_agent``), handed to the plug-ins
    that play it, so an agent's parameters reach the environment that uses them."""

    #: The random agent's longest Global plan.
    max_plan: int = 50
    #: Folders of pages the oracles may read their answers from (WebUI's targets).
    pages: tuple[Path, ...] = ()
    #: Per environment slug, a planner that replaces the oracle's own (tests fix the plan with it).
    planners: Mapping[str, Any] = field(default_factory=dict)


# -- What a plug-in declares beyond its episodes: operator settings, demo baselines, paper rows ----


@dataclass(frozen=True)
class OperatorSetting:
    """One setting an operator gives an environment through the process environment, read once by the
    Django settings at start-up (``config/settings``) under the same name."""

    #: The environment variable, e.g. ``MAGEBENCH_<ENV>_<WHAT>``; it is also the Django setting's name.
    name: str
    kind: type[bool] | type[int] | type[float] | type[str]
    default: OptionValue
    #: The default in production (``MAGEBENCH_ENV=production``); None: ``default`` there too.
    production_default: OptionValue | None = None


@dataclass(frozen=True)
class OperatorSettings:
    """An environment's operator settings (``EnvironmentPlugin.operator_settings``) and the function the
    site hands their values to once, by name, as each process starts (``submissions/apps.py``)."""

    settings: tuple[OperatorSetting, ...] = ()
    apply: Callable[[Mapping[str, OptionValue]], None] | None = None


@dataclass(frozen=True)
class DemoBaselines:
    """What the demo (``scripts/demo``, through ``submit_baselines``) queues for an environment."""

    #: Whether the demo fills this environment's boards at all.
    included: bool = True
    #: The baseline agents it runs here; empty: every one of the plug-in's ``baseline_agents``.
    agents: tuple[str, ...] = ()
    #: The subsets it fills, each a board per flow.
    subsets: tuple[str, ...] = SUBSETS
    #: The flows it fills; empty: every flow the plug-in plays.
    flows: tuple[str, ...] = ()
    #: Folders of a resources directory (``fixtures/magebench/resources/<folder>`` for the demo) the
    #: oracles read their answers from, where they need more than the request.
    oracle_resources: tuple[str, ...] = ()


@dataclass(frozen=True)
class PaperRows:
    """How the MageBench paper reports an environment (``EnvironmentPlugin.paper_rows``): where its
    numbers are in the paper's tables and how they were run. Read by ``catalogue/paper_results.py``."""

    #: The environment's name in the paper's score columns (``<Name>_<Flow>``); "": not in the paper.
    column: str = ""
    #: Repeats per scenario of the paper's runs, by subset (each subset is one of the paper's tables).
    repeats: Mapping[str, int] = field(default_factory=dict)
    #: The ± the paper states for a board, by (flow, subset).
    uncertainty: Mapping[tuple[str, str], float] = field(default_factory=dict)
    #: Where each flow's (IA, RA) pair is among the IA/RA table's pairs (0: the first pair), by flow.
    ia_ra_pairs: Mapping[str, int] = field(default_factory=dict)


# -- Worker pools ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkerPool:
    """What the workers of an environment's queue need from their machine (``EnvironmentPlugin.worker_pool``).

    The queue and its sizing are ``queue``, ``attempt_memory_mb`` and ``attempts_per_core``; this is
    what a deployment must grant the pool's processes beyond them.
    """

    #: Its attempts create user and network namespaces (model-written code run with no network): the
    #: worker's container must allow it (compose: ``seccomp=unconfined``). ``run_worker --other-pools``
    #: starts such a pool only where told that the container allows it (``--network-namespaces``).
    network_namespaces: bool = False
