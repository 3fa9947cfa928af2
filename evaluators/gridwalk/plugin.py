"""The GridWalk environment plug-in: a walker, walls and a goal on a small grid."""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from evaluators.base import (
    FLOW_GLOBAL,
    FLOW_ONLINE,
    BaselineOptions,
    EnvironmentPlugin,
    Episode,
    ImportedScenario,
    ParseResult,
    PromptSet,
    ScenarioSpec,
)
from evaluators.gridwalk import prompts
from evaluators.gridwalk.grid import MOVES
from evaluators.gridwalk.parsing import format_move, format_route, parse_move, parse_route
from evaluators.settings import EvaluationSettings


class GridWalkPlugin(EnvironmentPlugin):
    slug: ClassVar[str] = "gridwalk"
    title: ClassVar[str] = "GridWalk"
    score_label: ClassVar[str] = "Progress score"
    ACTIONS: ClassVar[tuple[str, ...]] = tuple(MOVES)
    queue_work: ClassVar[str] = "GridWalk"
    tag_groups: ClassVar[tuple[tuple[str, str], ...]] = (("size", "Grid size"), ("route", "Route"))
    baseline_agents: ClassVar[tuple[str, ...]] = ("idle", "random", "oracle")
    upload_note: ClassVar[str] = "GridWalk replies are parsed and played"
    default_settings: ClassVar[dict[str, dict[str, Any]]] = {
        FLOW_GLOBAL: {"resolution": 320, "max_image": 1, "repeats": 2, "max_tokens": 400},
        FLOW_ONLINE: {"resolution": 320, "max_image": 1, "max_memory": 5, "max_loop": 30, "repeats": 2,
                      "max_tokens": 200},
    }

    @property
    def metric_card(self) -> dict[str, Any]:
        from evaluators.gridwalk.card import METRIC_CARD

        return METRIC_CARD

    def discover(self, resources: Path, *, verify: bool = True) -> list[ImportedScenario]:
        from evaluators.gridwalk.resources import discover_gridwalk

        return discover_gridwalk(resources)

    def new_episode(self, scenario: ScenarioSpec, settings: EvaluationSettings) -> Episode:
        from evaluators.gridwalk.env import GridWalkEpisode

        return GridWalkEpisode.from_scenario(scenario, settings)

    def prompts(self, flow: str) -> PromptSet:
        if flow == FLOW_GLOBAL:
            return prompts.GLOBAL
        if flow == FLOW_ONLINE:
            return prompts.ONLINE
        raise ValueError(f"GridWalk has no flow {flow!r}")

    def parse(self, flow: str, reply: str) -> ParseResult:
        if flow == FLOW_GLOBAL:
            return parse_route(reply, self.ACTIONS)
        if flow == FLOW_ONLINE:
            return parse_move(reply, self.ACTIONS)
        raise ValueError(f"GridWalk has no flow {flow!r}")

    def action_replies(self, flow: str, actions: Sequence[str]) -> list[str]:
        if flow == FLOW_GLOBAL:
            return [format_route(actions)]
        return [format_move(action) for action in actions]

    def idle_score(self, scenario: ScenarioSpec) -> float | None:
        # Standing still keeps d_T = d_0.
        return 0.0

    def baseline_reply(self, agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random,
                       options: BaselineOptions) -> str | None:
        from evaluators.gridwalk.baselines import baseline_reply

        return baseline_reply(agent, messages, rng)
