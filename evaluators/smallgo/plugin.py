"""The Small Go environment plug-in: the model plays Black against GNU Go on a small board."""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from evaluators.agents.parsing import ACTION_PARSERS
from evaluators.base import (
    FLOW_GLOBAL,
    FLOW_ONLINE,
    BaselineOptions,
    EnvironmentPlugin,
    Episode,
    FlowTables,
    ImportedScenario,
    PromptSet,
    ReplyParser,
    ScenarioSpec,
)
from evaluators.settings import EvaluationSettings

from . import prompts
from .board import ACTIONS, PASS


class SmallGoPlugin(FlowTables, EnvironmentPlugin):
    slug: ClassVar[str] = "smallgo"
    title: ClassVar[str] = "SmallGo"
    score_label: ClassVar[str] = "Area %"
    # An example: the default setting leaves it out, and MAGEBENCH_ENVIRONMENTS names it to load it.
    opt_in: ClassVar[bool] = True
    ACTIONS: ClassVar[tuple[str, ...]] = ACTIONS
    # A pass leaves the board as it is: replies made only of passes are RA.
    PASS_ACTIONS: ClassVar[frozenset[str]] = frozenset({PASS})
    # Its own kind of work: every attempt drives a GNU Go process, CPU-bound while the engine thinks,
    # so its workers are sized and watched apart from the model-call pool.
    queue: ClassVar[str | None] = "gtp"
    queue_work: ClassVar[str] = "Small Go games against GNU Go"
    attempt_memory_mb: ClassVar[int] = 150
    attempts_per_core: ClassVar[int] = 3
    tag_groups: ClassVar[tuple[tuple[str, str], ...]] = (("size", "Board size"), ("opening", "Opening"))
    upload_note: ClassVar[str] = "Small Go replies and move lists are played against the same engine"
    default_settings: ClassVar[dict[str, dict[str, Any]]] = {
        FLOW_GLOBAL: {"resolution": 320, "max_image": 1, "repeats": 1, "max_tokens": 400},
        FLOW_ONLINE: {"resolution": 320, "max_image": 1, "max_memory": 5, "max_loop": 20, "repeats": 1,
                      "max_tokens": 200},
    }
    prompt_sets: ClassVar[Mapping[str, PromptSet]] = {FLOW_GLOBAL: prompts.GLOBAL, FLOW_ONLINE: prompts.ONLINE}
    # The official formats (### Actions, # action), read with the board's move names.
    reply_parsers: ClassVar[Mapping[str, ReplyParser]] = ACTION_PARSERS
    floor_meaning: ClassVar[str] = "0: no black stone or area at the end"
    ceiling_meaning: ClassVar[str] = "100: the whole board Black's"

    @property
    def metric_card(self) -> dict[str, Any]:
        from .card import METRIC_CARD

        return METRIC_CARD

    def discover(self, resources: Path, *, verify: bool = True) -> list[ImportedScenario]:
        from .resources import discover_smallgo

        return discover_smallgo(resources)

    def new_episode(self, scenario: ScenarioSpec, settings: EvaluationSettings) -> Episode:
        from .env import SmallGoEpisode

        return SmallGoEpisode.from_scenario(scenario, settings)

    def baseline_reply(self, agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random,
                       options: BaselineOptions) -> str | None:
        from .baselines import baseline_reply

        return baseline_reply(agent, messages, rng, options)
