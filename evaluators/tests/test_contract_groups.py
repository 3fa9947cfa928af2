"""The plug-in contract reads in one sitting: the required part on the class, the rest in groups that
the guide walks in order."""
from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import pytest

from evaluators.agents.parsing import parse_online_action
from evaluators.base import FLOW_ONLINE, FlowTables, PromptSet, ReplyParser
from evaluators.conformance import PluginConformanceError, check_plugin, interface_names
from evaluators.contract.baselines import BaselineDeclarations
from evaluators.contract.flows import FlowDeclarations
from evaluators.contract.pages import PageDeclarations
from evaluators.contract.release import ReleaseDeclarations
from evaluators.contract.scenarios import ScenarioDeclarations
from evaluators.contract.scoring import ScoringDeclarations
from evaluators.contract.uploads import UploadDeclarations
from evaluators.contract.workers import WorkerDeclarations
from evaluators.interface import EnvironmentPlugin
from evaluators.tests.plugin_fixture import TinyPlugin

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "adding-an-environment.md"
#: The guide's heading of each group, in the order EnvironmentPlugin inherits them.
GROUPS = {"Flows": FlowDeclarations, "Scoring": ScoringDeclarations, "Scenarios": ScenarioDeclarations,
          "Workers": WorkerDeclarations, "Pages": PageDeclarations, "Uploads": UploadDeclarations,
          "Baselines": BaselineDeclarations, "Release": ReleaseDeclarations}
REQUIRED = {"slug", "title", "score_label", "default_settings", "new_episode", "prompts", "parse"}


def _own_names(cls: type) -> set[str]:
    names = set(vars(cls)) | set(getattr(cls, "__annotations__", {}))
    return {name for name in names if not name.startswith("_")}


def _guide_section(title: str) -> str:
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(f"**{title}** (")
    end = text.find("\n**", start + 1)
    return text[start:end if end != -1 else None].split("\n\n", 2)[1]


def test_the_plugin_class_itself_holds_only_the_required_names_and_the_abstract_methods() -> None:
    assert _own_names(EnvironmentPlugin) == REQUIRED
    assert EnvironmentPlugin.__abstractmethods__ == {"new_episode", "prompts", "parse"}


def test_it_inherits_the_groups_in_the_order_the_guide_walks_them() -> None:
    bases = [base for base in EnvironmentPlugin.__bases__ if base.__module__.startswith("evaluators.contract.")]
    assert bases == list(GROUPS.values())
    text = GUIDE.read_text(encoding="utf-8")
    positions = [text.index(f"**{title}** (`evaluators/{inspect.getfile(cls).split('evaluators/')[-1]}`)")
                 for title, cls in GROUPS.items()]
    assert positions == sorted(positions)


def test_every_name_of_the_interface_is_in_exactly_one_place() -> None:
    owners: dict[str, list[str]] = {}
    for cls in (EnvironmentPlugin, *GROUPS.values()):
        for name in _own_names(cls):
            owners.setdefault(name, []).append(cls.__name__)
    # The default replay panel reads the plug-in's slug, so the pages group names it for typing only.
    owners["slug"].remove("PageDeclarations")
    assert {name: classes for name, classes in owners.items() if len(classes) > 1} == {}
    assert set(owners) == interface_names()


def test_the_guide_lists_every_group_member_in_its_groups_table() -> None:
    missing = {}
    for title, cls in GROUPS.items():
        listed = set(re.findall(r"`(\w+)", _guide_section(title)))
        names = _own_names(cls) - ({"slug"} if cls is PageDeclarations else set())
        if names - listed:
            missing[title] = sorted(names - listed)
    assert missing == {}


TEXTS = PromptSet(version="tabled-1", system="rules", format_instruction="one action", first_turn="", next_turn="",
                  regenerate="again")


class Tabled(FlowTables, TinyPlugin):
    ACTIONS: ClassVar[tuple[str, ...]] = ("Up", "Down")
    prompt_sets: ClassVar[Mapping[str, PromptSet]] = {FLOW_ONLINE: TEXTS}
    reply_parsers: ClassVar[Mapping[str, ReplyParser]] = {FLOW_ONLINE: parse_online_action}


def test_a_plugin_with_flow_tables_answers_prompts_and_parse_from_its_tables() -> None:
    plugin = Tabled()
    check_plugin(plugin)
    assert plugin.prompts("online") is TEXTS
    assert plugin.parse("online", "# analyze\nclose\n# action\nDown").actions == ["Down"]
    assert plugin.parse("online", "# action\nLeft").foreign_tokens == ["Left"]
    with pytest.raises(ValueError, match="Tiny has no flow 'global'"):
        plugin.prompts("global")
    with pytest.raises(ValueError, match="Tiny has no flow 'global'"):
        plugin.parse("global", "Up")


def test_the_conformance_check_refuses_flow_tables_that_leave_out_a_flow_it_offers() -> None:
    class Untabled(FlowTables, TinyPlugin):
        pass

    with pytest.raises(PluginConformanceError) as refused:
        check_plugin(Untabled())
    assert [problem for problem in refused.value.problems if problem.startswith(("prompts", "parse"))] == [
        "prompts('online') raised ValueError: Tiny has no flow 'online'",
        "parse('online', '') raised ValueError: Tiny has no flow 'online'"]
