"""The environment plug-in interface and its registry.

An environment is one package (``evaluators/<env>/`` for the built-in ones) whose module-level
``plugin`` is an :class:`EnvironmentPlugin`. Everything the platform knows about an environment is
declared on its plug-in: flows, queue, board order, analysis tags and panels, upload formats and scales,
replay panel, its own settings and which of them make a labelled variant. The rest of the code
asks the registry (:func:`get_plugin`, :func:`all_plugins`) and never names an environment.

The registry holds exactly the plug-ins it was given by :func:`load_plugins`; the site loads the
``MAGEBENCH_ENVIRONMENTS`` setting at start-up (``catalogue/apps.py``), and plain-Python callers
pass their own list. Everything here is plain Python (no Django), so an episode can be run
and scored from a worker, a management command or a test alike.
"""
from __future__ import annotations

import abc
import importlib
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from PIL import Image

if TYPE_CHECKING:
    from evaluators.agents.checkout import OfficialCheckout

    # evaluators.settings reads the plug-ins' declarations, so this module names it for typing only.
    from evaluators.settings import DefaultValue, EvaluationSettings

FLOW_GLOBAL = "global"
FLOW_ONLINE = "online"
FLOWS = (FLOW_GLOBAL, FLOW_ONLINE)

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


class EnvironmentPlugin(abc.ABC):
    """One environment of the benchmark.

    A plug-in declares, as class attributes, everything the platform needs to know about its
    environment; the defaults suit a deterministic, action-based environment whose episodes run
    on the default queue. Only ``slug``, ``title``, ``score_label``, ``default_settings`` and the
    three abstract methods are required.
    """

    slug: ClassVar[str]
    title: ClassVar[str]
    score_label: ClassVar[str]
    flows: ClassVar[tuple[str, ...]] = FLOWS
    #: Whether IA/RA (action diagnostics) mean something here; page-writing environments have none.
    has_action_diagnostics: ClassVar[bool] = True
    #: Names of the lost-score components each scored attempt stores in details["breakdown"].
    breakdown_keys: ClassVar[tuple[str, ...]] = ()
    #: The same components, in the same order, with what the pages call them and their colours; an
    #: environment with ``breakdown_keys`` declares them here so that no shared page names them.
    breakdown_parts: ClassVar[tuple[BreakdownPart, ...]] = ()
    #: Default settings per flow (the paper's standard setting), each a value or a value per subset
    #: ({"mini": 10, "full": 3}); ``evaluators.settings.EvaluationSettings`` checks and applies them.
    default_settings: ClassVar[Mapping[str, Mapping[str, DefaultValue]]]

    # -- Scoring and diagnostics ------------------------------------------------------------------
    #: The action vocabulary the parser accepts; empty for environments whose replies are code.
    #: Uploads accept action names (``actions``) only where it is not empty.
    ACTIONS: ClassVar[tuple[str, ...]] = ()
    #: Actions that hand the play on without changing the state the agent is judged by (Football's
    #: passes): a trajectory made only of them is RA (``evaluators.agents.diagnostics``). Empty: no
    #: such rule here.
    PASS_ACTIONS: ClassVar[frozenset[str]] = frozenset()
    #: The settings only this environment reads, by name, in the order a stored row lists them. Its
    #: own folder reads their values through a typed accessor over ``EvaluationSettings.options``;
    #: those declared ``variant`` label a run (``evaluators.agents.requests.non_official_settings``).
    setting_options: ClassVar[Mapping[str, SettingOption]] = {}

    # -- Workers ------------------------------------------------------------------------------------
    #: The kind of work an attempt is, which names its Celery queue ("browser", "engine"); None is
    #: the default queue (attempts that mostly wait on model calls). The settings may route a kind
    #: to another queue (MAGEBENCH_QUEUE_ROUTES).
    queue: ClassVar[str | None] = None
    #: What this environment's workers do, in the words of the queue page.
    queue_work: ClassVar[str] = ""
    #: The most memory one attempt takes in a worker process (its engine, browser or renderer
    #: included), in MiB: a worker runs as many attempts at once as its memory budget holds.
    attempt_memory_mb: ClassVar[int] = 200
    #: Attempts in flight per core that keep the core busy while their models think (an attempt
    #: mostly waits on model calls; one whose own work is heavier needs fewer to fill a core).
    attempts_per_core: ClassVar[int] = 4

    # -- Import ----------------------------------------------------------------------------------
    #: The name of a check an import runs on every scenario (e.g. whether a page can be evaluated as
    #: intended), under which its result is stored with the scenario; None: no check.
    scenario_check: ClassVar[str | None] = None

    # -- Boards and analysis --------------------------------------------------------------------
    #: How the score reads in the overview's legend; empty: ``score_label``.
    score_hint: ClassVar[str] = ""
    #: Where the environment's boards, columns and links go (lowest first).
    position: ClassVar[int] = 9
    #: Scenario tags the analysis page breaks scores down by: (tag name, heading); "key" is the
    #: scenario's own key.
    tag_groups: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: A score with an absolute meaning to fail against (a scenario's mean below it is failed);
    #: None fails scenarios relative to the board's median.
    fail_threshold: ClassVar[float | None] = None
    #: The environment's own sections of the analysis page, after the tag tables, in this order.
    analysis_panels: ClassVar[tuple[AnalysisPanel, ...]] = ()

    # -- Uploads --------------------------------------------------------------------------------
    #: The files a run may carry instead of replies (code the model wrote), as (upload key, file
    #: name in the official output folder); empty where runs are replies or actions only. A run
    #: folder with none of them and no reply is the model's blank reply.
    code_files: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: How an uploaded run's code is replayed as the model's reply: (upload key, code fence language)
    #: in the reply's order, each present part one fenced block of the one reply the parser reads.
    upload_code_fences: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: The platform's score in units of the official ``result`` (1: the same scale).
    result_scale: ClassVar[float] = 1.0
    #: The values an official ``result`` can take, where that is bounded.
    result_range: ClassVar[tuple[float, float] | None] = None
    #: How far a re-scored upload may sit from its self-reported score, in score units, before the
    #: two are flagged as disagreeing.
    self_report_tolerance: ClassVar[float] = 0.01
    #: Episodes are stochastic: an uploaded run is played again on the engine (a new sample, not a
    #: check of the uploaded score), and baselines run the flow's full repeats.
    stochastic: ClassVar[bool] = False
    #: How the platform re-scores this environment's uploaded runs, as a clause of the upload page's
    #: sentence ("the code that scores live runs: …"); empty leaves the environment out of it.
    upload_note: ClassVar[str] = ""
    #: A model that reads no images can play: with ``observation_images`` false the episode sends
    #: the text alone and renders no frame (the form names the environments where this holds).
    text_only_runs: ClassVar[bool] = True

    # -- Baselines ------------------------------------------------------------------------------
    #: The baseline agents (``evaluators.baselines``) that mean something here.
    baseline_agents: ClassVar[tuple[str, ...]] = ("idle", "random")
    #: Baselines that read no image here, where skipping the frames loses nothing.
    text_only_baselines: ClassVar[tuple[str, ...]] = ()
    #: What a baseline agent does here, where that needs saying (``submit_baselines``' help).
    baseline_notes: ClassVar[Mapping[str, str]] = {}

    # -- Replay -----------------------------------------------------------------------------------
    #: The template of the environment's own replay panel, included in the replay page above the
    #: shared timeline (its context: the attempt, its trajectory and :meth:`replay_panel`'s);
    #: None shows the shared timeline only.
    replay_template: ClassVar[str | None] = None
    #: Static files (paths under the static root) the replay panel loads, in order.
    replay_scripts: ClassVar[tuple[str, ...]] = ()
    #: Style sheets (paths under the static root) the replay panel loads after the site's own, in order.
    replay_styles: ClassVar[tuple[str, ...]] = ()

    @abc.abstractmethod
    def new_episode(self, scenario: ScenarioSpec, settings: EvaluationSettings) -> Episode: ...

    @abc.abstractmethod
    def prompts(self, flow: str) -> PromptSet: ...

    @abc.abstractmethod
    def parse(self, flow: str, reply: str) -> ParseResult: ...

    def official_prompts(self, checkout: OfficialCheckout, flow: str) -> PromptSet | None:
        """The texts the official harness sends in ``flow``, read from an operator's official checkout
        as data (never executed); None where the official harness has no such flow. Raises
        ``evaluators.agents.official_source.CheckoutError`` when the checkout's files are not as expected."""
        return None

    @property
    def metric_card(self) -> dict[str, Any]:
        """The metric card page's content (what is measured, how it differs from the paper)."""
        return {}

    #: A field of each scenario's stored data (a ``__``-separated path into it) that
    #: :meth:`scenario_note` reads; "" for an environment with no such note.
    scenario_note_field: ClassVar[str] = ""

    def scenario_note(self, values: Sequence[Any]) -> str:
        """A short note on a set of scenarios (a board's, or a suite's on the metric card), from each
        one's :attr:`scenario_note_field` (None where a scenario has none); "" for no note."""
        return ""

    def discover(self, resources: Path, *, verify: bool = True) -> list[ImportedScenario]:
        """Read this environment's scenarios from an official ``resources/`` directory.

        Raises ResourceError when the directory has none of this environment's files at all;
        returns an empty list only for an environment that does not import from resources.
        """
        return []

    def check_scenarios(self, scenarios: Sequence[StoredScenario], *, workers: int, recheck: bool,
                        store: Callable[[ScenarioCheck], None]) -> list[str]:
        """Run :attr:`scenario_check` on these stored scenarios and return the report's lines.

        ``store`` is called with each new result as it comes; a scenario whose stored check is
        still valid keeps it unless ``recheck``. ``workers`` bounds the checks run at a time.
        """
        return []

    def flow_runner(self, flow: str) -> Any:
        """The function that plays ``flow`` (default: the shared Global/Online flows)."""
        from evaluators.agents.flows import FLOW_RUNNERS

        return FLOW_RUNNERS[flow]

    def idle_score(self, scenario: ScenarioSpec) -> float | None:
        """The score of an agent that does nothing, when it is known in closed form."""
        return None

    def action_replies(self, flow: str, actions: Sequence[str]) -> list[str]:
        """The replies an uploaded list of action names is played back as: text this environment's
        parser reads exactly those actions from. The default is the official formats (Global: one
        ``### Actions`` reply; Online: one ``# action`` reply per action)."""
        if flow == FLOW_GLOBAL:
            return ["### Actions\n" + ", ".join(actions)]
        return [f"# action {action}" for action in actions]

    def baseline_reply(self, agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random,
                       options: BaselineOptions) -> str | None:
        """What the baseline ``agent`` (idle, random, oracle or degraded) answers to a chat request of
        this environment; None when the request is not this environment's (evaluators.baselines.agents
        asks every plug-in, and answers what none claims without acting).

        Like the baselines, it reads only what a model reads: the request's messages. ``rng`` is
        the agent's seeded generator; ``options`` is how the agent was built.
        """
        return None

    def upload_code_schema(self) -> dict[str, Any]:
        """The JSON Schema a JSONL upload line's ``code`` object meets for this environment (the
        published schema leaves ``code`` open; the uploads check it against this). The default asks
        for the first of :attr:`code_files` (the file the code opens with) and allows the others, each
        a string; an environment whose files need more (a description, a pattern) declares its own."""
        keys = [key for key, _ in self.code_files]
        return {"type": "object", "required": keys[:1], "additionalProperties": False,
                "properties": {key: {"type": "string", "description": f"The text of {name}."}
                               for key, name in self.code_files}}

    def code_replies(self, flow: str, code: Mapping[str, str]) -> list[str]:
        """The replies an uploaded run's code (by the keys of :attr:`code_files`) is played back as.
        The default is one reply of fenced blocks, one per part present, in the order and with the
        languages of :attr:`upload_code_fences`."""
        blocks = [f"```{fence}\n{code[key]}\n```" for key, fence in self.upload_code_fences if key in code]
        return ["\n\n".join(blocks)]

    def replay_panel(self, artifacts: Mapping[str, Any], read_artifact: Callable[[str], Any]) -> ReplayPanel | None:
        """The environment's own panel on an attempt's replay page, or None.

        ``artifacts`` is the trajectory's artefact index (what :meth:`Episode.save_artifacts`
        returned); ``read_artifact(name)`` reads a JSON file stored beside the trajectory (None if
        missing or unreadable). By default the panel is :attr:`replay_template` with
        :attr:`replay_scripts` and :attr:`replay_styles`, shown when the artefacts are this environment's.
        """
        if self.replay_template is None or artifacts.get("kind") != self.slug:
            return None
        return ReplayPanel(template=self.replay_template, scripts=self.replay_scripts, styles=self.replay_styles)


class PluginConfigurationError(ValueError):
    """A module named as an environment that cannot be imported or holds no plug-in."""


#: The modules the MAGEBENCH_ENVIRONMENTS setting loads unless told otherwise: the benchmark's own.
DEFAULT_ENVIRONMENTS = ("evaluators.football", "evaluators.sokoban", "evaluators.webui")

_REGISTRY: dict[str, EnvironmentPlugin] = {}
_loaded_once = False


def plugin_from_module(path: str) -> EnvironmentPlugin:
    """The plug-in a module declares as its ``plugin``."""
    try:
        module = importlib.import_module(path)
    except ImportError as exc:
        raise PluginConfigurationError(f"environment module {path!r} cannot be imported: {exc}") from exc
    plugin = getattr(module, "plugin", None)
    if not isinstance(plugin, EnvironmentPlugin):
        raise PluginConfigurationError(f"environment module {path!r} has no 'plugin' (an EnvironmentPlugin instance)")
    return plugin


def declared_queues(paths: Iterable[str]) -> list[str]:
    """The kinds of work (queue names) the plug-ins of these modules declare, sorted, each once.

    The Django settings call it to build the Celery queue list, before any app is loaded: it only
    imports the modules and reads a class attribute, which is why a plug-in module must import
    without Django and start nothing when imported.
    """
    return sorted({plugin.queue for plugin in map(plugin_from_module, paths) if plugin.queue})


def load_plugins(paths: Iterable[str]) -> list[EnvironmentPlugin]:
    """Make the plug-ins of these modules the registry's, replacing what it held.

    Each plug-in is checked first (:func:`evaluators.conformance.check_plugin`): one that breaks the
    interface's contract is refused with its problems listed, and the registry keeps what it held.
    """
    from evaluators.conformance import check_plugin

    plugins = [plugin_from_module(path) for path in paths]
    for plugin in plugins:
        check_plugin(plugin)
    slugs = [plugin.slug for plugin in plugins]
    duplicates = sorted({slug for slug in slugs if slugs.count(slug) > 1})
    if duplicates:
        raise PluginConfigurationError(f"environment(s) {', '.join(duplicates)} named more than once")
    global _loaded_once
    _REGISTRY.clear()
    _REGISTRY.update((plugin.slug, plugin) for plugin in plugins)
    _loaded_once = True
    return all_plugins()


def _loaded() -> dict[str, EnvironmentPlugin]:
    if not _loaded_once:
        raise PluginConfigurationError("no environments loaded: call evaluators.base.load_plugins() with their "
                                       "modules (the site loads the MAGEBENCH_ENVIRONMENTS setting)")
    return _REGISTRY


def get_plugin(slug: str) -> EnvironmentPlugin:
    registry = _loaded()
    try:
        return registry[slug]
    except KeyError:
        raise KeyError(f"unknown environment {slug!r}; known: {sorted(registry)}") from None


def all_plugins() -> list[EnvironmentPlugin]:
    """Every environment, by slug: nothing may depend on import or setting order (boards go by
    ``position``)."""
    registry = _loaded()
    return [registry[slug] for slug in sorted(registry)]


def environment_slugs() -> list[str]:
    """The slugs of every loaded environment, sorted: the API's choices."""
    return sorted(_loaded())


def environment_flows() -> list[str]:
    """The flows at least one loaded environment plays, in ``FLOWS`` order: the flows a submission
    may name (a plug-in plays only the platform's flows; the conformance check refuses others)."""
    declared = {flow for plugin in _loaded().values() for flow in plugin.flows}
    return [flow for flow in FLOWS if flow in declared]
