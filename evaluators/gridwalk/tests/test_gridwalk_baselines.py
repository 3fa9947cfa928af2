"""The baseline agents play GridWalk through the plug-in's own policies."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from evaluators.agents.flows import FlowResult, run_global, run_online
from evaluators.base import ScenarioSpec, get_plugin
from evaluators.baselines.agents import make_agent
from evaluators.gridwalk.baselines import baseline_reply
from evaluators.gridwalk.grid import Level
from evaluators.gridwalk.plugin import GridWalkPlugin
from evaluators.settings import EvaluationSettings
from evaluators.tests.agent_model import AgentModel
from evaluators.trajectory import TrajectoryRecorder

MAZE = ["#########", "#@..#...#", "##.##.#.#", "#..#..#.#", "#.##.##.#", "#......G#", "#########"]


@pytest.fixture
def registered(settings: Any) -> GridWalkPlugin:
    settings.MAGEBENCH_ENVIRONMENTS = [*settings.MAGEBENCH_ENVIRONMENTS, "evaluators.gridwalk"]
    plugin = get_plugin("gridwalk")
    assert isinstance(plugin, GridWalkPlugin)
    return plugin


def _play(plugin: GridWalkPlugin, agent: str, flow: str, tmp_path: Path) -> FlowResult:
    spec = ScenarioSpec(env="gridwalk", key="maze", data={"grid": MAZE})
    settings = EvaluationSettings.defaults(plugin, flow)
    runner = run_global if flow == "global" else run_online
    episode = plugin.new_episode(spec, settings)
    return runner(plugin, episode, AgentModel(make_agent(agent, seed=3)), settings,
                  TrajectoryRecorder(tmp_path / f"{agent}-{flow}"))


@pytest.mark.parametrize("flow", ["global", "online"])
def test_the_oracle_walks_a_shortest_route_from_the_image_alone(registered: GridWalkPlugin, flow: str,
                                                                 tmp_path: Path) -> None:
    result = _play(registered, "oracle", flow, tmp_path)
    assert result.score == 100.0 and result.steps == Level.from_rows(MAZE).distance((1, 1)) == 12
    assert not result.diagnostics.invalid_action


@pytest.mark.parametrize("flow", ["global", "online"])
def test_the_idle_agent_scores_the_idle_score_with_an_invalid_action(registered: GridWalkPlugin, flow: str,
                                                                      tmp_path: Path) -> None:
    result = _play(registered, "idle", flow, tmp_path)
    assert result.score == 0.0 and result.steps == 0 and result.diagnostics.invalid_action


def test_the_random_agent_is_reproducible_with_a_seed(registered: GridWalkPlugin, tmp_path: Path) -> None:
    first = _play(registered, "random", "online", tmp_path / "a")
    second = _play(registered, "random", "online", tmp_path / "b")
    assert first.diagnostics.actions == second.diagnostics.actions and first.score == second.score
    assert first.steps == 30 and not first.diagnostics.invalid_action


def test_requests_of_other_environments_are_left_to_the_other_policies() -> None:
    messages = [{"role": "system", "content": "You are playing Sokoban."},
                {"role": "user", "content": "### Actions\n<a list>"}]
    assert baseline_reply("oracle", messages, random.Random(0)) is None
