"""The first request of an attempt, sent alone: what a team's test call of its endpoint runs.

A test call must send exactly what an attempt would send first (the same prompts, images, request
profile and model id), so it is not composed here: the attempt's own flow runs through
:func:`evaluators.runner.run_attempt` against the real model, and is stopped as soon as the first
answer is in. Only that one chat-completions request reaches the endpoint.
"""
from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.agents.flows import Cancelled, ChatModel
from evaluators.base import PromptSet, ScenarioSpec, get_plugin
from evaluators.declarations import ParseResult
from evaluators.endpoints.profile import OFFICIAL_PROFILE, RequestProfile
from evaluators.runner import EnvironmentFailure, run_attempt
from evaluators.settings import EvaluationSettings


class FirstAnswerIn(Cancelled):
    """Ends the episode once its first request has been answered: nothing after it is wanted."""


class FirstCallOnly:
    """A ChatModel that forwards the first call to ``model``, keeps its answer, and refuses any other.

    A second call cannot happen when the flow is stopped after the first answer (see
    :func:`first_request`); refusing it anyway keeps a flow that calls twice before reporting
    progress from sending a request the team did not ask for.
    """

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.completion: Any = None

    def complete(self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int,
                 top_p: float | None = None, frequency_penalty: float | None = None,
                 profile: RequestProfile = OFFICIAL_PROFILE) -> Any:
        if self.completion is not None:
            raise FirstAnswerIn()
        self.completion = self.model.complete(messages, temperature=temperature, max_tokens=max_tokens, top_p=top_p,
                                              frequency_penalty=frequency_penalty, profile=profile)
        return self.completion


@dataclass(frozen=True)
class FirstAnswer:
    """The answer to an attempt's first request, and what the plug-in's parser made of it."""

    completion: Any
    parsed: ParseResult


def first_request(*, scenario: ScenarioSpec, flow: str, settings: EvaluationSettings, model: ChatModel,
                  out_dir: Path, prompts: PromptSet | Mapping[str, PromptSet] | None = None) -> FirstAnswer:
    """Send the first request an attempt of ``scenario`` would send, and parse its answer.

    Raises InfraError when the endpoint gave no answer (its classified kind and message), and
    EnvironmentFailure when the environment broke before the request could be built.
    """
    wrapper = FirstCallOnly(model)

    def stop_once_answered(progress: dict[str, Any]) -> None:
        # The flows report progress right after recording each answer, before parsing it or
        # stepping the environment: stopping here spares the environment's work (a WebUI render, a
        # Football episode) that the answer would otherwise set off.
        if wrapper.completion is not None:
            raise FirstAnswerIn()

    with contextlib.suppress(FirstAnswerIn):
        run_attempt(scenario=scenario, flow=flow, settings=settings, model=wrapper, out_dir=out_dir,
                    progress=stop_once_answered, prompts=prompts)
    if wrapper.completion is None:
        raise EnvironmentFailure(f"the {flow} flow of {scenario.key} ended without asking the model anything")
    reply = wrapper.completion.text if isinstance(wrapper.completion.text, str) else ""
    plugin = get_plugin(scenario.env)
    return FirstAnswer(completion=wrapper.completion, parsed=plugin.parse(plugin.opening_flow(flow), reply))
