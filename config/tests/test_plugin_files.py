"""An environment's replay template and scripts live in its own folder and are found there."""
from __future__ import annotations

import inspect
from pathlib import Path

from django.contrib.staticfiles import finders
from django.template import Engine

from evaluators.base import all_plugins


def test_every_replay_template_and_script_is_found_in_its_environments_folder() -> None:
    for plugin in all_plugins():
        folder = Path(inspect.getfile(type(plugin))).parent
        if plugin.replay_template:
            origin = Path(Engine.get_default().get_template(plugin.replay_template).origin.name)
            assert origin.is_relative_to(folder / "templates"), origin
        for script in plugin.replay_scripts:
            assert finders.find(script), script


def test_an_environment_left_out_of_the_setting_has_no_files_found(settings) -> None:
    configured = list(settings.MAGEBENCH_ENVIRONMENTS)
    settings.MAGEBENCH_ENVIRONMENTS = ["evaluators.sokoban"]
    _forget_finders()
    try:
        assert not finders.find("js/replay_football.js")
    finally:
        settings.MAGEBENCH_ENVIRONMENTS = configured
        _forget_finders()


def _forget_finders() -> None:
    # Finders are built once and cached: one built under other settings would answer instead.
    finders.get_finder.cache_clear()  # type: ignore[attr-defined]
