"""An environment's metric card: how it is scored, prompted and diagnosed."""
from __future__ import annotations

from typing import Any

from catalogue.models import Scenario
from catalogue.prompt_sets import prompt_set_current
from catalogue.selectors import suites_for
from evaluators.agents.diagnostics import DEFINITIONS as DIAGNOSTIC_DEFINITIONS
from evaluators.agents.requests import REQUEST_NOTES
from evaluators.base import get_plugin
from evaluators.settings import declared_defaults
from leaderboard.selectors.summary import METHOD


def metric_card(env: str) -> dict[str, Any]:
    plugin = get_plugin(env)
    return {
        "env": env,
        "title": plugin.title,
        "card": getattr(plugin, "metric_card", {}),
        "prompts": {flow: plugin.prompts(flow) for flow in plugin.flows},
        "suite_prompts": [(suite, flow, prompt_set_current(env, suite, flow))
                          for suite in suites_for(env) for flow in plugin.flows],
        "request_notes": REQUEST_NOTES,
        "defaults": {flow: declared_defaults(plugin, flow) for flow in plugin.flows},
        "diagnostics": DIAGNOSTIC_DEFINITIONS,
        "action_diagnostics": plugin.has_action_diagnostics,
        "scenario_notes": scenario_notes(env),
        "normalisation_method": METHOD,
    }


def scenario_notes(env: str) -> list[tuple[str, str]]:
    """The plug-in's note on each suite's scenarios (every subset), for the metric card."""
    plugin = get_plugin(env)
    if not plugin.scenario_note_field:
        return []
    values: dict[str, list[Any]] = {}
    for suite, value in (Scenario.objects.filter(environment_id=env).order_by("suite", "key")
                         .values_list("suite", f"data__{plugin.scenario_note_field}")):
        values.setdefault(suite, []).append(value)
    notes = [(suite, plugin.scenario_note(found)) for suite, found in values.items()]
    return [(suite, note) for suite, note in notes if note]
