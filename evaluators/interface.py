"""The environment plug-in interface: :class:`EnvironmentPlugin` and how a module's plug-in is found.

The class holds what every plug-in writes: its names, its default settings and three abstract
methods. Everything else a plug-in may declare is grouped by the part of the platform that reads
it, one class per group in :mod:`evaluators.contract`, which the class inherits; each has defaults
that suit a light, deterministic, action-based environment. Its data types are
:mod:`evaluators.declarations`'. Import both from ``evaluators.base`` as before; the modules the
interface reaches (the shared flows) and those that check or read plug-ins (the conformance check,
the settings) import them from here, so that none of them imports back the module that loads
plug-ins.
"""
from __future__ import annotations

import abc
import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from evaluators.contract.baselines import BaselineDeclarations
from evaluators.contract.flows import FlowDeclarations
from evaluators.contract.pages import PageDeclarations
from evaluators.contract.release import ReleaseDeclarations
from evaluators.contract.scenarios import ScenarioDeclarations
from evaluators.contract.scoring import ScoringDeclarations
from evaluators.contract.uploads import UploadDeclarations
from evaluators.contract.workers import WorkerDeclarations
from evaluators.declarations import Episode, ParseResult, PromptSet, ScenarioSpec
from evaluators.registry import BUILT_IN_FOLDER, PluginConfigurationError, built_in_environments

if TYPE_CHECKING:
    # evaluators.settings reads the plug-ins' declarations, so this module names it for typing only.
    from evaluators.settings import DefaultValue, EvaluationSettings


class EnvironmentPlugin(FlowDeclarations, ScoringDeclarations, ScenarioDeclarations, WorkerDeclarations,
                        PageDeclarations, UploadDeclarations, BaselineDeclarations, ReleaseDeclarations, abc.ABC):
    """One environment of the benchmark: the contract a plug-in meets.

    Required: the four names below and the three abstract methods. The rest is optional and grouped by
    who reads it (:mod:`evaluators.contract`): flows, scoring, scenarios, workers, pages, uploads,
    baselines, release.
    """

    #: The environment's URL name (boards, API, stored rows).
    slug: ClassVar[str]
    #: Its heading on the site.
    title: ClassVar[str]
    #: The name of its score.
    score_label: ClassVar[str]
    #: Default settings per flow (the paper's standard setting), each a value or a value per subset
    #: ({"mini": 10, "full": 3}); ``evaluators.settings.EvaluationSettings`` checks and applies them.
    default_settings: ClassVar[Mapping[str, Mapping[str, DefaultValue]]]

    @abc.abstractmethod
    def new_episode(self, scenario: ScenarioSpec, settings: EvaluationSettings) -> Episode:
        """A fresh episode of ``scenario`` under ``settings``: one attempt's state, reset and stepped by the flow."""

    @abc.abstractmethod
    def prompts(self, flow: str) -> PromptSet:
        """The texts ``flow`` sends, in the platform's wording, versioned so a submission records them."""

    @abc.abstractmethod
    def parse(self, flow: str, reply: str) -> ParseResult:
        """The actions in one model reply of ``flow``, with an error when none is usable."""


def plugin_from_module(path: str) -> EnvironmentPlugin:
    """The plug-in a module declares as its ``plugin``."""
    try:
        module = importlib.import_module(path)
    except ImportError as exc:
        raise PluginConfigurationError(f"environment module {path!r} cannot be imported: {exc}") from exc
    plugin = getattr(module, "plugin", None)
    if not isinstance(plugin, EnvironmentPlugin):
        raise PluginConfigurationError(f"environment module {path!r} has no 'plugin' (an EnvironmentPlugin instance)")
    return plugin


def default_environments(folder: Path = BUILT_IN_FOLDER, package: str = "evaluators") -> list[str]:
    """The modules the MAGEBENCH_ENVIRONMENTS setting loads unless told otherwise: the built-in
    environments (:func:`evaluators.registry.built_in_environments`) whose plug-in is not ``opt_in``
    (the examples, which the setting names to load)."""
    return [path for path in built_in_environments(folder, package) if not plugin_from_module(path).opt_in]
