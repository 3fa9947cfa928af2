"""The WebUI environment plug-in (reference §2.4): pages rebuilt from descriptions, scored by AES."""
from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evaluators.base import (
    FLOW_GLOBAL,
    FLOW_ONLINE,
    BaselineOptions,
    BreakdownPart,
    DemoBaselines,
    EnvironmentPlugin,
    Episode,
    ImportedScenario,
    OperatorSettings,
    PaperRows,
    ParseResult,
    PromptSet,
    ScenarioCheck,
    ScenarioSpec,
    SettingOption,
    StoredScenario,
    WorkerPool,
)
from evaluators.settings import EvaluationSettings
from evaluators.webui.breakdown import BREAKDOWN_PARTS
from evaluators.webui.online_variants import MERGENODES, NATURAL
from evaluators.webui.operator import DEMO_BASELINES, OPERATOR_SETTINGS, PAPER_ROWS
from evaluators.webui.options import (
    EXCLUDE_UNCHANGED_SETTING,
    ONLINE_FLOW_SETTING,
    OPTIONS,
    VIEWPORT_1080_SETTING,
    WebUIOptions,
)
from evaluators.webui.tasks import has_description_image

if TYPE_CHECKING:
    from evaluators.agents.checkout import OfficialCheckout


class WebUIPlugin(EnvironmentPlugin):
    slug: ClassVar[str] = "webui"
    title: ClassVar[str] = "WebUI"
    score_label: ClassVar[str] = "AES %"
    has_action_diagnostics: ClassVar[bool] = False
    breakdown_keys: ClassVar[tuple[str, ...]] = tuple(part.key for part in BREAKDOWN_PARTS)
    breakdown_parts: ClassVar[tuple[BreakdownPart, ...]] = BREAKDOWN_PARTS
    setting_options: ClassVar[Mapping[str, SettingOption]] = OPTIONS
    queue: ClassVar[str | None] = "browser"
    # A worker process with its Chromium (browser, renderer and GPU processes): 1.5 GiB at its peak
    # (bench/scale.py).
    attempt_memory_mb: ClassVar[int] = 1500
    # A Global attempt is one model call, then seconds of rendering and scoring.
    attempts_per_core: ClassVar[int] = 2
    queue_work: ClassVar[str] = "WebUI pages in Chromium"
    # Model-written pages run in a Chromium inside its own user and network namespaces (no network);
    # production refuses to evaluate pages without them (MAGEBENCH_WEBUI_REQUIRE_NETWORK_NAMESPACE).
    worker_pool: ClassVar[WorkerPool] = WorkerPool(network_namespaces=True)
    position: ClassVar[int] = 0
    score_hint: ClassVar[str] = "AES %"
    tag_groups: ClassVar[tuple[tuple[str, str], ...]] = (("key", "Page"),)
    #: AES has an absolute meaning: a page under half the maximum score is failed.
    fail_threshold: ClassVar[float | None] = 50.0
    #: The generated page; a run folder holding none of it (and no reply) generated no page.
    code_files: ClassVar[tuple[tuple[str, str], ...]] = (("html", "index.html"), ("css", "style.css"),
                                                         ("js", "script.js"))
    #: The fence languages the parser reads a page's files from (``evaluators.webui.parsing``).
    upload_code_fences: ClassVar[tuple[tuple[str, str], ...]] = (("html", "html"), ("css", "css"),
                                                                 ("js", "javascript"))
    #: The official ``result`` is AES as a fraction of 1 (a weighted mean of element scores in [0, 1]);
    #: the platform shows it as a percentage.
    result_scale: ClassVar[float] = 100.0
    result_range: ClassVar[tuple[float, float] | None] = (0.0, 1.0)
    #: One point of AES %.
    self_report_tolerance: ClassVar[float] = 1.0
    baseline_agents: ClassVar[tuple[str, ...]] = ("idle", "degraded", "oracle")
    demo_baselines: ClassVar[DemoBaselines] = DEMO_BASELINES
    operator_settings: ClassVar[OperatorSettings] = OPERATOR_SETTINGS
    paper_rows: ClassVar[PaperRows] = PAPER_ROWS
    baseline_notes: ClassVar[Mapping[str, str]] = {
        "oracle": "answers with the target page's own files",
        "degraded": "the target page with every style stripped",
    }
    upload_note: ClassVar[str] = ("WebUI code is rendered in Chromium and scored with AES (an official result of 0.8 "
                                  "is 80 %)")
    # The task is a page to rebuild: its images are the task itself, not a rendering to skip.
    text_only_runs: ClassVar[bool] = False
    replay_template: ClassVar[str | None] = "webui/replay.html"
    #: Every imported page is run once (its scripted actions on the target, and a perfect copy).
    scenario_check: ClassVar[str | None] = "page_check"
    replay_scripts: ClassVar[tuple[str, ...]] = ("js/replay_webui.js",)
    replay_styles: ClassVar[tuple[str, ...]] = ("css/replay_webui.css",)
    # The official experiment scripts (reference §1): API models see up to 10 images.
    # The metric variant and the viewport are recorded with every submission, so its page states the
    # metric and the viewport it was scored by, and a later change of either default re-labels none.
    default_settings: ClassVar[dict[str, dict[str, Any]]] = {
        FLOW_GLOBAL: {"resolution": 1920, "max_image": 10, "repeats": 3, "max_tokens": 4000,
                      EXCLUDE_UNCHANGED_SETTING: False, VIEWPORT_1080_SETTING: False},
        FLOW_ONLINE: {"resolution": 1920, "max_image": 10, "max_loop": 4, "repeats": 3, "max_tokens": 4000,
                      EXCLUDE_UNCHANGED_SETTING: False, VIEWPORT_1080_SETTING: False},
    }

    @property
    def metric_card(self) -> dict[str, Any]:
        from evaluators.webui.card import METRIC_CARD

        return METRIC_CARD

    def discover(self, resources: Path, *, verify: bool = True) -> list[ImportedScenario]:
        from evaluators.webui.resources import discover_webui

        return discover_webui(resources, verify=verify)

    def new_episode(self, scenario: ScenarioSpec, settings: EvaluationSettings) -> Episode:
        from evaluators.webui.env import WebUIEpisode

        return WebUIEpisode(scenario, settings)

    def prompts(self, flow: str) -> PromptSet:
        from evaluators.webui import prompts

        if flow == FLOW_GLOBAL:
            return prompts.GLOBAL
        if flow == FLOW_ONLINE:
            return prompts.ONLINE
        raise ValueError(f"WebUI has no flow {flow!r}")

    def settings_refusal(self, flow: str, settings: EvaluationSettings,
                         scenarios: Sequence[ScenarioSpec]) -> str | None:
        """The merged Online flow shows each page's description image as the target; the official flow
        stops before its first request on a page without one, so such a board cannot run it. The
        Online flow setting means nothing to a Global run."""
        chosen = WebUIOptions.of(settings).online_flow.name
        if flow != FLOW_ONLINE:
            # A Global run would be labelled a variant for a setting it never reads.
            return (f"{ONLINE_FLOW_SETTING} picks an Online flow; a {flow} submission takes only "
                    f"{ONLINE_FLOW_SETTING}={NATURAL}") if chosen != NATURAL else None
        if chosen != MERGENODES:
            return None
        lacking = sorted(scenario.key for scenario in scenarios
                         if scenario.resource_path is None or not has_description_image(scenario.resource_path))
        if not lacking:
            return None
        return (f"{ONLINE_FLOW_SETTING}={MERGENODES} shows each page's description image (the image right after "
                f"the description's opening text) as the target, and {len(lacking)} page(s) of this board have "
                f"none: {', '.join(lacking)}; choose another {ONLINE_FLOW_SETTING} or another board")

    def official_prompts(self, checkout: OfficialCheckout, flow: str) -> PromptSet | None:
        from evaluators.webui.official import official_prompt_set

        return official_prompt_set(checkout, flow)

    def parse(self, flow: str, reply: str) -> ParseResult:
        from evaluators.webui.parsing import parse_reply

        return parse_reply(flow, reply)

    def flow_runner(self, flow: str) -> Any:
        if flow == FLOW_ONLINE:
            from evaluators.webui.flow import run_webui_online

            return run_webui_online
        return super().flow_runner(flow)

    def opening_flow(self, flow: str) -> str:
        # Online opens with a Global generation (run_webui_online's round 0), parsed as Global.
        return FLOW_GLOBAL

    def check_scenarios(self, scenarios: Sequence[StoredScenario], *, workers: int, recheck: bool,
                        store: Callable[[ScenarioCheck], None]) -> list[str]:
        from evaluators.webui.page_check import CHECK_VERSION, PageCheck, check_pages, summary_lines

        kept: list[PageCheck] = []
        todo: list[tuple[str, Path, str]] = []
        for scenario in scenarios:
            stored = scenario.data.get("page_check")
            # A page keeps an earlier check when its content and the check itself are unchanged.
            if (not recheck and isinstance(stored, dict) and stored.get("content_hash") == scenario.content_hash
                    and stored.get("version") == CHECK_VERSION and scenario.tags.get("page_check")):
                kept.append(PageCheck.from_dict(stored))
            else:
                todo.append((scenario.key, scenario.path, scenario.content_hash))

        def done(check: PageCheck) -> None:
            store(ScenarioCheck(key=check.page, status=check.status, record=check.as_dict(),
                                message=f"webui page check: {check.page} {check.status} ({check.seconds:.1f} s)"))

        # the stored pages' target renders are kept beside them for the workers' attempts
        checked = check_pages(todo, workers=workers, progress=done, store_targets=True)
        order = {scenario.key: index for index, scenario in enumerate(scenarios)}
        return summary_lines(sorted(kept + checked, key=lambda check: order[check.page]), reused=len(kept))

    floor_meaning: ClassVar[str] = "AES 0 %: a page with nothing on it"
    ceiling_meaning: ClassVar[str] = "AES 100 %: a page identical to its target in every state"

    # The official resources: 193 scenarios, 20 of them the mini set (reference §4).
    official_scenarios: ClassVar[Mapping[str, int]] = {"mini": 20, "full": 193}
    def idle_score(self, scenario: ScenarioSpec) -> float | None:
        return 0.0

    def best_score(self, scenario: ScenarioSpec) -> float | None:
        # AES % of a page identical to its target in every state.
        return 100.0

    def baseline_reply(self, agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random,
                       options: BaselineOptions) -> str | None:
        from evaluators.webui.baselines import baseline_reply

        return baseline_reply(agent, messages, rng, options)
