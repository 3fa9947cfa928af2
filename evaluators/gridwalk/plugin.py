"""The GridWalk environment plug-in: a walker, walls and a goal on a small grid."""
from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from evaluators.base import (
    FLOW_GLOBAL,
    FLOW_ONLINE,
    AnalysisPanel,
    BaselineOptions,
    EnvironmentPlugin,
    Episode,
    FlowTables,
    ImportedScenario,
    PromptSet,
    ReplayPanel,
    ReplyParser,
    ScenarioSpec,
)
from evaluators.gridwalk import prompts
from evaluators.gridwalk.analysis import ROUTE_LENGTH
from evaluators.gridwalk.grid import MOVES
from evaluators.gridwalk.parsing import (
    ROUTE_FENCE,
    ROUTE_FILE,
    format_move,
    format_route,
    parse_move,
    parse_route,
    route_pieces,
)
from evaluators.settings import EvaluationSettings


class GridWalkPlugin(FlowTables, EnvironmentPlugin):
    slug: ClassVar[str] = "gridwalk"
    title: ClassVar[str] = "GridWalk"
    score_label: ClassVar[str] = "Progress score"
    # An example: the default setting leaves it out, and MAGEBENCH_ENVIRONMENTS names it to load it.
    opt_in: ClassVar[bool] = True
    ACTIONS: ClassVar[tuple[str, ...]] = tuple(MOVES)
    # Its own queue, so that its workers can be sized and watched apart from the others; the
    # settings read it (evaluators.base.declared_queues) when the environment is registered.
    queue: ClassVar[str | None] = "walk"
    queue_work: ClassVar[str] = "GridWalk"
    attempt_memory_mb: ClassVar[int] = 120
    tag_groups: ClassVar[tuple[tuple[str, str], ...]] = (("size", "Grid size"), ("route", "Route"))
    analysis_panels: ClassVar[tuple[AnalysisPanel, ...]] = (ROUTE_LENGTH,)
    baseline_agents: ClassVar[tuple[str, ...]] = ("idle", "random", "oracle")
    upload_note: ClassVar[str] = "GridWalk replies and route files are parsed and played"
    code_files: ClassVar[tuple[tuple[str, str], ...]] = (("route", ROUTE_FILE),)
    upload_code_fences: ClassVar[tuple[tuple[str, str], ...]] = (("route", ROUTE_FENCE),)
    replay_template: ClassVar[str | None] = "gridwalk/replay.html"
    replay_scripts: ClassVar[tuple[str, ...]] = ("js/replay_gridwalk.js",)
    replay_styles: ClassVar[tuple[str, ...]] = ("css/replay_gridwalk.css",)
    default_settings: ClassVar[dict[str, dict[str, Any]]] = {
        FLOW_GLOBAL: {"resolution": 320, "max_image": 1, "repeats": 2, "max_tokens": 400},
        FLOW_ONLINE: {"resolution": 320, "max_image": 1, "max_memory": 5, "max_loop": 30, "repeats": 2,
                      "max_tokens": 200},
    }
    prompt_sets: ClassVar[Mapping[str, PromptSet]] = {FLOW_GLOBAL: prompts.GLOBAL, FLOW_ONLINE: prompts.ONLINE}
    reply_parsers: ClassVar[Mapping[str, ReplyParser]] = {FLOW_GLOBAL: parse_route, FLOW_ONLINE: parse_move}

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

    def action_replies(self, flow: str, actions: Sequence[str]) -> list[str]:
        if flow == FLOW_GLOBAL:
            return [format_route(actions)]
        return [format_move(action) for action in actions]

    def upload_code_schema(self) -> dict[str, Any]:
        return {"type": "object", "required": ["route"], "additionalProperties": False, "properties": {
            "route": {"type": "string", "minLength": 1,
                      "description": f"The text of {ROUTE_FILE}: move names (North, South, West, East) separated "
                                     "by commas or line breaks."}}}

    def code_replies(self, flow: str, code: Mapping[str, str]) -> list[str]:
        if flow == FLOW_GLOBAL:
            return super().code_replies(flow, code)
        # Online reads one move per reply: the route file is played one piece per turn, each
        # piece as it is, so that a piece that is no move is the IA it would be live.
        return [format_move(piece) for piece in route_pieces(code.get("route", ""))]

    def replay_panel(self, artifacts: Mapping[str, Any], read_artifact: Callable[[str], Any]) -> ReplayPanel | None:
        panel = super().replay_panel(artifacts, read_artifact)
        if panel is None:
            return None
        walk = read_artifact(str(artifacts.get("file") or ""))
        if not isinstance(walk, dict):
            # Without the walk the panel has nothing to draw: the shared timeline is the replay.
            return None
        return ReplayPanel(template=panel.template, context={"walk": walk}, scripts=panel.scripts,
                           styles=panel.styles)

    floor_meaning: ClassVar[str] = "0: standing still (d_T = d_0)"
    ceiling_meaning: ClassVar[str] = "100: the goal reached (d_T = 0)"

    def idle_score(self, scenario: ScenarioSpec) -> float | None:
        # Standing still keeps d_T = d_0.
        return 0.0

    def best_score(self, scenario: ScenarioSpec) -> float | None:
        # 100 · max(0, 1 − d_T / d_0) is 100 exactly when the goal is reached (d_T = 0).
        return 100.0

    def baseline_reply(self, agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random,
                       options: BaselineOptions) -> str | None:
        from evaluators.gridwalk.baselines import baseline_reply

        return baseline_reply(agent, messages, rng)
