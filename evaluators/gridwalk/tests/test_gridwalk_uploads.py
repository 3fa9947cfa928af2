"""Uploaded GridWalk runs given as move names are played back in GridWalk's own reply format."""
from __future__ import annotations

import json
from typing import Any

import pytest

from evaluators.base import get_plugin
from submissions.uploads import UploadError, parse_jsonl, runs_to_replies

SCENARIOS = {"1-GridWalk-corridor"}


@pytest.fixture
def registered(settings: Any) -> None:
    settings.MAGEBENCH_ENVIRONMENTS = [*settings.MAGEBENCH_ENVIRONMENTS, "evaluators.gridwalk"]


@pytest.mark.parametrize(("flow", "replies"), [
    ("global", ["Moves: East, East, West"]),
    ("online", ["Move: East", "Move: East", "Move: West"]),
])
def test_uploaded_moves_become_replies_the_parser_reads_back(registered: None, flow: str, replies: list[str]) -> None:
    line = {"scenario": "1-GridWalk-corridor", "repeat": 0, "actions": ["East", "East", "West"]}
    (run,) = parse_jsonl(json.dumps(line).encode(), env="gridwalk", flow=flow, scenarios=SCENARIOS)
    assert runs_to_replies(run, env="gridwalk", flow=flow) == replies
    plugin = get_plugin("gridwalk")
    assert [action for reply in replies for action in plugin.parse(flow, reply).actions] == ["East", "East", "West"]


@pytest.mark.parametrize(("flow", "replies"), [
    ("global", ["```route\nEast\nEast, West\n```"]),
    ("online", ["Move: East", "Move: East", "Move: West"]),
])
def test_an_uploaded_route_file_becomes_replies_the_parser_reads_back(registered: None, flow: str,
                                                                       replies: list[str]) -> None:
    line = {"scenario": "1-GridWalk-corridor", "repeat": 0, "code": {"route": "East\nEast, West"}}
    (run,) = parse_jsonl(json.dumps(line).encode(), env="gridwalk", flow=flow, scenarios=SCENARIOS)
    assert run.code == {"route": "East\nEast, West"}
    assert runs_to_replies(run, env="gridwalk", flow=flow) == replies
    plugin = get_plugin("gridwalk")
    assert [action for reply in replies for action in plugin.parse(flow, reply).actions] == ["East", "East", "West"]


@pytest.mark.parametrize(("code", "problems"), [
    ({"path": "East"}, ["line 1: code: Additional properties are not allowed ('path' was unexpected)",
                        "line 1: code: 'route' is a required property"]),
    ({"route": ""}, ["line 1: code.route: '' should be non-empty"]),
])
def test_a_route_file_is_checked_against_the_environments_own_schema(registered: None, code: dict[str, str],
                                                                     problems: list[str]) -> None:
    line = {"scenario": "1-GridWalk-corridor", "repeat": 0, "code": code}
    with pytest.raises(UploadError) as refused:
        parse_jsonl(json.dumps(line).encode(), env="gridwalk", flow="global", scenarios=SCENARIOS)
    assert [str(each) for each in refused.value.problems] == problems
