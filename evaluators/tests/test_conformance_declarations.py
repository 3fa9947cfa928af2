"""The conformance check refuses a lost-score or upload declaration the shared pages could not use."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from evaluators.base import BreakdownPart
from evaluators.conformance import PluginConformanceError, check_plugin
from evaluators.tests.plugin_fixture import TinyPlugin


def _problems(plugin: Any) -> list[str]:
    with pytest.raises(PluginConformanceError) as refused:
        check_plugin(plugin)
    return refused.value.problems


def test_declared_lost_score_parts_pass_the_check() -> None:
    class Declared(TinyPlugin):
        breakdown_keys: ClassVar[tuple[str, ...]] = ("slip", "fall")
        breakdown_parts: ClassVar[tuple[BreakdownPart, ...]] = (
            BreakdownPart("slip", "slips", "#112233"), BreakdownPart("fall", "falls", "#aabbcc"))

    check_plugin(Declared())


def test_lost_score_parts_must_name_the_breakdown_keys_in_order_each_with_a_label_and_a_colour() -> None:
    class Mismatched(TinyPlugin):
        breakdown_keys: ClassVar[tuple[str, ...]] = ("slip", "fall")
        breakdown_parts: ClassVar[tuple[BreakdownPart, ...]] = (
            BreakdownPart("fall", "", "#aabbcc"), BreakdownPart("slip", "slips", "red"))

    assert _problems(Mismatched()) == [
        "breakdown_parts must declare breakdown_keys in their order (slip, fall), not fall, slip",
        "breakdown_parts['fall'].label must be a non-empty str",
        "breakdown_parts['slip'].colour must be a '#rrggbb' colour, not 'red'",
    ]


def test_lost_score_parts_without_keys_are_refused() -> None:
    class Unkeyed(TinyPlugin):
        breakdown_parts: ClassVar[Any] = (BreakdownPart("slip", "slips", "#112233"),)

    assert _problems(Unkeyed()) == ["breakdown_parts need breakdown_keys naming the same components"]


def test_a_code_upload_schema_that_is_no_object_schema_is_refused() -> None:
    class Coded(TinyPlugin):
        code_files: ClassVar[tuple[tuple[str, str], ...]] = (("main", "main.txt"),)
        upload_code_fences: ClassVar[tuple[tuple[str, str], ...]] = (("main", "text"),)

        def upload_code_schema(self) -> dict[str, Any]:
            return {"type": "string"}

    assert _problems(Coded()) == ["upload_code_schema() must return a JSON Schema (a dict) of type object"]


def test_code_replies_that_fail_are_refused_with_their_flow() -> None:
    class Failing(TinyPlugin):
        code_files: ClassVar[tuple[tuple[str, str], ...]] = (("main", "main.txt"),)
        upload_code_fences: ClassVar[tuple[tuple[str, str], ...]] = (("main", "text"),)

        def code_replies(self, flow: str, code: Mapping[str, str]) -> list[str]:
            raise KeyError("main")

    assert _problems(Failing()) == ["code_replies('online', ...) raised KeyError: 'main'"]


def test_the_default_code_schema_asks_for_the_first_code_file_and_allows_the_others() -> None:
    class Paged(TinyPlugin):
        code_files: ClassVar[tuple[tuple[str, str], ...]] = (("page", "page.txt"), ("notes", "notes.txt"))
        upload_code_fences: ClassVar[tuple[tuple[str, str], ...]] = (("page", "text"), ("notes", "text"))

    schema = Paged().upload_code_schema()
    assert schema["required"] == ["page"] and set(schema["properties"]) == {"page", "notes"}
    assert schema["additionalProperties"] is False
    assert Paged().code_replies("online", {"notes": "b", "page": "a"}) == ["```text\na\n```\n\n```text\nb\n```"]


def test_operator_settings_demo_baselines_and_paper_rows_are_checked_with_every_problem_named() -> None:
    from evaluators.base import DemoBaselines, OperatorSetting, OperatorSettings, PaperRows

    class Careless(TinyPlugin):
        opt_in: ClassVar[Any] = "yes"
        operator_settings: ClassVar[OperatorSettings] = OperatorSettings(settings=(
            OperatorSetting("tiny_laps", int, 3), OperatorSetting("MAGEBENCH_TINY_STRICT", bool, 1),
            OperatorSetting("MAGEBENCH_TINY_STRICT", bool, False)))
        demo_baselines: ClassVar[DemoBaselines] = DemoBaselines(agents=("oracle",), subsets=("huge",),
                                                                flows=("global",))
        paper_rows: ClassVar[PaperRows] = PaperRows(column="Tiny", repeats={"mini": 0},
                                                    uncertainty={("global", "full"): 0.5}, ia_ra_pairs={"online": -1})

    assert _problems(Careless()) == [
        "opt_in must be a bool",
        "operator setting name 'tiny_laps' must be MAGEBENCH_ and upper-case letters, digits and '_'",
        "operator setting 'MAGEBENCH_TINY_STRICT': its defaults must be of its kind, bool",
        "operator_settings names a setting more than once",
        "operator_settings with settings needs an apply function to hand their values to",
        "demo_baselines.agents must be a tuple among baseline_agents (idle, random), not ('oracle',)",
        "demo_baselines.subsets must be a tuple among the subsets (mini, full), not ('huge',)",
        "demo_baselines.flows must be a tuple among flows (online), not ('global',)",
        "paper_rows.repeats must map subsets to positive int",
        "paper_rows.uncertainty must map (flow, subset) of this environment to a number >= 0",
        "paper_rows.ia_ra_pairs must map flows of this environment to a pair's index >= 0",
    ]
