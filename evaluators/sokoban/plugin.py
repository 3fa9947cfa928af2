"""The Sokoban environment plug-in (reference §2.2): gym-sokoban levels, reward-score metric."""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evaluators.agents.parsing import ACTION_PARSERS
from evaluators.base import (
    FLOW_GLOBAL,
    FLOW_ONLINE,
    BaselineOptions,
    EnvironmentPlugin,
    Episode,
    FlowTables,
    ImportedScenario,
    PaperRows,
    PromptSet,
    ReplyParser,
    ScenarioSpec,
)
from evaluators.settings import EvaluationSettings
from evaluators.sokoban import prompts
from evaluators.sokoban.actions import ACTIONS

if TYPE_CHECKING:
    from evaluators.agents.checkout import OfficialCheckout


class SokobanPlugin(FlowTables, EnvironmentPlugin):
    slug: ClassVar[str] = "sokoban"
    title: ClassVar[str] = "Sokoban"
    score_label: ClassVar[str] = "Reward score"
    ACTIONS: ClassVar[tuple[str, ...]] = ACTIONS
    position: ClassVar[int] = 1
    score_hint: ClassVar[str] = "reward score (100 = optimal)"
    queue_work: ClassVar[str] = "Sokoban"
    # A worker process playing levels: 360 MiB at its peak (bench/scale.py).
    attempt_memory_mb: ClassVar[int] = 400
    # Milliseconds of work per model call: the worker mostly waits.
    attempts_per_core: ClassVar[int] = 8
    tag_groups: ClassVar[tuple[tuple[str, str], ...]] = (("variant", "Variant"), ("boxes", "Boxes"))
    #: Scores move in steps of 0.5: anything further off is another trajectory.
    self_report_tolerance: ClassVar[float] = 0.01
    baseline_agents: ClassVar[tuple[str, ...]] = ("idle", "random", "oracle")
    baseline_notes: ClassVar[Mapping[str, str]] = {
        "oracle": "reads the level from the image and plays an optimal solution",
    }
    upload_note: ClassVar[str] = "Sokoban replies are parsed and played"
    # The official experiment scripts' settings (reference §1); every flow sends the official
    # request settings, EvaluationSettings' own defaults.
    default_settings: ClassVar[dict[str, dict[str, Any]]] = {
        FLOW_GLOBAL: {"resolution": 640, "max_image": 1, "repeats": 3, "max_tokens": 1000},
        FLOW_ONLINE: {"resolution": 640, "max_image": 1, "max_memory": 5, "max_loop": 50, "repeats": 3,
                      "max_tokens": 300},
    }
    prompt_sets: ClassVar[Mapping[str, PromptSet]] = {FLOW_GLOBAL: prompts.GLOBAL, FLOW_ONLINE: prompts.ONLINE}
    # The official parsers (reference §2.2).
    reply_parsers: ClassVar[Mapping[str, ReplyParser]] = ACTION_PARSERS

    @property
    def metric_card(self) -> dict[str, Any]:
        from evaluators.sokoban.card import METRIC_CARD

        return METRIC_CARD

    #: Each level's optimal cumulative reward: what the score's floor follows from.
    scenario_note_field: ClassVar[str] = "upper_bound__reward"

    def scenario_note(self, values: Sequence[Any]) -> str:
        from evaluators.sokoban.card import floor_note

        return floor_note([float(value) for value in values if value is not None])

    def discover(self, resources: Path, *, verify: bool = True) -> list[ImportedScenario]:
        from evaluators.sokoban.resources import discover_sokoban

        return discover_sokoban(resources, verify=verify)

    def new_episode(self, scenario: ScenarioSpec, settings: EvaluationSettings) -> Episode:
        # Imported here so that registering the plug-in never loads gym or gym-sokoban.
        from evaluators.sokoban.env import SokobanEpisode

        return SokobanEpisode.from_scenario(scenario, settings)

    def official_prompts(self, checkout: OfficialCheckout, flow: str) -> PromptSet | None:
        from evaluators.sokoban.official import official_prompt_set

        return official_prompt_set(checkout, flow)

    floor_meaning: ClassVar[str] = "100 − 5 · R_ub per level: what doing nothing scores (closed form)"
    ceiling_meaning: ClassVar[str] = "100 per level: an optimal solution (B_T = R_ub)"

    # The official resources: 182 scenarios, 20 of them the mini set (reference §4).
    official_scenarios: ClassVar[Mapping[str, int]] = {"mini": 20, "full": 182}
    #: Tables 1 and 4: 3 repeats; Table 4's δ: Global 0.5, Online 0.4; Table 2's first two IA/RA pairs.
    paper_rows: ClassVar[PaperRows] = PaperRows(
        column="Sokoban", repeats={"mini": 3, "full": 3},
        uncertainty={("global", "full"): 0.5, ("online", "full"): 0.4}, ia_ra_pairs={"global": 0, "online": 1})

    def idle_score(self, scenario: ScenarioSpec) -> float | None:
        try:
            upper_bound = float(scenario.data["upper_bound"]["reward"])
        except (KeyError, TypeError, ValueError):
            return None
        # Zero actions leave B at B_0 = 0 (the same rounding as SokobanEpisode.score).
        return round(100.0 - 5.0 * upper_bound, 6)

    def best_score(self, scenario: ScenarioSpec) -> float | None:
        # 100 + 5·(B_T − R_ub) with B_T = R_ub: an optimal solution, whatever the level.
        return 100.0

    def baseline_reply(self, agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random,
                       options: BaselineOptions) -> str | None:
        from evaluators.sokoban.baselines import baseline_reply

        return baseline_reply(agent, messages, rng, options)
