"""The conformance check every plug-in passes on registration: unknown names and bad declarations are refused."""
from __future__ import annotations

import sys
import types
from typing import Any, ClassVar

import pytest
from django.core.exceptions import ImproperlyConfigured

from catalogue.apps import load_environments
from evaluators.base import (
    FLOW_ONLINE,
    AnalysisPanel,
    ParseResult,
    ReferenceScore,
    SettingOption,
    SummaryReference,
    default_environments,
    environment_slugs,
    load_plugins,
    plugin_from_module,
)
from evaluators.conformance import PluginConformanceError, check_plugin, interface_names
from evaluators.tests.plugin_fixture import TinyPlugin


def _problems(plugin: Any) -> list[str]:
    with pytest.raises(PluginConformanceError) as refused:
        check_plugin(plugin)
    return refused.value.problems


@pytest.mark.parametrize("module", [*default_environments(), "evaluators.tests.plugin_fixture"])
def test_every_built_in_plugin_conforms(module: str) -> None:
    check_plugin(plugin_from_module(module))


def test_a_misspelt_attribute_is_refused_with_the_name_it_was_meant_to_be() -> None:
    class Misspelt(TinyPlugin):
        PASS_ACTION: ClassVar[frozenset[str]] = frozenset({"pass"})

    assert _problems(Misspelt()) == [
        "'PASS_ACTION' is not an EnvironmentPlugin attribute (did you mean 'PASS_ACTIONS'?)"]


def test_a_public_helper_of_the_plugins_own_is_refused_and_a_private_one_is_kept() -> None:
    class WithHelpers(TinyPlugin):
        _cache: ClassVar[dict[str, str]] = {}

        def level_size(self) -> int:
            return 3

    assert _problems(WithHelpers()) == ["'level_size' is not an EnvironmentPlugin attribute"]
    assert {"PASS_ACTIONS", "upload_code_fences", "slug", "default_settings", "parse"} <= interface_names()


def test_an_unknown_flow_and_a_blank_queue_are_refused_by_name() -> None:
    class BadFlows(TinyPlugin):
        flows: ClassVar[tuple[str, ...]] = ("online", "offline")
        queue: ClassVar[str | None] = " "

    problems = _problems(BadFlows())
    assert ("flows must be a non-empty tuple of distinct flows among global, online, not ('online', 'offline')"
            in problems)
    assert "queue must be None or a non-empty str, not ' '" in problems


def test_declarations_of_the_wrong_shape_are_each_listed() -> None:
    class Shapes(TinyPlugin):
        tag_groups: ClassVar[Any] = (("size",),)
        breakdown_keys: ClassVar[Any] = ["parse"]
        code_files: ClassVar[tuple[tuple[str, str], ...]] = (("html", "index.html"),)
        upload_code_fences: ClassVar[tuple[tuple[str, str], ...]] = (("html", "html"), ("css", "css"))
        baseline_agents: ClassVar[tuple[str, ...]] = ("idle", "genius")
        setting_options: ClassVar[Any] = {
            "speed": SettingOption(kind=int, default=20, low=1, high=10),
            "style": SettingOption(kind=str, default="plain", choices=("bold", "thin")),
            "loud": SettingOption(kind=bool, default=False, choices=("yes",)),
        }

    problems = _problems(Shapes())
    assert "tag_groups must be a tuple of (tag name, heading) str pairs, not (('size',),)" in problems
    assert "breakdown_keys must be a tuple of non-empty str" in problems
    assert "upload_code_fences name keys that are not in code_files: css" in problems
    assert any(problem.startswith("baseline_agents must be a tuple among idle, random") for problem in problems)
    assert "setting_options['speed'].default 20 is outside 1..10" in problems
    for name in ("style", "loud"):
        assert f"setting_options[{name!r}].choices must be a text setting's values, its default among them" in problems


def test_default_settings_are_read_as_a_submitters_would_be() -> None:
    class Unreadable(TinyPlugin):
        default_settings: ClassVar[Any] = {FLOW_ONLINE: {"resolution": 64, "max_image": 1, "max_tokens": 100,
                                                         "max_loop": "many"}}

    assert _problems(Unreadable()) == [
        f"default_settings['online'] on the {subset} subset: max_loop must be a whole number, not 'many'"
        for subset in ("mini", "full")]


def test_a_hook_that_raises_on_a_tiny_input_is_refused() -> None:
    class Fragile(TinyPlugin):
        def parse(self, flow: str, reply: str) -> ParseResult:
            return ParseResult(actions=[reply.split()[0]])

    assert _problems(Fragile()) == ["parse('online', '') raised IndexError: list index out of range"]


def test_a_ceiling_at_or_below_the_floor_or_a_floor_that_is_not_a_number_is_refused() -> None:
    class Upside(TinyPlugin):
        def idle_score(self, scenario: Any) -> float | None:
            return 50.0

        def best_score(self, scenario: Any) -> float | None:
            return 50.0

    class Worded(TinyPlugin):
        def best_score(self, scenario: Any) -> Any:
            return "100"

    assert _problems(Upside()) == ["best_score (50.0) must be above idle_score (50.0) on the same scenario"]
    assert _problems(Worded()) == ["best_score(a scenario with no data) returned str, not a number or None"]


def test_a_published_floor_and_ceiling_must_belong_to_a_board_and_have_the_ceiling_above_the_floor() -> None:
    def reference(floor: float, ceiling: float, source: str = "a paper's table") -> SummaryReference:
        return SummaryReference(floor=ReferenceScore(floor, source), ceiling=ReferenceScore(ceiling, source))

    class Referenced(TinyPlugin):
        summary_references: ClassVar[Any] = {(FLOW_ONLINE, "mini"): reference(2.5, 20.0)}

    class Elsewhere(TinyPlugin):
        summary_references: ClassVar[Any] = {("global", "mini"): reference(2.5, 20.0)}

    class Upside(TinyPlugin):
        summary_references: ClassVar[Any] = {(FLOW_ONLINE, "full"): reference(20.0, 20.0)}

    class Unsourced(TinyPlugin):
        summary_references: ClassVar[Any] = {(FLOW_ONLINE, "mini"): reference(0.0, 20.0, source=" ")}

    check_plugin(Referenced())
    assert _problems(Elsewhere()) == [
        "summary_references[('global', 'mini')]: not one of its boards, (flow, 'mini' or 'full')"]
    assert _problems(Upside()) == [
        "summary_references[('online', 'full')]: the ceiling (20.0) must be above the floor (20.0)"]
    assert _problems(Unsourced()) == [
        "summary_references[('online', 'mini')]: every end needs a number and its source"]


def test_replay_scripts_and_styles_must_be_tuples_of_static_paths() -> None:
    class Loose(TinyPlugin):
        replay_scripts: ClassVar[Any] = "js/tiny.js"
        replay_styles: ClassVar[tuple[str, ...]] = ("",)

    assert _problems(Loose()) == ["replay_scripts must be a tuple of non-empty str",
                                  "replay_styles must be a tuple of non-empty str"]


def _panel(key: str, aggregate: Any, **changes: Any) -> AnalysisPanel:
    return AnalysisPanel(**{"key": key, "title": "By thing", "aggregate": aggregate, "template": "tiny/panel.html",
                            "script": "js/tiny.js", **changes})


def test_an_analysis_panel_is_refused_when_its_aggregate_fails_or_answers_what_json_cannot_hold() -> None:
    class Panelled(TinyPlugin):
        analysis_panels: ClassVar[tuple[AnalysisPanel, ...]] = (
            _panel("counted", lambda means: {"count": len(means)}),
            _panel("first", lambda means: {"first": means[0][1]}),
            _panel("sets", lambda means: {"values": {mean for _tags, mean in means}}),
            _panel("listed", lambda means: [len(means)]),
            _panel("wide", lambda means: None, plotly="3d", template=""),
        )

    assert _problems(Panelled()) == [
        "analysis_panels['first'].aggregate([]) failed: IndexError: tuple index out of range",
        "analysis_panels['sets'].aggregate([]) failed: TypeError: Object of type set is not JSON serializable",
        "analysis_panels['sets'].aggregate([({}, 0.0), ({'label': 'A1', 'kind': 'mixed', 'count': 2, "
        "'key': 'x'}, 1.5)]) failed: TypeError: Object of type set is not JSON serializable",
        "analysis_panels['listed'].aggregate([]) returned list, not a dict or None",
        "analysis_panels['listed'].aggregate([({}, 0.0), ({'label': 'A1', 'kind': 'mixed', 'count': 2, "
        "'key': 'x'}, 1.5)]) returned list, not a dict or None",
        "analysis_panels['wide'].template must be a non-empty str",
        "analysis_panels['wide'].plotly must be one of basic, cartesian, not '3d'",
    ]


def test_analysis_panels_of_the_wrong_shape_or_with_one_key_twice_are_refused() -> None:
    class NotPanels(TinyPlugin):
        analysis_panels: ClassVar[Any] = ("zones",)

    class Twice(TinyPlugin):
        analysis_panels: ClassVar[tuple[AnalysisPanel, ...]] = (_panel("a", lambda means: None),
                                                                _panel("a", lambda means: None))

    assert _problems(NotPanels()) == ["analysis_panels must be a tuple of AnalysisPanel, not ('zones',)"]
    assert _problems(Twice()) == ["analysis_panels must have distinct keys, not a, a"]


def test_actions_the_parser_cannot_read_back_from_their_upload_replies_are_refused() -> None:
    class Deaf(TinyPlugin):
        ACTIONS: ClassVar[tuple[str, ...]] = ("left", "right")
        PASS_ACTIONS: ClassVar[frozenset[str]] = frozenset({"kick"})

    problems = _problems(Deaf())
    assert "PASS_ACTIONS must be among ACTIONS; not: kick" in problems
    assert ("parse('online') reads ['# action left', '# action right'] from action_replies('online', "
            "['left', 'right']), not the actions") in problems


def test_registering_a_plugin_that_does_not_conform_is_refused_and_keeps_the_registry(monkeypatch) -> None:
    class Misspelt(TinyPlugin):
        slug: ClassVar[str] = "misspelt"
        tag_group: ClassVar[tuple[tuple[str, str], ...]] = (("size", "Size"),)

    module = types.ModuleType("evaluators.tests.misspelt_env")
    module.plugin = Misspelt()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    before = environment_slugs()
    with pytest.raises(PluginConformanceError, match="'tag_group' is not an EnvironmentPlugin attribute"):
        load_plugins([*default_environments(), module.__name__])
    with pytest.raises(ImproperlyConfigured, match=r"MAGEBENCH_ENVIRONMENTS: environment plug-in "
                                                   r".*Misspelt does not conform: 'tag_group'"):
        load_environments([*default_environments(), module.__name__])
    assert environment_slugs() == before
