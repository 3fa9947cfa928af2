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
