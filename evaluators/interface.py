"""The environment plug-in interface: :class:`EnvironmentPlugin` and how a module's plug-in is found.

A plug-in declares, on this class, everything the platform needs to know about its environment; its
data types are :mod:`evaluators.declarations`'. Import both from ``evaluators.base`` as before; the
modules the interface reaches (the shared flows) and those that check or read plug-ins (the
conformance check, the settings) import them from here, so that none of them imports back the
module that loads plug-ins.
"""
from __future__ import annotations

import abc
import importlib
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evaluators.declarations import (
    FLOW_GLOBAL,
    FLOWS,
    AnalysisPanel,
    BaselineOptions,
    BreakdownPart,
    DemoBaselines,
    Episode,
    ImportedScenario,
    OperatorSettings,
    PaperRows,
    ParseResult,
    PromptSet,
    ReplayPanel,
    ScenarioCheck,
    ScenarioSpec,
    SettingOption,
    StoredScenario,
    SummaryReference,
    WorkerPool,
)
from evaluators.registry import BUILT_IN_FOLDER, PluginConfigurationError, built_in_environments

if TYPE_CHECKING:
    from evaluators.agents.checkout import OfficialCheckout

    # evaluators.settings reads the plug-ins' declarations, so this module names it for typing only.
    from evaluators.settings import DefaultValue, EvaluationSettings


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
    #: those declared ``variant`` label a run (``evaluators.settings.non_official_settings``).
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
    #: What its pool's processes need from the machine beyond their memory (network namespaces).
    worker_pool: ClassVar[WorkerPool] = WorkerPool()

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
    #: What the summary across environments' floor and ceiling mean here, in words for the page and the
    #: metric card ("an optimal solution"); the numbers come from :meth:`idle_score` and :meth:`best_score`.
    floor_meaning: ClassVar[str] = ""
    ceiling_meaning: ClassVar[str] = ""
    #: How many scenarios the official release has per subset ({"mini": 20, "full": 182}): what the
    #: published (reported) numbers of its boards were measured on, before any official import here.
    official_scenarios: ClassVar[Mapping[str, int]] = {}
    #: Fixed, published floors and ceilings by (flow, subset) for a metric with no closed-form end
    #: (:meth:`summary_reference`); each names its source. Empty: the closed forms only.
    summary_references: ClassVar[Mapping[tuple[str, str], SummaryReference]] = {}

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

    # -- Loading ----------------------------------------------------------------------------------
    #: Left out of the default MAGEBENCH_ENVIRONMENTS (an example): the setting names it to load it.
    opt_in: ClassVar[bool] = False

    # -- Operator settings --------------------------------------------------------------------------
    #: Settings an operator gives this environment through the process environment (limits of its
    #: workers), and the function their values are handed to as each process starts.
    operator_settings: ClassVar[OperatorSettings] = OperatorSettings()

    # -- Demo -------------------------------------------------------------------------------------
    #: What the demo's baseline runs fill here (``submit_baselines`` without ``--env``).
    demo_baselines: ClassVar[DemoBaselines] = DemoBaselines()

    # -- Paper rows -------------------------------------------------------------------------------
    #: How the MageBench paper's tables report this environment (``import_paper_results``).
    paper_rows: ClassVar[PaperRows] = PaperRows()

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

    def settings_refusal(self, flow: str, settings: EvaluationSettings,
                         scenarios: Sequence[ScenarioSpec]) -> str | None:
        """Why ``settings`` cannot play ``flow`` on ``scenarios`` (a submission's board), naming what
        stands in the way; None when they can. A submission is refused with it before anything is
        written, rather than every attempt failing later."""
        return None

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

    def opening_flow(self, flow: str) -> str:
        """The flow whose parser reads the answer to ``flow``'s first request (default: ``flow``).

        A test call of an endpoint sends that request alone and shows what the parser made of the
        answer, so it must use the parser the episode itself would have used there."""
        return flow

    def idle_score(self, scenario: ScenarioSpec) -> float | None:
        """The score of an agent that does nothing, when it is known in closed form: the floor of the
        cross-environment summary (``scoring.normalised``). None: the board's Idle baseline entry is
        the floor instead, or 0 without one."""
        return None

    def best_score(self, scenario: ScenarioSpec) -> float | None:
        """The best score an agent can reach on ``scenario``, when the metric has a meaningful maximum:
        the ceiling of the cross-environment summary. None (a reward with no analytic maximum): the
        ceiling is the board's :attr:`summary_references` entry, and without one the environment is
        not normalised (never to the best entry on a board, which would move as entries arrive)."""
        return None

    def summary_reference(self, flow: str, subset: str) -> SummaryReference | None:
        """The fixed floor and ceiling declared for the board of ``flow`` and ``subset``, if any."""
        return self.summary_references.get((flow, subset))

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


def default_environments(folder: Path = BUILT_IN_FOLDER, package: str = "evaluators") -> list[str]:
    """The modules the MAGEBENCH_ENVIRONMENTS setting loads unless told otherwise: the built-in
    environments (:func:`evaluators.registry.built_in_environments`) whose plug-in is not ``opt_in``
    (the examples, which the setting names to load)."""
    return [path for path in built_in_environments(folder, package) if not plugin_from_module(path).opt_in]
