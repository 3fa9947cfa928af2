"""The check every plug-in passes when it is registered (:func:`evaluators.base.load_plugins`).

Like Gymnasium's ``check_env``, it catches a plug-in that would fail later, on a page or in a worker,
at start-up instead, with every problem named at once: an attribute the platform never reads (a
misspelt declaration silently keeps the default), a declaration of the wrong shape, and a cheap
hook that raises or answers the wrong type on a tiny input. It plays no episode.
"""
from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Collection, Mapping
from functools import partial
from typing import Any

from evaluators.conformance_site import SITE_CHECKS
from evaluators.declarations import (
    FLOWS,
    PLOTLY_BUNDLES,
    SUBSETS,
    AnalysisPanel,
    BreakdownPart,
    ParseResult,
    PromptSet,
    ReplayPanel,
    ScenarioMeans,
    SettingOption,
    WorkerPool,
)
from evaluators.interface import EnvironmentPlugin
from evaluators.registry import PluginConfigurationError

_SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")


class PluginConformanceError(PluginConfigurationError):
    """A plug-in that does not keep the interface's contract; the message lists every problem."""

    def __init__(self, plugin: EnvironmentPlugin, problems: list[str]) -> None:
        self.problems = problems
        name = f"{type(plugin).__module__}.{type(plugin).__qualname__}"
        super().__init__(f"environment plug-in {name} does not conform: " + "; ".join(problems))


def interface_names() -> frozenset[str]:
    """Every public name :class:`EnvironmentPlugin` declares (attributes, hooks and the required
    annotations without a default)."""
    names = set(getattr(EnvironmentPlugin, "__annotations__", {})) | set(dir(EnvironmentPlugin))
    return frozenset(name for name in names if not name.startswith("_"))


def check_plugin(plugin: EnvironmentPlugin) -> None:
    """Raises :class:`PluginConformanceError` listing what ``plugin`` gets wrong; returns None when
    nothing is."""
    problems = _unknown_names(plugin)
    for check in (_identity, _flows, _actions, _setting_options, _workers, _boards, _analysis_panels, _uploads,
                  _baselines, _replay, _hooks, *SITE_CHECKS):
        try:
            problems += check(plugin)
        except Exception as exc:  # noqa: BLE001 (a broken declaration must be reported, not crash the check)
            problems.append(f"{check.__name__.strip('_')} could not be checked: {type(exc).__name__}: {exc}")
    if problems:
        raise PluginConformanceError(plugin, problems)


def _unknown_names(plugin: EnvironmentPlugin) -> list[str]:
    # The platform reads only the interface's names: anything else on the class is a typo of one
    # (PASS_ACTION for PASS_ACTIONS) that silently keeps the default. Private helpers are the plug-in's own.
    known = interface_names()
    own: set[str] = set(vars(plugin))
    for cls in type(plugin).__mro__:
        if cls is EnvironmentPlugin:
            break
        own |= set(vars(cls)) | set(getattr(cls, "__annotations__", {}))
    unknown = sorted(name for name in own if not name.startswith("_") and name not in known)
    return [f"{name!r} is not an EnvironmentPlugin attribute{_did_you_mean(name, known)}" for name in unknown]


def _did_you_mean(name: str, known: Collection[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _is_str_tuple(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(item, str) and item for item in value)


def _is_pairs(value: Any) -> bool:
    return isinstance(value, tuple) and all(
        isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(part, str) and part for part in pair)
        for pair in value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _missing(plugin: EnvironmentPlugin, name: str) -> bool:
    return not hasattr(plugin, name)


def _identity(plugin: EnvironmentPlugin) -> list[str]:
    problems = [f"{name} is required" for name in ("slug", "title", "score_label") if _missing(plugin, name)]
    if not _missing(plugin, "slug") and not (isinstance(plugin.slug, str) and _SLUG.match(plugin.slug)):
        problems.append(f"slug must be a non-empty str of letters, digits, '-' and '_', not {plugin.slug!r}")
    for name in ("title", "score_label"):
        if not _missing(plugin, name) and not (isinstance(getattr(plugin, name), str) and getattr(plugin, name)):
            problems.append(f"{name} must be a non-empty str")
    for name in ("score_hint", "queue_work", "upload_note", "scenario_note_field"):
        if not isinstance(getattr(plugin, name), str):
            problems.append(f"{name} must be a str")
    for name in ("has_action_diagnostics", "stochastic", "text_only_runs"):
        if not isinstance(getattr(plugin, name), bool):
            problems.append(f"{name} must be a bool")
    return problems


def _flows(plugin: EnvironmentPlugin) -> list[str]:
    flows = plugin.flows
    if not (_is_str_tuple(flows) and flows and set(flows) <= set(FLOWS) and len(set(flows)) == len(flows)):
        return [f"flows must be a non-empty tuple of distinct flows among {', '.join(FLOWS)}, not {flows!r}"]
    if _missing(plugin, "default_settings"):
        return ["default_settings is required"]
    defaults = plugin.default_settings
    if not isinstance(defaults, Mapping):
        return ["default_settings must map each flow to its settings"]
    problems = []
    if set(defaults) != set(flows):
        problems.append(f"default_settings must name exactly the flows {', '.join(flows)}, not "
                        f"{', '.join(map(str, defaults)) or 'none'}")
    from evaluators.settings import EvaluationSettings

    # The defaults are read as submitters' values are: a wrong name, type or range fails here. This
    # also asks prompts(flow) for the prompt version.
    for flow in flows:
        if not isinstance(defaults.get(flow), Mapping):
            continue
        for subset in SUBSETS:
            try:
                EvaluationSettings.defaults(plugin, flow, subset=subset)
            except Exception as exc:  # noqa: BLE001 (reported with the flow it belongs to)
                problems.append(f"default_settings[{flow!r}] on the {subset} subset: {exc}")
    return problems


def _actions(plugin: EnvironmentPlugin) -> list[str]:
    problems = []
    if not _is_str_tuple(plugin.ACTIONS) or len(set(plugin.ACTIONS)) != len(plugin.ACTIONS):
        problems.append("ACTIONS must be a tuple of distinct non-empty str")
    passes = plugin.PASS_ACTIONS
    if not (isinstance(passes, frozenset) and all(isinstance(action, str) for action in passes)):
        problems.append("PASS_ACTIONS must be a frozenset of str")
    elif not passes <= set(plugin.ACTIONS):
        problems.append(f"PASS_ACTIONS must be among ACTIONS; not: {', '.join(sorted(passes - set(plugin.ACTIONS)))}")
    if not _is_str_tuple(plugin.breakdown_keys):
        problems.append("breakdown_keys must be a tuple of non-empty str")
    return problems + _breakdown_parts(plugin)


_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")


def _breakdown_parts(plugin: EnvironmentPlugin) -> list[str]:
    parts = plugin.breakdown_parts
    if not (isinstance(parts, tuple) and all(isinstance(part, BreakdownPart) for part in parts)):
        return [f"breakdown_parts must be a tuple of BreakdownPart, not {parts!r}"]
    problems = []
    # The pages label and colour each component from its part: a key without one would be unnamed.
    if plugin.breakdown_keys and tuple(part.key for part in parts) != tuple(plugin.breakdown_keys):
        problems.append(f"breakdown_parts must declare breakdown_keys in their order "
                        f"({', '.join(map(str, plugin.breakdown_keys))}), not "
                        f"{', '.join(str(part.key) for part in parts) or 'none'}")
    elif parts and not plugin.breakdown_keys:
        problems.append("breakdown_parts need breakdown_keys naming the same components")
    for part in parts:
        if not (isinstance(part.label, str) and part.label):
            problems.append(f"breakdown_parts[{part.key!r}].label must be a non-empty str")
        if not (isinstance(part.colour, str) and _COLOUR.match(part.colour)):
            problems.append(f"breakdown_parts[{part.key!r}].colour must be a '#rrggbb' colour, not {part.colour!r}")
    return problems


def _setting_options(plugin: EnvironmentPlugin) -> list[str]:
    from evaluators.settings import EvaluationSettings

    options = plugin.setting_options
    if not isinstance(options, Mapping):
        return ["setting_options must map names to SettingOption"]
    platform = {each.name for each in dataclasses.fields(EvaluationSettings)}
    problems = []
    for name, option in options.items():
        where = f"setting_options[{name!r}]"
        if not isinstance(option, SettingOption):
            problems.append(f"{where} must be a SettingOption")
            continue
        if name in platform:
            problems.append(f"{where} has the name of a platform setting")
        if option.kind not in (bool, int, float, str):
            problems.append(f"{where}.kind must be bool, int, float or str")
            continue
        default = option.default
        fits = (isinstance(default, bool) if option.kind is bool else
                _is_number(default) and (option.kind is float or isinstance(default, int))
                if option.kind in (int, float) else isinstance(default, str))
        if not fits:
            problems.append(f"{where}.default {default!r} is not a {option.kind.__name__}")
        if (option.low is None) != (option.high is None) or (option.low is not None and option.kind in (bool, str)):
            problems.append(f"{where} must give both low and high, and only for a number")
        elif option.low is not None and option.high is not None:
            if option.low > option.high:
                problems.append(f"{where}.low is above its high")
            elif fits and not option.low <= float(default) <= option.high:
                problems.append(f"{where}.default {default!r} is outside {option.low}..{option.high}")
        if option.choices and (option.kind is not str or default not in option.choices):
            problems.append(f"{where}.choices must be a text setting's values, its default among them")
    return problems


def _workers(plugin: EnvironmentPlugin) -> list[str]:
    problems = []
    if plugin.queue is not None and not (isinstance(plugin.queue, str) and plugin.queue.strip()):
        problems.append(f"queue must be None or a non-empty str, not {plugin.queue!r}")
    for name in ("attempt_memory_mb", "attempts_per_core"):
        value = getattr(plugin, name)
        if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            problems.append(f"{name} must be a positive int, not {value!r}")
    if plugin.scenario_check is not None and not (isinstance(plugin.scenario_check, str) and plugin.scenario_check):
        problems.append("scenario_check must be None or a non-empty str")
    pool = plugin.worker_pool
    if not (isinstance(pool, WorkerPool) and isinstance(pool.network_namespaces, bool)):
        problems.append(f"worker_pool must be a WorkerPool (its network_namespaces a bool), not {pool!r}")
    return problems


def _boards(plugin: EnvironmentPlugin) -> list[str]:
    problems = []
    if not (isinstance(plugin.position, int) and not isinstance(plugin.position, bool)):
        problems.append("position must be an int")
    if not _is_pairs(plugin.tag_groups):
        problems.append(f"tag_groups must be a tuple of (tag name, heading) str pairs, not {plugin.tag_groups!r}")
    if plugin.fail_threshold is not None and not _is_number(plugin.fail_threshold):
        problems.append("fail_threshold must be None or a number")
    return problems


#: The tiny input an analysis panel's ``aggregate`` is tried on: a scenario with no tags and one
#: with tags of several kinds, as imports store them.
_SAMPLE_MEANS: ScenarioMeans = (({}, 0.0), ({"label": "A1", "kind": "mixed", "count": 2, "key": "x"}, 1.5))


def _analysis_panels(plugin: EnvironmentPlugin) -> list[str]:
    import json

    panels = plugin.analysis_panels
    if not (isinstance(panels, tuple) and all(isinstance(panel, AnalysisPanel) for panel in panels)):
        return [f"analysis_panels must be a tuple of AnalysisPanel, not {panels!r}"]
    problems = []
    keys = [panel.key for panel in panels]
    if len(set(keys)) != len(keys):
        problems.append(f"analysis_panels must have distinct keys, not {', '.join(map(str, keys))}")
    for panel in panels:
        where = f"analysis_panels[{panel.key!r}]"
        if not (isinstance(panel.key, str) and _SLUG.match(panel.key)):
            problems.append(f"{where}.key must be a non-empty str of letters, digits, '-' and '_'")
        for name in ("title", "template", "script"):
            if not (isinstance(getattr(panel, name), str) and getattr(panel, name)):
                problems.append(f"{where}.{name} must be a non-empty str")
        if panel.plotly not in PLOTLY_BUNDLES:
            problems.append(f"{where}.plotly must be one of {', '.join(PLOTLY_BUNDLES)}, not {panel.plotly!r}")
        if not isinstance(panel.chart, Mapping):
            problems.append(f"{where}.chart must be a mapping")
        if not callable(panel.aggregate):
            problems.append(f"{where}.aggregate must be callable")
            continue
        # Its answers are stored as JSON and sent to the page's script beside the chart constants.
        for sample in ((), _SAMPLE_MEANS):
            call = f"{where}.aggregate({list(sample)!r})"
            try:
                value = panel.aggregate(sample)
                json.dumps([value, dict(panel.chart) if isinstance(panel.chart, Mapping) else None], allow_nan=False)
            except Exception as exc:  # noqa: BLE001 (the hook's failure is the finding)
                problems.append(f"{call} failed: {type(exc).__name__}: {exc}")
                continue
            if value is not None and not isinstance(value, dict):
                problems.append(f"{call} returned {type(value).__name__}, not a dict or None")
    return problems


def _uploads(plugin: EnvironmentPlugin) -> list[str]:
    problems = []
    if not _is_pairs(plugin.code_files):
        problems.append(f"code_files must be a tuple of (upload key, file name) str pairs, not {plugin.code_files!r}")
    if not _is_pairs(plugin.upload_code_fences):
        problems.append("upload_code_fences must be a tuple of (upload key, fence language) str pairs, not "
                        f"{plugin.upload_code_fences!r}")
    elif _is_pairs(plugin.code_files):
        keys = {key for key, _ in plugin.code_files}
        if plugin.code_files and not plugin.upload_code_fences:
            problems.append("code_files need upload_code_fences to be replayed as a reply")
        unknown = [key for key, _ in plugin.upload_code_fences if key not in keys]
        if unknown:
            problems.append(f"upload_code_fences name keys that are not in code_files: {', '.join(unknown)}")
    if plugin.code_files and _is_pairs(plugin.code_files):
        problems += _code_format(plugin)
    if not (_is_number(plugin.result_scale) and plugin.result_scale > 0):
        problems.append("result_scale must be a positive number")
    bounds = plugin.result_range
    if bounds is not None and not (isinstance(bounds, tuple) and len(bounds) == 2
                                   and all(_is_number(bound) for bound in bounds) and bounds[0] < bounds[1]):
        problems.append(f"result_range must be None or a (low, high) pair of numbers, not {bounds!r}")
    if not (_is_number(plugin.self_report_tolerance) and plugin.self_report_tolerance >= 0):
        problems.append("self_report_tolerance must be a number of at least 0")
    return problems


def _code_format(plugin: EnvironmentPlugin) -> list[str]:
    import json

    # The schema fragment is read by the uploads as JSON Schema, and every code file it admits must
    # be replayable: a tiny run of each file is played back through code_replies in every flow.
    try:
        schema = plugin.upload_code_schema()
        json.dumps(schema, allow_nan=False)
    except Exception as exc:  # noqa: BLE001 (the hook's failure is the finding)
        return [f"upload_code_schema() failed: {type(exc).__name__}: {exc}"]
    if not (isinstance(schema, dict) and schema.get("type") == "object"):
        return ["upload_code_schema() must return a JSON Schema (a dict) of type object"]
    problems = []
    sample = {key: "x" for key, _ in plugin.code_files}
    for flow in plugin.flows if _is_str_tuple(plugin.flows) else ():
        try:
            replies = plugin.code_replies(flow, sample)
        except Exception as exc:  # noqa: BLE001 (the hook's failure is the finding)
            problems.append(f"code_replies({flow!r}, ...) raised {type(exc).__name__}: {exc}")
            continue
        if not (isinstance(replies, list) and all(isinstance(reply, str) for reply in replies)):
            problems.append(f"code_replies({flow!r}, ...) must return a list of str")
    return problems


def _baselines(plugin: EnvironmentPlugin) -> list[str]:
    from evaluators.baselines.agents import AGENT_NAMES

    problems = []
    agents = plugin.baseline_agents
    if not (_is_str_tuple(agents) and set(agents) <= set(AGENT_NAMES)):
        return [f"baseline_agents must be a tuple among {', '.join(AGENT_NAMES)}, not {agents!r}"]
    if not (_is_str_tuple(plugin.text_only_baselines) and set(plugin.text_only_baselines) <= set(agents)):
        problems.append("text_only_baselines must be a tuple among baseline_agents")
    notes = plugin.baseline_notes
    if not (isinstance(notes, Mapping) and set(notes) <= set(agents)
            and all(isinstance(note, str) for note in notes.values())):
        problems.append("baseline_notes must map agents of baseline_agents to str")
    return problems


def _replay(plugin: EnvironmentPlugin) -> list[str]:
    problems = []
    if plugin.replay_template is not None and not (isinstance(plugin.replay_template, str) and plugin.replay_template):
        problems.append("replay_template must be None or a non-empty str")
    for name in ("replay_scripts", "replay_styles"):
        if not _is_str_tuple(getattr(plugin, name)):
            problems.append(f"{name} must be a tuple of non-empty str")
    return problems


def _hooks(plugin: EnvironmentPlugin) -> list[str]:
    problems = [f"{name} must be callable" for name, value in inspect.getmembers(EnvironmentPlugin)
                if not name.startswith("_") and callable(value) and not isinstance(value, type)
                and not callable(getattr(plugin, name, None))]
    if problems or not _is_str_tuple(plugin.flows):
        return problems

    def answer(call: str, run: Callable[[], Any], expected: type | tuple[type, ...]) -> Any:
        try:
            value = run()
        except Exception as exc:  # noqa: BLE001 (the hook's failure is the finding)
            problems.append(f"{call} raised {type(exc).__name__}: {exc}")
            return None
        if not isinstance(value, expected):
            names = " or ".join(kind.__name__ for kind in (expected if isinstance(expected, tuple) else (expected,)))
            problems.append(f"{call} returned {type(value).__name__}, not {names}")
            return None
        return value

    answer("metric_card", lambda: plugin.metric_card, Mapping)
    answer("scenario_note([])", lambda: plugin.scenario_note([]), str)
    answer("replay_panel({}, ...)", lambda: plugin.replay_panel({}, lambda name: None), (ReplayPanel, type(None)))
    problems += _floor_and_ceiling(plugin)
    for flow in plugin.flows:
        answer(f"prompts({flow!r})", partial(plugin.prompts, flow), PromptSet)
        answer(f"parse({flow!r}, '')", partial(plugin.parse, flow, ""), ParseResult)
        runner = answer(f"flow_runner({flow!r})", partial(plugin.flow_runner, flow), object)
        if runner is not None and not callable(runner):
            problems.append(f"flow_runner({flow!r}) returned something that is not callable")
        if plugin.ACTIONS and _is_str_tuple(plugin.ACTIONS):
            problems += _actions_round_trip(plugin, flow)
    return problems


def _floor_and_ceiling(plugin: EnvironmentPlugin) -> list[str]:
    # The summary across environments divides by ceiling − floor: each is a number or None, and a
    # scenario's ceiling lies above its floor. A scenario with no data is the tiny input.
    from evaluators.declarations import ScenarioSpec

    scenario = ScenarioSpec(env=plugin.slug if isinstance(plugin.slug, str) else "", key="conformance", data={})
    values: dict[str, float | None] = {}
    problems = []
    for name in ("idle_score", "best_score"):
        try:
            value = getattr(plugin, name)(scenario)
        except Exception as exc:  # noqa: BLE001 (the hook's failure is the finding)
            problems.append(f"{name}(a scenario with no data) raised {type(exc).__name__}: {exc}")
            continue
        if value is not None and not _is_number(value):
            problems.append(f"{name}(a scenario with no data) returned {type(value).__name__}, not a number or None")
            continue
        values[name] = value
    floor, ceiling = values.get("idle_score"), values.get("best_score")
    if floor is not None and ceiling is not None and not ceiling > floor:
        problems.append(f"best_score ({ceiling}) must be above idle_score ({floor}) on the same scenario")
    return problems + _summary_references(plugin)


def _summary_references(plugin: EnvironmentPlugin) -> list[str]:
    # A published floor and ceiling belong to a board the environment has, and say where they come from.
    from evaluators.declarations import SummaryReference

    problems = []
    references = getattr(plugin, "summary_references", {})
    for key, reference in (references.items() if isinstance(references, Mapping) else ()):
        where = f"summary_references[{key!r}]"
        if not (isinstance(key, tuple) and len(key) == 2 and key[0] in plugin.flows and key[1] in SUBSETS):
            problems.append(f"{where}: not one of its boards, (flow, 'mini' or 'full')")
        elif not isinstance(reference, SummaryReference):
            problems.append(f"{where}: not a SummaryReference")
        elif not all(_is_number(end.value) and end.source.strip()
                     for end in (reference.ceiling, reference.floor) if end is not None):
            problems.append(f"{where}: every end needs a number and its source")
        elif reference.floor is not None and not reference.ceiling.value > reference.floor.value:
            problems.append(f"{where}: the ceiling ({reference.ceiling.value}) must be above the floor "
                            f"({reference.floor.value})")
    return problems


def _actions_round_trip(plugin: EnvironmentPlugin, flow: str) -> list[str]:
    # Uploaded action names are replayed as action_replies' text: the parser must read them back.
    actions = list(plugin.ACTIONS[:2])
    try:
        replies = plugin.action_replies(flow, actions)
        parsed = [action for reply in replies for action in plugin.parse(flow, reply).actions]
    except Exception as exc:  # noqa: BLE001 (the hook's failure is the finding)
        return [f"action_replies({flow!r}, {actions!r}) could not be parsed back: {type(exc).__name__}: {exc}"]
    if parsed != actions:
        return [f"parse({flow!r}) reads {parsed!r} from action_replies({flow!r}, {actions!r}), not the actions"]
    return []
