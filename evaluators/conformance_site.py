"""The conformance check's part for what a plug-in declares about the site around its episodes: its
loading, its operator settings, its demo baselines and its paper rows (``evaluators.conformance``)."""
from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from evaluators.declarations import SUBSETS, DemoBaselines, OperatorSetting, OperatorSettings, PaperRows
from evaluators.interface import EnvironmentPlugin

_VARIABLE = re.compile(r"^MAGEBENCH_[A-Z0-9_]+$")


def _of_kind(value: Any, kind: type) -> bool:
    # A bool is an int to isinstance; an int is a fine float.
    if kind is bool or isinstance(value, bool):
        return kind is bool and isinstance(value, bool)
    return isinstance(value, int | float) if kind is float else isinstance(value, kind)


def _setting(setting: Any) -> list[str]:
    if not isinstance(setting, OperatorSetting):
        return [f"operator_settings.settings must hold OperatorSetting, not {setting!r}"]
    problems = []
    if not (isinstance(setting.name, str) and _VARIABLE.match(setting.name)):
        problems.append(f"operator setting name {setting.name!r} must be MAGEBENCH_ and upper-case letters, "
                        "digits and '_'")
    if setting.kind not in (bool, int, float, str):
        problems.append(f"operator setting {setting.name!r}: kind must be bool, int, float or str")
    elif not all(_of_kind(value, setting.kind) for value in (setting.default, setting.production_default)
                 if value is not None):
        problems.append(f"operator setting {setting.name!r}: its defaults must be of its kind, {setting.kind.__name__}")
    return problems


def operator_settings(plugin: EnvironmentPlugin) -> list[str]:
    declared = plugin.operator_settings
    if not isinstance(declared, OperatorSettings) or not isinstance(declared.settings, tuple):
        return ["operator_settings must be an OperatorSettings with a tuple of settings"]
    problems = [problem for setting in declared.settings for problem in _setting(setting)]
    names = [getattr(setting, "name", None) for setting in declared.settings]
    if len(set(names)) != len(names):
        problems.append("operator_settings names a setting more than once")
    if declared.settings and not callable(declared.apply):
        problems.append("operator_settings with settings needs an apply function to hand their values to")
    return problems


def _among(values: Any, allowed: Collection, what: str, where: str) -> list[str]:
    if isinstance(values, tuple) and all(value in allowed for value in values):
        return []
    return [f"{where} must be a tuple among {what} ({', '.join(map(str, allowed))}), not {values!r}"]


def demo_baselines(plugin: EnvironmentPlugin) -> list[str]:
    demo = plugin.demo_baselines
    if not isinstance(demo, DemoBaselines):
        return ["demo_baselines must be a DemoBaselines"]
    problems = [] if isinstance(demo.included, bool) else ["demo_baselines.included must be a bool"]
    problems += _among(demo.agents, plugin.baseline_agents, "baseline_agents", "demo_baselines.agents")
    problems += _among(demo.subsets, SUBSETS, "the subsets", "demo_baselines.subsets")
    problems += _among(demo.flows, plugin.flows, "flows", "demo_baselines.flows")
    if not (isinstance(demo.oracle_resources, tuple) and all(isinstance(f, str) and f for f in demo.oracle_resources)):
        problems.append("demo_baselines.oracle_resources must be a tuple of folder names")
    return problems


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _mapping(value: Any, key: Callable[[Any], bool], number: Callable[[Any], bool]) -> bool:
    return isinstance(value, Mapping) and all(key(k) and number(v) for k, v in value.items())


def paper_rows(plugin: EnvironmentPlugin) -> list[str]:
    rows = plugin.paper_rows
    if not isinstance(rows, PaperRows):
        return ["paper_rows must be a PaperRows"]
    problems = [] if isinstance(rows.column, str) else ["paper_rows.column must be a str"]
    if not _mapping(rows.repeats, lambda subset: subset in SUBSETS, lambda n: _whole(n) and n > 0):
        problems.append("paper_rows.repeats must map subsets to positive int")
    if not _mapping(rows.uncertainty, lambda k: isinstance(k, tuple) and len(k) == 2 and k[0] in plugin.flows
                    and k[1] in SUBSETS, lambda n: isinstance(n, int | float) and not isinstance(n, bool) and n >= 0):
        problems.append("paper_rows.uncertainty must map (flow, subset) of this environment to a number >= 0")
    if not _mapping(rows.ia_ra_pairs, lambda flow: flow in plugin.flows, lambda n: _whole(n) and n >= 0):
        problems.append("paper_rows.ia_ra_pairs must map flows of this environment to a pair's index >= 0")
    return problems


def loading(plugin: EnvironmentPlugin) -> list[str]:
    return [] if isinstance(plugin.opt_in, bool) else ["opt_in must be a bool"]


#: Each check's problems, as ``evaluators.conformance.check_plugin`` runs them.
SITE_CHECKS = (loading, operator_settings, demo_baselines, paper_rows)
