"""Football scenario files read as data, never executed (reference §2.3).

An official scenario is a Python file defining ``build_scenario(builder)`` with gfootball's builder
calls. Running it would run arbitrary code, so the file is parsed instead: only the statements the
official files use are accepted, and anything else is rejected with its line number.

Accepted inside ``build_scenario(builder)``:
  builder.config().<field> = <literal>
  builder.SetBallPosition(<x>, <y>)
  builder.SetTeam(Team.e_Left | Team.e_Right)
  builder.AddPlayer(<x>, <y>, e_PlayerRole_<XX>[, lazy=<bool>][, controllable=<bool>])
plus a docstring and ``pass``. At module level, docstrings and either text style of the scenario files:

* gfootball's own, importing its scenario helpers (``from . import *``, ``from gfootball.scenarios import *``);
* the official MageBench files', binding the names from the engine module::

    import gfootball_engine as libgame
    e_PlayerRole_GK = libgame.e_PlayerRole.e_PlayerRole_GK   # likewise for each of the ten roles
    Team = libgame.e_Team

Both styles give the same parsed scenario for the same builder calls.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, TypeGuard

ROLES = ("GK", "CB", "LB", "RB", "DM", "CM", "LM", "RM", "AM", "CF")
CONFIG_FIELDS = {
    "game_duration": int, "deterministic": bool, "offsides": bool, "end_episode_on_score": bool,
    "end_episode_on_out_of_play": bool, "end_episode_on_possession_change": bool,
    "right_team_difficulty": float, "left_team_difficulty": float, "second_half": int,
    "control_all_players": bool,
}
ALLOWED_IMPORTS = {".", "gfootball.scenarios"}
ENGINE_MODULE, ENGINE_ALIAS = "gfootball_engine", "libgame"


class ScenarioFileError(ValueError):
    """A scenario file with a statement outside the accepted builder calls."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class Player:
    x: float
    y: float
    role: str
    lazy: bool = False
    controllable: bool = True


@dataclass
class FootballScenario:
    config: dict[str, Any] = field(default_factory=dict)
    ball: tuple[float, float] = (0.0, 0.0)
    left: list[Player] = field(default_factory=list)
    right: list[Player] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        def team(players: list[Player]) -> list[dict[str, Any]]:
            return [{"x": p.x, "y": p.y, "role": p.role, "lazy": p.lazy, "controllable": p.controllable}
                    for p in players]

        return {"config": dict(self.config), "ball": list(self.ball), "left": team(self.left),
                "right": team(self.right)}


def _number(node: ast.expr) -> float:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _number(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    raise ScenarioFileError(node.lineno, "expected a number")


def _literal(node: ast.expr, kind: type) -> Any:
    if kind is bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return node.value
        raise ScenarioFileError(node.lineno, "expected True or False")
    value = _number(node)
    if kind is int:
        if value != int(value):
            raise ScenarioFileError(node.lineno, "expected a whole number")
        return int(value)
    return value


def _is_builder_call(node: ast.expr, method: str, builder: str) -> TypeGuard[ast.Call]:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method
            and isinstance(node.func.value, ast.Name) and node.func.value.id == builder)


def _role(node: ast.expr) -> str:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    if name is None or not name.startswith("e_PlayerRole_") or name[len("e_PlayerRole_"):] not in ROLES:
        raise ScenarioFileError(node.lineno, "expected a player role such as e_PlayerRole_GK")
    return name[len("e_PlayerRole_"):]


def _is_engine_import(node: ast.stmt) -> bool:
    """``import gfootball_engine as libgame``, exactly: one module, that alias."""
    return (isinstance(node, ast.Import) and len(node.names) == 1 and node.names[0].name == ENGINE_MODULE
            and node.names[0].asname == ENGINE_ALIAS)


def _engine_attribute(node: ast.expr) -> list[str] | None:
    """The attribute path below ``libgame`` (``libgame.a.b`` gives ``["a", "b"]``), or None."""
    path: list[str] = []
    while isinstance(node, ast.Attribute):
        path.insert(0, node.attr)
        node = node.value
    return path if isinstance(node, ast.Name) and node.id == ENGINE_ALIAS and path else None


def _check_engine_binding(node: ast.Assign, engine_imported: bool) -> None:
    """Accept ``e_PlayerRole_<XX> = libgame.e_PlayerRole.e_PlayerRole_<XX>`` and ``Team = libgame.e_Team``."""
    target = node.targets[0] if len(node.targets) == 1 else None
    name = target.id if isinstance(target, ast.Name) else None
    if name == "Team":
        expected = ["e_Team"]
    elif name is not None and name.startswith("e_PlayerRole_") and name[len("e_PlayerRole_"):] in ROLES:
        expected = ["e_PlayerRole", name]
    else:
        raise ScenarioFileError(node.lineno, "only e_PlayerRole_<role> and Team may be assigned at module level")
    wanted = ".".join([ENGINE_ALIAS, *expected])
    if _engine_attribute(node.value) != expected:
        raise ScenarioFileError(node.lineno, f"{name} must be bound to {wanted}")
    if not engine_imported:
        raise ScenarioFileError(node.lineno, f"{name} is bound to {wanted} before "
                                             f"import {ENGINE_MODULE} as {ENGINE_ALIAS}")


def parse_scenario(source: str) -> FootballScenario:
    """Read a scenario file's builder calls. Raises ScenarioFileError on anything else."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ScenarioFileError(exc.lineno or 0, f"not valid Python: {exc.msg}") from None
    function = _build_function(tree)
    builder = _builder_argument(function)
    scenario = FootballScenario()
    team: list[Player] | None = None
    for statement in function.body:
        team = _apply(statement, builder, scenario, team)
    return scenario


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _build_function(tree: ast.Module) -> ast.FunctionDef:
    """The one ``build_scenario`` definition, once every other module-level statement is accepted."""
    builds = []
    engine_imported = False
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and "." * node.level + (node.module or "") in ALLOWED_IMPORTS:
            continue
        if _is_engine_import(node):
            engine_imported = True
            continue
        if isinstance(node, ast.Assign):
            _check_engine_binding(node, engine_imported)
            continue
        if _is_docstring(node):
            continue
        if isinstance(node, ast.FunctionDef) and node.name == "build_scenario":
            builds.append(node)
            continue
        hint = f" (the only plain import accepted is import {ENGINE_MODULE} as {ENGINE_ALIAS})"
        if not isinstance(node, ast.Import):
            hint = ""
        raise ScenarioFileError(node.lineno, f"unexpected {type(node).__name__} at module level{hint}")
    if len(builds) != 1:
        raise ScenarioFileError(1, "a scenario file defines build_scenario(builder) exactly once")
    return builds[0]


def _builder_argument(function: ast.FunctionDef) -> str:
    """The name ``build_scenario`` calls its one argument."""
    args = function.args
    if len(args.args) != 1 or args.vararg or args.kwarg or args.kwonlyargs or function.decorator_list:
        raise ScenarioFileError(function.lineno, "build_scenario takes exactly one argument, the builder")
    return args.args[0].arg


def _apply(statement: ast.stmt, builder: str, scenario: FootballScenario,
           team: list[Player] | None) -> list[Player] | None:
    """Apply one statement of ``build_scenario`` to ``scenario``; returns the team SetTeam chose last."""
    if isinstance(statement, ast.Pass) or _is_docstring(statement):
        return team
    if isinstance(statement, ast.Assign):
        _apply_config(statement, builder, scenario)
        return team
    if not isinstance(statement, ast.Expr):
        raise ScenarioFileError(statement.lineno, f"unexpected {type(statement).__name__}")
    call = statement.value
    if _is_builder_call(call, "SetBallPosition", builder) and len(call.args) == 2 and not call.keywords:
        scenario.ball = (_number(call.args[0]), _number(call.args[1]))
    elif _is_builder_call(call, "SetTeam", builder) and len(call.args) == 1 and not call.keywords:
        team = _team(call, scenario)
    elif _is_builder_call(call, "AddPlayer", builder) and len(call.args) == 3:
        _add_player(call, team)
    else:
        raise ScenarioFileError(statement.lineno, "only builder.config(), SetBallPosition, SetTeam and AddPlayer "
                                                  "calls are accepted")
    return team


def _apply_config(statement: ast.Assign, builder: str, scenario: FootballScenario) -> None:
    target = statement.targets[0] if len(statement.targets) == 1 else None
    if (isinstance(target, ast.Attribute) and _is_builder_call(target.value, "config", builder)
            and not target.value.args and target.attr in CONFIG_FIELDS):
        scenario.config[target.attr] = _literal(statement.value, CONFIG_FIELDS[target.attr])
        return
    raise ScenarioFileError(statement.lineno, "only builder.config().<field> = <value> may be assigned")


def _team(call: ast.Call, scenario: FootballScenario) -> list[Player]:
    """The side ``SetTeam`` names."""
    side = call.args[0]
    name = side.attr if isinstance(side, ast.Attribute) else side.id if isinstance(side, ast.Name) else ""
    if name == "e_Left":
        return scenario.left
    if name == "e_Right":
        return scenario.right
    raise ScenarioFileError(call.lineno, "SetTeam takes Team.e_Left or Team.e_Right")


def _add_player(call: ast.Call, team: list[Player] | None) -> None:
    if team is None:
        raise ScenarioFileError(call.lineno, "AddPlayer before SetTeam")
    options = {"lazy": False, "controllable": True}
    for keyword in call.keywords:
        if keyword.arg not in options:
            raise ScenarioFileError(call.lineno, f"AddPlayer has no argument {keyword.arg!r}")
        options[keyword.arg] = _literal(keyword.value, bool)
    team.append(Player(_number(call.args[0]), _number(call.args[1]), _role(call.args[2]), **options))
