"""Reads of the scenario catalogue: the suites an environment has, and the one its boards show.

The catalogue sits below submissions (which take their scenarios from it); the boards in
``leaderboard.selectors`` sit above them.
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

from catalogue.models import ReportedResult, Scenario
from evaluators.base import ScenarioSpec


def default_suite(env: str) -> str:
    """The official scenarios once imported, else the platform's fixtures."""
    if settings.MAGEBENCH_DEFAULT_SUITE:
        return settings.MAGEBENCH_DEFAULT_SUITE
    if Scenario.objects.filter(environment_id=env, suite="official").exists():
        return "official"
    return "fixture"


def scenario_spec(scenario: Scenario) -> ScenarioSpec:
    """A stored scenario as the plug-ins take it: plain data, its resource folder or file resolved."""
    resource = Path(scenario.resource_path) if scenario.resource_path else None
    if resource is not None and not resource.is_absolute():
        resource = settings.SCENARIO_ROOT / resource
    return ScenarioSpec(env=scenario.environment_id, key=scenario.key, data=scenario.data, resource_path=resource)


def suites_for(env: str) -> list[str]:
    """The suites with scenarios of ``env``."""
    suites = Scenario.objects.filter(environment_id=env).values_list("suite", flat=True)
    return list(suites.distinct().order_by("suite"))


def board_suites(env: str) -> list[str]:
    """The suites a visitor of ``env``'s boards can pick: those with scenarios, and the official one
    wherever published numbers are (they belong to it, and its boards show them before any official
    import)."""
    suites = set(suites_for(env))
    if ReportedResult.objects.filter(environment_id=env).exists():
        suites.add("official")
    return sorted(suites)


def environments_with_reported_results() -> set[str]:
    """The environments whose official boards show published numbers (the paper's reported rows)."""
    return set(ReportedResult.objects.values_list("environment_id", flat=True).distinct())
