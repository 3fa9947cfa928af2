"""The registry of loaded plug-ins: what :func:`get_plugin` and :func:`all_plugins` answer.

It holds exactly the plug-ins :func:`evaluators.base.load_plugins` last gave it, and imports nothing
that reads it, so the settings and the request helpers can ask it without importing the module that
loads and checks plug-ins. Import these names from ``evaluators.base`` as before.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from evaluators.declarations import FLOWS

if TYPE_CHECKING:
    from evaluators.interface import EnvironmentPlugin


class PluginConfigurationError(ValueError):
    """A module named as an environment that cannot be imported or holds no plug-in."""


#: Where the built-in environments are: each a package of this folder.
BUILT_IN_FOLDER = Path(__file__).resolve().parent


def _declares_plugin(init: Path) -> bool:
    """Whether a package's ``__init__`` binds ``plugin`` at its top level (read, not imported, so that
    the platform's own packages here are never imported to find out)."""
    try:
        tree = ast.parse(init.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "plugin" for t in node.targets):
            return True
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "plugin":
            return True
        if isinstance(node, ast.ImportFrom) and any((alias.asname or alias.name) == "plugin" for alias in node.names):
            return True
    return False


def built_in_environments(folder: Path = BUILT_IN_FOLDER, package: str = "evaluators") -> list[str]:
    """The modules of the environments in ``folder``: every package whose ``__init__`` defines
    ``plugin``, by name. Adding a folder adds the environment; removing it removes it."""
    return [f"{package}.{init.parent.name}" for init in sorted(folder.glob("*/__init__.py"))
            if _declares_plugin(init)]


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
