"""An environment's operator settings: declared by its plug-in, read by the Django settings from the
variables of their names, and handed back to the plug-in as each process starts."""
from __future__ import annotations

import sys
import types
from typing import Any, ClassVar

import pytest
from django.conf import settings as site_settings
from django.core.exceptions import ImproperlyConfigured

from config.env import operator_setting
from evaluators.base import OperatorSetting, OperatorSettings, OptionValue, apply_operator_settings
from evaluators.tests.plugin_fixture import TinyPlugin

LAPS = OperatorSetting("MAGEBENCH_TINY_LAPS", int, 3, production_default=5)
STRICT = OperatorSetting("MAGEBENCH_TINY_STRICT", bool, False, production_default=True)


def test_a_setting_is_read_from_its_variable_as_its_kind_else_its_default_or_its_production_default(
        monkeypatch) -> None:
    monkeypatch.delenv(LAPS.name, raising=False)
    monkeypatch.delenv(STRICT.name, raising=False)
    assert (operator_setting(LAPS, production=False), operator_setting(LAPS, production=True)) == (3, 5)
    assert (operator_setting(STRICT, production=False), operator_setting(STRICT, production=True)) == (False, True)
    monkeypatch.setenv(LAPS.name, "7")
    monkeypatch.setenv(STRICT.name, "false")
    assert (operator_setting(LAPS, production=True), operator_setting(STRICT, production=True)) == (7, False)
    monkeypatch.setenv(LAPS.name, "seven")
    with pytest.raises(ImproperlyConfigured, match="MAGEBENCH_TINY_LAPS must be an integer, not 'seven'"):
        operator_setting(LAPS, production=False)


def test_each_plugin_is_handed_its_own_values_and_the_defaults_of_those_not_given(monkeypatch) -> None:
    received: list[dict[str, OptionValue]] = []

    class Limited(TinyPlugin):
        operator_settings: ClassVar[OperatorSettings] = OperatorSettings(
            settings=(LAPS, STRICT), apply=lambda values: received.append(dict(values)))

    module: Any = types.ModuleType("evaluators.tests.limited_env")
    module.plugin = Limited()
    monkeypatch.setitem(sys.modules, module.__name__, module)
    apply_operator_settings([module.__name__, "evaluators.sokoban"], {"tiny": {LAPS.name: 4}, "other": {"X": 1}})
    assert received == [{"MAGEBENCH_TINY_LAPS": 4, "MAGEBENCH_TINY_STRICT": False}]


def test_the_site_reads_each_configured_environments_declared_settings_under_their_names() -> None:
    # The tests run outside production, with none of these variables set: every default.
    assert site_settings.MAGEBENCH_OPERATOR_SETTINGS == {"webui": {
        "MAGEBENCH_WEBUI_PAGE_MEMORY_MB": 1024, "MAGEBENCH_WEBUI_PAGE_CPU_SECONDS": 30.0,
        "MAGEBENCH_WEBUI_REQUIRE_NETWORK_NAMESPACE": False}}


def test_the_readme_lists_every_operator_setting_the_built_in_environments_declare() -> None:
    from pathlib import Path

    from evaluators.base import plugin_from_module
    from evaluators.registry import built_in_environments

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| `")]
    declared = [setting.name for path in built_in_environments()
                for setting in plugin_from_module(path).operator_settings.settings]
    assert declared  # the WebUI page limits at least
    # A row names a setting whole, or its tail after a shared prefix ("`X_MEMORY_MB` / `_CPU_SECONDS`").
    missing = [name for name in declared if not any(f"`{name}`" in row or _tail_in(name, row) for row in rows)]
    assert missing == []


def _tail_in(name: str, row: str) -> bool:
    return any(f"`{name[:cut]}" in row and f"`{name[cut:]}`" in row for cut in range(1, len(name)) if name[cut] == "_")
