"""The environment plug-in interface and its registry.

An environment is one package (``evaluators/<env>/`` for the built-in ones) whose module-level
``plugin`` is an :class:`EnvironmentPlugin`. Everything the platform knows about an environment is
declared on its plug-in: flows, queue, board order, analysis tags and panels, upload formats and scales,
replay panel, its own settings and which of them make a labelled variant. The rest of the code
asks the registry (:func:`get_plugin`, :func:`all_plugins`) and never names an environment.

The registry holds exactly the plug-ins it was given by :func:`load_plugins`; the site loads the
``MAGEBENCH_ENVIRONMENTS`` setting at start-up (``catalogue/apps.py``), and plain-Python callers
pass their own list. Everything here is plain Python (no Django), so an episode can be run
and scored from a worker, a management command or a test alike.

This module is the interface's one entry point and sits above its parts: the data types
(``evaluators.declarations``), the plug-in class (``evaluators.interface``) and the registry
(``evaluators.registry``). Only :func:`load_plugins` lives here, as it runs the conformance check,
which reads those parts; no module of the interface imports this one back.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from evaluators.contract.flows import FlowTables, ReplyParser
from evaluators.declarations import (
    FLOW_GLOBAL,
    FLOW_ONLINE,
    FLOWS,
    PLOTLY_BUNDLES,
    PROMPTS_OFFICIAL,
    PROMPTS_PLATFORM,
    SUBSET_FULL,
    SUBSET_MINI,
    SUBSETS,
    AnalysisPanel,
    BaselineOptions,
    BreakdownPart,
    DemoBaselines,
    Episode,
    ImportedScenario,
    Observation,
    OperatorSetting,
    OperatorSettings,
    OptionValue,
    PaperRows,
    ParseResult,
    PromptSet,
    ReferenceScore,
    ReplayPanel,
    ResourceError,
    ScenarioCheck,
    ScenarioMeans,
    ScenarioSpec,
    SettingOption,
    StepResult,
    StoredScenario,
    SummaryReference,
    WorkerPool,
)
from evaluators.interface import (
    EnvironmentPlugin,
    default_environments,
    plugin_from_module,
)
from evaluators.registry import (
    PluginConfigurationError,
    all_plugins,
    environment_flows,
    environment_slugs,
    get_plugin,
)
from evaluators.registry import install as _install

__all__ = [
    "AnalysisPanel",
    "BaselineOptions",
    "BreakdownPart",
    "DemoBaselines",
    "EnvironmentPlugin",
    "Episode",
    "FLOWS",
    "FLOW_GLOBAL",
    "FLOW_ONLINE",
    "FlowTables",
    "ImportedScenario",
    "Observation",
    "OperatorSetting",
    "OperatorSettings",
    "OptionValue",
    "PLOTLY_BUNDLES",
    "PaperRows",
    "PROMPTS_OFFICIAL",
    "PROMPTS_PLATFORM",
    "ParseResult",
    "PluginConfigurationError",
    "PromptSet",
    "ReferenceScore",
    "ReplayPanel",
    "ReplyParser",
    "ResourceError",
    "ScenarioCheck",
    "ScenarioMeans",
    "ScenarioSpec",
    "SettingOption",
    "SUBSETS",
    "SUBSET_FULL",
    "SUBSET_MINI",
    "StepResult",
    "StoredScenario",
    "SummaryReference",
    "WorkerPool",
    "all_plugins",
    "apply_operator_settings",
    "declared_operator_settings",
    "declared_queues",
    "default_environments",
    "environment_flows",
    "environment_slugs",
    "get_plugin",
    "load_plugins",
    "plugin_from_module",
]


def declared_queues(paths: Iterable[str]) -> list[str]:
    """The kinds of work (queue names) the plug-ins of these modules declare, sorted, each once.

    The Django settings call it to build the Celery queue list, before any app is loaded: it only
    imports the modules and reads a class attribute, which is why a plug-in module must import
    without Django and start nothing when imported.
    """
    return sorted({plugin.queue for plugin in map(plugin_from_module, paths) if plugin.queue})


def declared_operator_settings(paths: Iterable[str]) -> dict[str, tuple[OperatorSetting, ...]]:
    """The operator settings the plug-ins of these modules declare, by slug: read by the Django settings
    before any app is loaded, as :func:`declared_queues` is."""
    plugins = [plugin_from_module(path) for path in paths]
    return {plugin.slug: plugin.operator_settings.settings for plugin in plugins if plugin.operator_settings.settings}


def apply_operator_settings(paths: Iterable[str], values: Mapping[str, Mapping[str, OptionValue]]) -> None:
    """Hand each plug-in of these modules its operator settings' values (``values``, by slug and name;
    a setting not there keeps its declared default), once, as a process starts."""
    for plugin in map(plugin_from_module, paths):
        declared = plugin.operator_settings
        if declared.apply is not None:
            given = values.get(plugin.slug, {})
            declared.apply({setting.name: given.get(setting.name, setting.default) for setting in declared.settings})


def load_plugins(paths: Iterable[str]) -> list[EnvironmentPlugin]:
    """Make the plug-ins of these modules the registry's, replacing what it held.

    Each plug-in is checked first (:func:`evaluators.conformance.check_plugin`): one that breaks the
    interface's contract is refused with its problems listed, and the registry keeps what it held.
    """
    from evaluators.conformance import check_plugin

    plugins = [plugin_from_module(path) for path in paths]
    for plugin in plugins:
        check_plugin(plugin)
    slugs = [plugin.slug for plugin in plugins]
    duplicates = sorted({slug for slug in slugs if slugs.count(slug) > 1})
    if duplicates:
        raise PluginConfigurationError(f"environment(s) {', '.join(duplicates)} named more than once")
    _install(plugins)
    return all_plugins()
