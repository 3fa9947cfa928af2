"""The Football environment plug-in (reference §2.3): gfootball scenarios, official dense reward."""
from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evaluators.agents.parsing import parse_online_action
from evaluators.base import (
    FLOW_ONLINE,
    AnalysisPanel,
    BaselineOptions,
    EnvironmentPlugin,
    Episode,
    ImportedScenario,
    PaperRows,
    ParseResult,
    PromptSet,
    ReplayPanel,
    ScenarioSpec,
    SettingOption,
    SummaryReference,
)
from evaluators.football.analysis import ZONES
from evaluators.football.env import ACCEPTED_ACTIONS, ARTIFACT_NAME
from evaluators.football.options import OPTIONS, SHOT_HELD_SETTING
from evaluators.football.reference import SUMMARY_REFERENCES
from evaluators.settings import EvaluationSettings
from evaluators.trajectory import REPLAY_PAGE, document_page

if TYPE_CHECKING:
    from evaluators.agents.checkout import OfficialCheckout


class FootballPlugin(EnvironmentPlugin):
    slug: ClassVar[str] = "football"
    title: ClassVar[str] = "Football"
    score_label: ClassVar[str] = "Reward"
    flows: ClassVar[tuple[str, ...]] = (FLOW_ONLINE,)
    #: The official vocabulary: action_left … action_release_dribble.
    ACTIONS: ClassVar[tuple[str, ...]] = ACCEPTED_ACTIONS
    #: A trajectory made only of these is RA (evaluators.agents.diagnostics).
    PASS_ACTIONS: ClassVar[frozenset[str]] = frozenset({"action_long_pass", "action_high_pass", "action_short_pass"})
    setting_options: ClassVar[Mapping[str, SettingOption]] = OPTIONS
    queue: ClassVar[str | None] = "engine"
    # A worker process with gfootball's engine and Mesa's renderer: 950 MiB at its peak (bench/scale.py).
    attempt_memory_mb: ClassVar[int] = 1000
    # About 0.5 s of engine and rendering work per 3 s model call.
    attempts_per_core: ClassVar[int] = 4
    queue_work: ClassVar[str] = "the Football engine"
    position: ClassVar[int] = 2
    score_hint: ClassVar[str] = "dense reward"
    tag_groups: ClassVar[tuple[tuple[str, str], ...]] = (("category", "Category"),)
    analysis_panels: ClassVar[tuple[AnalysisPanel, ...]] = (ZONES,)
    self_report_tolerance: ClassVar[float] = 0.5
    # The official resources: 108 scenarios, 20 of them the mini set (reference §4).
    official_scenarios: ClassVar[Mapping[str, int]] = {"mini": 20, "full": 108}
    #: Table 1: 10 repeats; Table 4: 3 repeats, δ 2.0; Table 2's third IA/RA pair.
    paper_rows: ClassVar[PaperRows] = PaperRows(
        column="Football", repeats={"mini": 10, "full": 3}, uncertainty={("online", "full"): 2.0},
        ia_ra_pairs={"online": 2})
    floor_meaning: ClassVar[str] = "the paper's Idle baseline (a fixed number; doing nothing has no closed form)"
    ceiling_meaning: ClassVar[str] = "the best model result the paper reports (a fixed number; no analytic maximum)"
    summary_references: ClassVar[Mapping[tuple[str, str], SummaryReference]] = SUMMARY_REFERENCES
    stochastic: ClassVar[bool] = True
    # The replay draws the pitch from raw observations, so a baseline that reads no frame loses nothing.
    text_only_baselines: ClassVar[tuple[str, ...]] = ("idle", "random")
    baseline_notes: ClassVar[Mapping[str, str]] = {
        "idle": "action_release_sprint, a no-op, as no idle action is accepted",
    }
    upload_note: ClassVar[str] = ("Football runs are played again on the engine, which is stochastic, so those rows "
                                  "are marked re-simulated")
    replay_template: ClassVar[str | None] = "football/replay.html"
    replay_scripts: ClassVar[tuple[str, ...]] = ("vendor/plotly-basic.min.js", "js/chart_axes.js",
                                                 "js/replay_football.js")
    replay_styles: ClassVar[tuple[str, ...]] = ("css/replay_football.css",)
    # The official experiment script's settings (reference §1): 10 repeats on the mini set; the full
    # set's 108 scenarios are run 3 times.
    default_settings: ClassVar[dict[str, dict[str, Any]]] = {
        FLOW_ONLINE: {
            "resolution": 1280, "max_image": 1, "max_memory": 5, "max_loop": 400,
            "repeats": {"mini": 10, "full": 3}, "max_tokens": 1000, "observation_images": True,
            # Recorded with every submission, so its page states the reward rule it was scored by.
            SHOT_HELD_SETTING: False,
        },
    }

    @property
    def metric_card(self) -> dict[str, Any]:
        from evaluators.football.card import METRIC_CARD

        return METRIC_CARD

    def discover(self, resources: Path, *, verify: bool = True) -> list[ImportedScenario]:
        from evaluators.football.resources import discover_football

        return discover_football(resources, verify=verify)

    def new_episode(self, scenario: ScenarioSpec, settings: EvaluationSettings) -> Episode:
        from evaluators.football.env import FootballEpisode

        return FootballEpisode.from_scenario(scenario, settings)

    def prompts(self, flow: str) -> PromptSet:
        if flow == FLOW_ONLINE:
            from evaluators.football.prompts import ONLINE

            return ONLINE
        raise ValueError(f"Football has no flow {flow!r}")

    def official_prompts(self, checkout: OfficialCheckout, flow: str) -> PromptSet | None:
        from evaluators.football.official import official_prompt_set

        return official_prompt_set(checkout, flow)

    def parse(self, flow: str, reply: str) -> ParseResult:
        if flow == FLOW_ONLINE:
            return parse_online_action(reply, self.ACTIONS)
        raise ValueError(f"Football has no flow {flow!r}")

    def replay_panel(self, artifacts: Mapping[str, Any], read_artifact: Callable[[str], Any]) -> ReplayPanel | None:
        panel = super().replay_panel(artifacts, read_artifact)
        if panel is None:
            return None
        # The pitch is drawn from the engine log; without it the panel says so and loads no script.
        log = read_artifact(str(artifacts.get("file") or ARTIFACT_NAME))
        if log:
            # The first engine steps only: the page's script fetches the others from the trajectory API.
            # The reward chart shows the whole episode from the start: every step's reward terms come
            # along, without the observations that make the log long.
            rewards = [{key: step.get(key) for key in ("t", "terms", "cumulative", "auto")}
                       for step in log.get("steps") or () if isinstance(step, dict)]
            log = {**document_page(log, ("steps",), offset=0, limit=REPLAY_PAGE), "rewards": rewards}
        return ReplayPanel(template=panel.template, context={"football": log}, scripts=panel.scripts if log else (),
                           styles=panel.styles)

    def baseline_reply(self, agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random,
                       options: BaselineOptions) -> str | None:
        from evaluators.football.baselines import baseline_reply

        return baseline_reply(agent, messages, rng, options)
