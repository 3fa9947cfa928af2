"""Re-scoring uploaded runs: the one path shared by the site's workers, ``validate_upload --rescore``
and the upload-agreement bench.

An uploaded run is replayed as a recorded model: its replies go, one per model call, through the
same flow, parser and environment as a live endpoint's (``evaluators.runner.run_attempt``). No
database is needed here, so the command and the bench can re-score files offline.
"""
from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.agents.flows import FlowResult, ProgressCallback
from evaluators.agents.replay import RecordedModel
from evaluators.base import PromptSet, ScenarioSpec, get_plugin
from evaluators.endpoints.errors import InfraError
from evaluators.runner import EnvironmentFailure, effective_settings, run_attempt
from evaluators.settings import EvaluationSettings
from submissions.uploads import UploadedRun, runs_to_replies


def resimulated(env: str) -> bool:
    """Whether an uploaded run is played again on a stochastic engine: its score is then a new
    sample, not a check of the uploaded one."""
    return get_plugin(env).stochastic


def upload_settings(env: str, flow: str, *, subset: str = "mini",
                    overrides: Mapping[str, Any] | None = None) -> EvaluationSettings:
    """The settings every run of an upload is replayed with.

    Each recorded reply is one model call of the official flow, which asks for no regeneration:
    a reply without an action consumes its turn (no parse retries). A recorded model reads
    nothing, so a re-simulated environment renders no frame for it (rendering is its costliest
    part, and it moves the engine's random state: a seed then reproduces an episode only without it).
    """
    fixed: dict[str, Any] = {"parse_retries": 0}
    if resimulated(env):
        fixed["observation_images"] = False
    return effective_settings(env, flow, {**fixed, **dict(overrides or {})}, subset=subset)


def rescoring_label(env: str) -> str:
    """How an upload's runs are scored, in the words of its page and its board entry."""
    return "re-simulated" if resimulated(env) else "re-scored"


def recorded_run(run: UploadedRun, *, env: str, flow: str) -> dict[str, Any]:
    """What an attempt keeps of an uploaded run: the replies to play back and the run's own claims."""
    return {"replies": runs_to_replies(run, env=env, flow=flow), "self_score": run.self_score,
            "self_error": run.self_error, "source": run.source}


def replay_recorded(*, scenario: ScenarioSpec, flow: str, settings: EvaluationSettings, recorded: Mapping[str, Any],
                    out_dir: Path, progress: ProgressCallback | None = None,
                    prompts: Mapping[str, PromptSet] | None = None) -> FlowResult:
    """Play a recorded run's replies to the environment and score the episode.

    Raises what ``run_attempt`` raises: EnvironmentFailure (the platform's fault, never scored) or
    Cancelled (from ``progress``).
    """
    return run_attempt(scenario=scenario, flow=flow, settings=settings,
                       model=RecordedModel(recorded.get("replies") or []), out_dir=out_dir, progress=progress,
                       prompts=prompts)


def agreement(env: str, claimed: float | None, score: float | None) -> bool | None:
    """Whether a self-reported score matches the platform's within the environment's tolerance."""
    if claimed is None or score is None:
        return None
    return not abs(float(claimed) - float(score)) > get_plugin(env).self_report_tolerance


def self_report(env: str, recorded: Mapping[str, Any], score: float) -> dict[str, Any]:
    """The ``self_reported`` entry an attempt's details keep beside its score ({} without a claim)."""
    claimed = recorded.get("self_score")
    if claimed is None and not recorded.get("self_error"):
        return {}
    return {"self_reported": {"score": claimed, "error": recorded.get("self_error", ""),
                              "disagrees": agreement(env, claimed, score) is False}}


@dataclass(frozen=True)
class RescoredRun:
    """One uploaded run next to the platform's score for it."""

    scenario: str
    repeat: int
    score: float | None
    reported: float | None
    agrees: bool | None
    error: str = ""
    outcome: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "repeat": self.repeat, "score": self.score, "reported": self.reported,
                "agrees": self.agrees, "error": self.error or None}


def rescore_runs(runs: list[UploadedRun], *, env: str, flow: str, scenarios: Mapping[str, ScenarioSpec],
                 settings: EvaluationSettings, out_root: Path | None = None) -> Iterator[RescoredRun]:
    """Re-score parsed upload runs one by one, as the site's workers do.

    Trajectories go to ``out_root/<scenario>_r<repeat>/`` (a temporary folder, removed, when not
    given). A run the platform fails to play is reported with its error and no score.
    """
    with tempfile.TemporaryDirectory(prefix="magebench-rescore-") as scratch:
        root = out_root or Path(scratch)
        for run in runs:
            recorded = recorded_run(run, env=env, flow=flow)
            try:
                result = replay_recorded(scenario=scenarios[run.scenario], flow=flow, settings=settings,
                                         recorded=recorded, out_dir=root / f"{run.scenario}_r{run.repeat}")
            except (InfraError, EnvironmentFailure, ValueError) as exc:
                rescored = RescoredRun(run.scenario, run.repeat, None, run.self_score, None,
                                       error=str(exc) or type(exc).__name__)
            else:
                score = result.score if math.isfinite(result.score) else None
                rescored = RescoredRun(run.scenario, run.repeat, score, run.self_score,
                                       agreement(env, run.self_score, score), outcome=result.outcome)
            yield rescored
