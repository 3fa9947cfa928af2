"""Football scenario files are read from their syntax tree and never run."""
import re

import pytest

from evaluators.football.scenario import ScenarioFileError, parse_scenario

VALID = (
    "from . import *\r\n"
    "\r\n"
    "def build_scenario(builder):\r\n"
    "  builder.config().game_duration = 400\r\n"
    "  builder.config().deterministic = False\r\n"
    "  builder.config().right_team_difficulty = 0.0\r\n"
    "  builder.config().left_team_difficulty = 1.0\r\n"
    "  builder.SetBallPosition(-0.48, -0.32)\r\n"
    "  builder.SetTeam(Team.e_Left)\r\n"
    "  builder.AddPlayer(-1.0, 0.0, e_PlayerRole_GK)\r\n"
    "  builder.AddPlayer(-0.5, -0.3, e_PlayerRole_CM, lazy=False)\r\n"
    "  builder.SetTeam(Team.e_Right)\r\n"
    "  builder.AddPlayer(-0.97, 0.0, e_PlayerRole_GK)\r\n"
)


def test_it_reads_config_ball_and_both_teams_from_a_crlf_file():
    scenario = parse_scenario(VALID)
    assert scenario.config == {"game_duration": 400, "deterministic": False, "right_team_difficulty": 0.0,
                               "left_team_difficulty": 1.0}
    assert scenario.ball == (-0.48, -0.32)
    assert [(p.x, p.y, p.role) for p in scenario.left] == [(-1.0, 0.0, "GK"), (-0.5, -0.3, "CM")]
    assert [(p.x, p.role) for p in scenario.right] == [(-0.97, "GK")]
    assert scenario.as_dict()["left"][1] == {"x": -0.5, "y": -0.3, "role": "CM", "lazy": False, "controllable": True}


@pytest.mark.parametrize("line,message", [
    ("  import os", "unexpected Import"),
    ("  __import__('os').system('true')", "only builder.config()"),
    ("  for i in range(3): builder.AddPlayer(0, 0, e_PlayerRole_CB)", "unexpected For"),
    ("  builder.AddPlayer(0, 0, 'GK')", "expected a player role"),
    ("  builder.AddPlayer(0, 0, e_PlayerRole_XX)", "expected a player role"),
    ("  builder.config().game_duration = 400.5", "whole number"),
    ("  builder.config().level = 'x'", "only builder.config().<field>"),
    ("  builder.SetBallPosition(abs(-1), 0)", "expected a number"),
    ("  builder.AddPlayer(0, 0, e_PlayerRole_CB, stamina=1)", "no argument 'stamina'"),
    ("  x = 1", "only builder.config().<field>"),
])
def test_it_rejects_anything_but_the_builder_calls_with_the_line(line, message):
    source = VALID + line + "\r\n"
    with pytest.raises(ScenarioFileError, match=re.escape(message)) as error:
        parse_scenario(source)
    assert error.value.line == 14


def test_it_rejects_module_level_code_and_missing_builders():
    with pytest.raises(ScenarioFileError, match="line 1: unexpected Import"):
        parse_scenario("import os\n" + VALID)
    with pytest.raises(ScenarioFileError, match="exactly once"):
        parse_scenario("from . import *\n")
    with pytest.raises(ScenarioFileError, match="AddPlayer before SetTeam"):
        parse_scenario("def build_scenario(builder):\n  builder.AddPlayer(0, 0, e_PlayerRole_GK)\n")
    with pytest.raises(ScenarioFileError, match="not valid Python"):
        parse_scenario("def build_scenario(builder:\n")


ROLE_NAMES = ("GK", "CB", "LB", "RB", "DM", "CM", "LM", "RM", "AM", "CF")
# The official MageBench header: line 1 blank, line 2 the import, lines 3-12 the roles, line 13 Team.
OFFICIAL_HEADER = [
    "",
    "import gfootball_engine as libgame",
    *[f"e_PlayerRole_{role} = libgame.e_PlayerRole.e_PlayerRole_{role}" for role in ROLE_NAMES],
    "Team = libgame.e_Team",
    "",
]
OFFICIAL_BODY = [
    "def build_scenario(builder):",
    "    builder.config().game_duration = 400",
    "    builder.config().deterministic = False",
    "    builder.config().right_team_difficulty = 0.0",
    "    builder.config().left_team_difficulty = 1.0",
    "    builder.SetBallPosition(-0.48, -0.32)",
    "",
    "    builder.SetTeam(Team.e_Left)",
    "",
    "    builder.AddPlayer(-1.0, 0.0, e_PlayerRole_GK)",
    "    builder.AddPlayer(-0.5, -0.3, e_PlayerRole_CM, lazy=False)",
    "",
    "",
    "    builder.SetTeam(Team.e_Right)",
    "",
    "    builder.AddPlayer(-0.97, 0.0, e_PlayerRole_GK)",
]


def official(header: list[str] = OFFICIAL_HEADER) -> str:
    return "\r\n".join([*header, *OFFICIAL_BODY]) + "\r\n"


def test_a_file_in_the_official_text_format_gives_the_same_scenario_as_in_gfootball_style():
    source = official()
    assert source.startswith("\r\nimport gfootball_engine as libgame\r\n") and "\n    builder.SetTeam" in source
    assert parse_scenario(source) == parse_scenario(VALID)
    assert parse_scenario(source).as_dict() == parse_scenario(VALID).as_dict()


def test_the_official_format_also_parses_with_plain_newlines():
    assert parse_scenario(official().replace("\r\n", "\n")) == parse_scenario(VALID)


@pytest.mark.parametrize("line,replacement,message", [
    (2, "import gfootball_engine", "unexpected Import"),
    (2, "import gfootball_engine as engine", "unexpected Import"),
    (2, "import gfootball_engine as libgame, os", "unexpected Import"),
    (2, "from gfootball_engine import *", "unexpected ImportFrom"),
    (3, "e_PlayerRole_GK = libgame.e_PlayerRole.e_PlayerRole_CB",
     "e_PlayerRole_GK must be bound to libgame.e_PlayerRole.e_PlayerRole_GK"),
    (4, "e_PlayerRole_CB = libgame.e_PlayerRole_CB", "e_PlayerRole_CB must be bound to libgame.e_PlayerRole."),
    (5, "e_PlayerRole_LB = os.e_PlayerRole.e_PlayerRole_LB", "e_PlayerRole_LB must be bound to libgame."),
    (6, "e_PlayerRole_RB = libgame.e_PlayerRole.e_PlayerRole_RB()", "e_PlayerRole_RB must be bound to libgame."),
    (7, "e_PlayerRole_DM = e_PlayerRole_CM", "e_PlayerRole_DM must be bound to libgame."),
    (8, "e_PlayerRole_CM = libgame.e_PlayerRole.e_PlayerRole_CM.e_PlayerRole_CM",
     "e_PlayerRole_CM must be bound to libgame."),
    (9, "e_PlayerRole_XX = libgame.e_PlayerRole.e_PlayerRole_XX", "only e_PlayerRole_<role> and Team"),
    (10, "e_PlayerRole_RM: int = libgame.e_PlayerRole.e_PlayerRole_RM", "unexpected AnnAssign"),
    (11, "e_PlayerRole_AM = e_PlayerRole_LM = libgame.e_PlayerRole.e_PlayerRole_AM",
     "only e_PlayerRole_<role> and Team"),
    (12, "e_PlayerRole_CF += libgame.e_PlayerRole.e_PlayerRole_CF", "unexpected AugAssign"),
    (13, "Team = libgame.e_PlayerRole", "Team must be bound to libgame.e_Team"),
    (13, "Team = __import__('os')", "Team must be bound to libgame.e_Team"),
    (13, "Team = e_Team", "Team must be bound to libgame.e_Team"),
    (13, "libgame = __import__('os')", "only e_PlayerRole_<role> and Team"),
    (13, "Team, libgame = libgame.e_Team, None", "only e_PlayerRole_<role> and Team"),
    (14, "print(libgame)", "unexpected Expr"),
])
def test_each_header_line_wrong_in_one_way_is_refused_with_its_line(line, replacement, message):
    header = list(OFFICIAL_HEADER)
    header[line - 1] = replacement
    with pytest.raises(ScenarioFileError, match=re.escape(f"line {line}: {message}")) as error:
        parse_scenario(official(header))
    assert error.value.line == line


def test_a_role_bound_before_the_engine_is_imported_is_refused():
    header = [OFFICIAL_HEADER[2], *OFFICIAL_HEADER[:2], *OFFICIAL_HEADER[3:]]
    with pytest.raises(ScenarioFileError, match="line 1: e_PlayerRole_GK is bound .* before import gfootball_engine"):
        parse_scenario(official(header))


@pytest.mark.parametrize("statement", [
    "import os", "import subprocess as libgame", "import gfootball_engine.os as libgame", "import gfootball",
    "from os import system", "from gfootball_engine import e_Team", "from .. import *",
])
def test_an_import_of_any_other_module_is_still_refused(statement):
    header = list(OFFICIAL_HEADER)
    header.insert(2, statement)
    with pytest.raises(ScenarioFileError, match=r"line 3: unexpected Import(From)? at module level"):
        parse_scenario(official(header))
