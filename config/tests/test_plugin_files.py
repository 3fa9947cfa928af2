"""An environment's replay and analysis templates, scripts and styles live in its own folder and are found there."""
from __future__ import annotations

import inspect
from pathlib import Path

from django.contrib.staticfiles import finders
from django.template import Engine

from evaluators.base import all_plugins


def test_every_replay_and_analysis_template_script_and_style_is_found_in_its_environments_folder() -> None:
    for plugin in all_plugins():
        folder = Path(inspect.getfile(type(plugin))).parent
        templates = [plugin.replay_template] if plugin.replay_template else []
        templates += [panel.template for panel in plugin.analysis_panels]
        for template in templates:
            origin = Path(Engine.get_default().get_template(template).origin.name)
            assert origin.is_relative_to(folder / "templates"), origin
        own = [*plugin.replay_styles, *(panel.script for panel in plugin.analysis_panels)]
        for path in [*plugin.replay_scripts, *own]:
            assert finders.find(path), path
        for path in own:
            assert Path(str(finders.find(path))).is_relative_to(folder / "static"), path


def test_an_environment_left_out_of_the_setting_has_no_files_found(settings) -> None:
    configured = list(settings.MAGEBENCH_ENVIRONMENTS)
    settings.MAGEBENCH_ENVIRONMENTS = ["evaluators.sokoban"]
    _forget_finders()
    try:
        assert not finders.find("js/replay_football.js") and not finders.find("css/replay_football.css")
    finally:
        settings.MAGEBENCH_ENVIRONMENTS = configured
        _forget_finders()


def _forget_finders() -> None:
    # Finders are built once and cached: one built under other settings would answer instead.
    finders.get_finder.cache_clear()  # type: ignore[attr-defined]
