"""Run one attempt end to end: the single code path for workers, commands and tests."""
from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluators.agents.flows import Cancelled, ChatModel, FlowResult, ProgressCallback
from evaluators.base import PromptSet, ScenarioSpec, get_plugin
from evaluators.endpoints.errors import InfraError
from evaluators.paths import shown, shown_in
from evaluators.settings import EvaluationSettings
from evaluators.trajectory import TrajectoryRecorder

logger = logging.getLogger(__name__)

ENV_ERROR = "env_error"


class EnvironmentFailure(Exception):
    """The environment itself broke (a bug, a missing resource): never the model's fault."""

    kind = ENV_ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def effective_settings(env: str, flow: str, overrides: Mapping[str, Any] | None = None,
                       subset: str = "mini") -> EvaluationSettings:
    """The plug-in's settings for ``flow`` on ``subset`` with ``overrides`` the platform itself sets
    (the offline commands, benches and tests; submitters' values go through the submission services)."""
    return EvaluationSettings.from_mapping(overrides or {}, env, flow, subset=subset, platform=True)


def run_attempt(*, scenario: ScenarioSpec, flow: str, settings: EvaluationSettings, model: ChatModel,
                out_dir: Path, progress: ProgressCallback | None = None,
                prompts: PromptSet | Mapping[str, PromptSet] | None = None) -> FlowResult:
    """Play one episode and score it. Raises InfraError (never scored) or Cancelled.

    ``prompts`` is the prompt set of ``flow`` (or the sets by flow, for a flow that also plays
    another's turns, as WebUI Online opens with a Global generation); None: the plug-in's own."""
    plugin = get_plugin(scenario.env)
    if flow not in plugin.flows:
        raise ValueError(f"{plugin.title} has no {flow} flow")
    recorder = TrajectoryRecorder(out_dir)
    recorder.meta.update({"env": scenario.env, "scenario": scenario.key, "flow": flow, "settings": settings.to_dict()})
    episode = None
    try:
        episode = plugin.new_episode(scenario, settings)
        prompt_sets = {flow: prompts} if isinstance(prompts, PromptSet) else prompts
        result = plugin.flow_runner(flow)(plugin, episode, model, settings, recorder, progress,
                                          prompt_sets=prompt_sets)
        artifacts = episode.save_artifacts(out_dir)
    except (InfraError, Cancelled):
        recorder.finish({"status": "aborted"})
        raise
    except Exception as exc:  # noqa: BLE001 - anything else is the platform's failure, not the model's
        logger.exception("environment failure on %s/%s", scenario.env, scenario.key)
        recorder.finish({"status": "aborted", "error": shown(repr(exc))})
        raise EnvironmentFailure(shown(f"{type(exc).__name__}: {exc}")) from exc
    finally:
        if episode is not None:
            episode.close()
    # Page errors, blocked URLs and the like can quote the folders the episode ran in.
    result.details, result.extra = shown_in(result.details), shown_in(result.extra)
    recorder.finish({
        "artifacts": artifacts,
        "status": "scored",
        "score": result.score,
        "outcome": result.outcome,
        "details": result.details,
        "diagnostics": result.diagnostics.as_dict(),
        "model_calls": result.model_calls,
        "endpoint_retries": result.endpoint_retries,
    })
    return result
