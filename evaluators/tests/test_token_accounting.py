"""An attempt's tokens are the endpoint's ``usage`` counts summed over every model call, and unknown
(never 0) when any call reported none."""
from __future__ import annotations

from typing import Any

from evaluators.agents.flows import TokenTally, run_online
from evaluators.base import ScenarioSpec, get_plugin
from evaluators.endpoints.messages import Completion
from evaluators.runner import effective_settings
from evaluators.trajectory import TrajectoryRecorder

# The box can never reach the goal by walking left: every turn is played to max_loop.
LEVEL = ScenarioSpec(env="sokoban", key="walk-left", data={
    "grid": "########\n#   @$.#\n########", "max_steps": 120,
    "upper_bound": {"actions": ["R"], "steps": 1, "reward": 10.9}})


class Billing:
    """Answers every turn with a legal move and the usage it is given, one (prompt, completion) per call."""

    def __init__(self, usage: list[tuple[int | None, int | None]]) -> None:
        self.usage = list(usage)

    def complete(self, messages: list[dict[str, Any]], **sampling: Any) -> Completion:
        prompt, completion = self.usage.pop(0)
        return Completion(text="# action Left", prompt_tokens=prompt, completion_tokens=completion, latency=0.0,
                          attempts=1, finish_reason="stop")


def _play(usage: list[tuple[int | None, int | None]], tmp_path):
    plugin = get_plugin("sokoban")
    settings = effective_settings("sokoban", "online", {"resolution": 80, "max_loop": len(usage)})
    return run_online(plugin, plugin.new_episode(LEVEL, settings), Billing(usage), settings,
                      TrajectoryRecorder(tmp_path))


def test_the_tokens_of_every_call_of_an_attempt_are_summed(tmp_path):
    result = _play([(100, 5), (120, 6), (140, 7)], tmp_path)
    assert result.model_calls == 3
    assert (result.prompt_tokens, result.completion_tokens) == (360, 18)


def test_one_call_without_usage_makes_that_count_unknown_rather_than_a_partial_sum(tmp_path):
    result = _play([(100, 5), (None, 6), (140, 7)], tmp_path)
    assert result.model_calls == 3
    assert result.prompt_tokens is None and result.completion_tokens == 18


def test_an_endpoint_that_never_reports_usage_leaves_both_counts_unknown_not_zero(tmp_path):
    result = _play([(None, None), (None, None)], tmp_path)
    assert result.model_calls == 2
    assert result.prompt_tokens is None and result.completion_tokens is None


def test_a_tally_of_no_calls_is_zero_tokens_and_a_reported_zero_stays_zero():
    tally = TokenTally()
    assert (tally.prompt_tokens, tally.completion_tokens) == (0, 0)
    tally.add(0, 0)
    tally.add(7, 0)
    assert (tally.prompt_tokens, tally.completion_tokens) == (7, 0)
