"""A minimal environment plug-in, for the registry's tests: the module path is what they load."""
from __future__ import annotations

from typing import Any, ClassVar

from evaluators.base import FLOW_ONLINE, EnvironmentPlugin, Episode, ParseResult, PromptSet, ScenarioSpec
from evaluators.settings import EvaluationSettings


class TinyPlugin(EnvironmentPlugin):
    slug: ClassVar[str] = "tiny"
    title: ClassVar[str] = "Tiny"
    score_label: ClassVar[str] = "Score"
    flows: ClassVar[tuple[str, ...]] = (FLOW_ONLINE,)
    default_settings: ClassVar[dict[str, dict[str, Any]]] = {
        FLOW_ONLINE: {"resolution": 64, "max_image": 1, "max_tokens": 100, "repeats": 1}}
    queue: ClassVar[str | None] = "engine"

    def new_episode(self, scenario: ScenarioSpec, settings: EvaluationSettings) -> Episode:
        raise NotImplementedError("the registry's tests never play an episode")

    def prompts(self, flow: str) -> PromptSet:
        return PromptSet(version="tiny-1", system="", format_instruction="", first_turn="", next_turn="",
                         regenerate="")

    def parse(self, flow: str, reply: str) -> ParseResult:
        return ParseResult(actions=[reply] if reply else [], error=None if reply else "empty reply")


plugin = TinyPlugin()
