"""Importing Football scenarios from an official-layout resources/ directory."""
import json
import shutil
from pathlib import Path

import pytest

from evaluators.base import ResourceError
from evaluators.football.resources import discover_football, zone_of

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "magebench" / "resources"


def _resources(tmp_path: Path, names: list[str]) -> Path:
    (tmp_path / "Football").mkdir()
    for name in names:
        shutil.copy(FIXTURES / "Football" / f"{name}.py", tmp_path / "Football" / f"{name}.py")
    (tmp_path / "Football_all.json").write_text(json.dumps([f"resources/Football/{n}.py" for n in names]))
    (tmp_path / "Football_mini.json").write_text(json.dumps([f"resources/Football/{names[0]}.py"]))
    return tmp_path


def test_scenarios_are_stored_as_parsed_data_with_zone_and_category_tags(tmp_path):
    found = discover_football(_resources(tmp_path, ["R3_R_1", "R8_P_1"]))
    first = found[0]
    assert first.key == "R3_R_1" and first.in_mini and first.tags["zone"] == "R3"
    assert first.tags["category"] == "real-world" and first.tags["lane"] == "top" and first.tags["third"] == "attacking"
    assert first.data["scenario"]["left"][0]["role"] == "GK" and len(first.data["scenario"]["right"]) == 11
    assert found[1].tags["players"] == "2v3"  # a small-sided personal scenario


def test_a_file_with_a_forbidden_statement_is_rejected_with_its_name_and_line(tmp_path):
    resources = _resources(tmp_path, ["R3_R_1"])
    path = resources / "Football" / "R3_R_1.py"
    lines = path.read_bytes().decode().split("\r\n")
    lines.insert(6, "  import os")
    path.write_bytes("\r\n".join(lines).encode())
    with pytest.raises(ResourceError, match=r"R3_R_1\.py: line 7: unexpected Import"):
        discover_football(resources)


def test_a_listed_scenario_without_its_file_is_named(tmp_path):
    resources = _resources(tmp_path, ["R3_R_1"])
    (resources / "Football_all.json").write_text(json.dumps(["resources/Football/R3_R_1.py",
                                                             "resources/Football/R4_P_9.py"]))
    with pytest.raises(ResourceError, match="1 of 2 Football scenarios have no .py.*R4_P_9"):
        discover_football(resources)


def test_a_scenario_named_outside_the_official_pattern_gets_its_zone_from_the_ball():
    assert zone_of((-0.6, -0.3)) == 1 and zone_of((0.0, 0.0)) == 5 and zone_of((0.7, 0.3)) == 9
