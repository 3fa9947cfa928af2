"""Importing Football scenarios from an official-layout resources/ directory."""
import hashlib
import json
import shutil
import subprocess
import sys
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


OFFICIAL_HEADER = "\r\nimport gfootball_engine as libgame\r\n"
ROLE_NAMES = ("GK", "CB", "LB", "RB", "DM", "CM", "LM", "RM", "AM", "CF")


def _official_text(scenario: dict) -> str:
    """The scenario's builder calls written as the official MageBench files are: CRLF, four-space indents."""
    lines = ["", "import gfootball_engine as libgame"]
    lines += [f"e_PlayerRole_{role} = libgame.e_PlayerRole.e_PlayerRole_{role}" for role in ROLE_NAMES]
    lines += ["Team = libgame.e_Team", "", "def build_scenario(builder):"]
    lines += [f"    builder.config().{name} = {value!r}" for name, value in scenario["config"].items()]
    lines.append(f"    builder.SetBallPosition({scenario['ball'][0]!r}, {scenario['ball'][1]!r})")
    for side, blank_lines in (("Left", 1), ("Right", 2)):
        lines += [""] * blank_lines + [f"    builder.SetTeam(Team.e_{side})", ""]
        lines += [f"    builder.AddPlayer({p['x']!r}, {p['y']!r}, e_PlayerRole_{p['role']})"
                  for p in scenario[side.lower()]]
    return "\r\n".join(lines) + "\r\n"


def _style(path: Path) -> str:
    raw = path.read_bytes()
    if raw.startswith(OFFICIAL_HEADER.encode()) and b"\r\n    builder.SetTeam(Team.e_Left)\r\n" in raw:
        return "official"
    if b"\r\nfrom . import *\r\n" in raw and b"\r\n  builder.SetTeam(Team.e_Left)\r\n" in raw:
        return "gfootball"
    return "other"


def test_it_imports_a_scenario_written_in_the_official_text_format(tmp_path):
    (tmp_path / "gfootball").mkdir()
    gfootball = discover_football(_resources(tmp_path / "gfootball", ["R3_R_1"]))[0]
    resources = tmp_path / "official"
    (resources / "Football").mkdir(parents=True)
    shutil.copy(tmp_path / "gfootball" / "Football_all.json", resources)
    shutil.copy(tmp_path / "gfootball" / "Football_mini.json", resources)
    path = resources / "Football" / "R3_R_1.py"
    path.write_bytes(_official_text(gfootball.data["scenario"]).encode())
    assert _style(path) == "official"
    (imported,) = discover_football(resources)
    assert imported.data == gfootball.data and imported.tags == gfootball.tags
    assert (imported.key, imported.in_mini, imported.warnings) == (gfootball.key, gfootball.in_mini, [])
    # The content hash is still that of the file's bytes, so the two texts keep distinct hashes.
    assert imported.content_hash == hashlib.sha256(path.read_bytes()).hexdigest() != gfootball.content_hash


def test_a_refused_official_file_is_named_with_its_line(tmp_path):
    resources = _resources(tmp_path, ["R3_R_1"])
    path = resources / "Football" / "R3_R_1.py"
    scenario = discover_football(resources)[0].data["scenario"]
    path.write_bytes(_official_text(scenario).replace("libgame.e_Team", "libgame.e_PlayerRole").encode())
    with pytest.raises(ResourceError, match=r"R3_R_1\.py: line 13: Team must be bound to libgame\.e_Team"):
        discover_football(resources)


@pytest.mark.parametrize("where", ["engine module", "module level", "build_scenario", "role binding"])
def test_a_scenario_file_is_never_executed(tmp_path, monkeypatch, where):
    marker = tmp_path / "executed"
    write_marker = f"open({str(marker)!r}, 'w').close()"
    # An engine module of that name, found first on the path, that would write the marker when imported.
    engine = tmp_path / "engine"
    engine.mkdir()
    (engine / "gfootball_engine.py").write_text(f"{write_marker}\ne_Team = e_PlayerRole = None\n")
    monkeypatch.syspath_prepend(str(engine))
    monkeypatch.delitem(sys.modules, "gfootball_engine", raising=False)
    (tmp_path / "resources").mkdir()
    resources = _resources(tmp_path / "resources", ["R3_R_1"])
    path = resources / "Football" / "R3_R_1.py"
    text = _official_text(discover_football(resources)[0].data["scenario"])
    if where == "module level":
        text = text.replace("Team = libgame.e_Team\r\n", f"Team = libgame.e_Team\r\n{write_marker}\r\n")
    elif where == "build_scenario":
        right = "    builder.SetTeam(Team.e_Right)"
        text = text.replace(right, f"    {write_marker}\r\n{right}")
    elif where == "role binding":
        goalkeeper = "libgame.e_PlayerRole.e_PlayerRole_GK"
        text = text.replace(goalkeeper, f"{write_marker} or {goalkeeper}")
    path.write_bytes(text.encode())
    if where == "engine module":
        assert discover_football(resources)[0].data["scenario"]["left"]
    else:
        with pytest.raises(ResourceError, match=r"R3_R_1\.py: line \d+: "):
            discover_football(resources)
    assert not marker.exists()
    assert "gfootball_engine" not in sys.modules


def test_the_fixture_folder_holds_files_in_both_text_styles():
    styles = {path.stem: _style(path) for path in sorted((FIXTURES / "Football").glob("*.py"))}
    assert set(styles.values()) == {"official", "gfootball"}, styles
    listed = json.loads((FIXTURES / "Football_all.json").read_text())
    assert sorted(listed) == [f"resources/Football/{name}.py" for name in styles]
    assert len(discover_football(FIXTURES)) == len(styles)


def test_the_generator_writes_the_checked_in_football_fixtures_byte_for_byte(tmp_path):
    generator = FIXTURES.parents[1] / "generate_football.py"
    subprocess.run([sys.executable, str(generator), "--out", str(tmp_path)], check=True, capture_output=True)
    for path in sorted((FIXTURES / "Football").glob("*.py")):
        assert (tmp_path / "Football" / path.name).read_bytes() == path.read_bytes(), path.name
    for listing in ("Football_all.json", "Football_mini.json"):
        assert (tmp_path / listing).read_bytes() == (FIXTURES / listing).read_bytes()
