"""The registry of loaded plug-ins: what :func:`get_plugin` and :func:`all_plugins` answer.

It holds exactly the plug-ins :func:`evaluators.base.load_plugins` last gave it, and imports nothing
that reads it, so the settings and the request helpers can ask it without importing the module that
loads and checks plug-ins. Import these names from ``evaluators.base`` as before.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from evaluators.declarations import FLOWS

if TYPE_CHECKING:
    from evaluators.interface import EnvironmentPlugin


class PluginConfigurationError(ValueError):
    """A module named as an environment that cannot be imported or holds no plug-in."""


#: The modules the MAGEBENCH_ENVIRONMENTS setting loads unless told otherwise: the benchmark's own.
DEFAULT_ENVIRONMENTS = ("evaluators.football", "evaluators.sokoban", "evaluators.webui")

_REGISTRY: dict[str, EnvironmentPlugin] = {}
_loaded_once = False


def install(plugins: Iterable[EnvironmentPlugin]) -> None:
    """Make ``plugins`` (checked, with distinct slugs) the registry's, replacing what it held."""
    global _loaded_once
    _REGISTRY.clear()
    _REGISTRY.update((plugin.slug, plugin) for plugin in plugins)
    _loaded_once = True


def _loaded() -> dict[str, EnvironmentPlugin]:
    if not _loaded_once:
        raise PluginConfigurationError("no environments loaded: call evaluators.base.load_plugins() with their "
                                       "modules (the site loads the MAGEBENCH_ENVIRONMENTS setting)")
    return _REGISTRY


def get_plugin(slug: str) -> EnvironmentPlugin:
    registry = _loaded()
    try:
        return registry[slug]
    except KeyError:
        raise KeyError(f"unknown environment {slug!r}; known: {sorted(registry)}") from None


def all_plugins() -> list[EnvironmentPlugin]:
    """Every environment, by slug: nothing may depend on import or setting order (boards go by
    ``position``)."""
    registry = _loaded()
    return [registry[slug] for slug in sorted(registry)]


def environment_slugs() -> list[str]:
    """The slugs of every loaded environment, sorted: the API's choices."""
    return sorted(_loaded())


def environment_flows() -> list[str]:
    """The flows at least one loaded environment plays, in ``FLOWS`` order: the flows a submission
    may name (a plug-in plays only the platform's flows; the conformance check refuses others)."""
    declared = {flow for plugin in _loaded().values() for flow in plugin.flows}
    return [flow for flow in FLOWS if flow in declared]
