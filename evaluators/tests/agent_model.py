"""A chat model answered in-process by a baseline agent: the baseline server less its HTTP, for tests
that play an episode through the flows without an endpoint."""
from __future__ import annotations

from typing import Any

from evaluators.baselines.agents import BaselineAgent


class AgentModel:
    def __init__(self, agent: BaselineAgent) -> None:
        self.agent = agent

    def complete(self, messages: list[dict[str, Any]], **_: Any) -> Any:
        class Completion:
            text = self.agent.reply(messages)
            prompt_tokens = completion_tokens = None

        return Completion()
