"""GridWalk passes the check every plug-in passes when it is registered."""
from __future__ import annotations

from typing import Any

from evaluators.base import get_plugin
from evaluators.conformance import check_plugin
from evaluators.gridwalk import plugin


def test_gridwalk_conforms_to_the_plugin_interface() -> None:
    check_plugin(plugin)


def test_gridwalk_registers_beside_the_configured_environments(settings: Any) -> None:
    settings.MAGEBENCH_ENVIRONMENTS = [*settings.MAGEBENCH_ENVIRONMENTS, "evaluators.gridwalk"]
    assert get_plugin("gridwalk") is plugin
