"""The boards that exist, and what is wrong with a board's name that names none: a mistyped environment,
flow or set is answered with the valid ones (the site's 404 page, the API's 404 body, the client's error)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluators.base import SUBSETS, all_plugins, get_plugin


@dataclass(frozen=True)
class BoardName:
    env: str
    title: str
    flow: str
    subset: str

    @property
    def words(self) -> str:
        """The board as the client's commands take it: ``sokoban global mini``."""
        return f"{self.env} {self.flow} {self.subset}"


def known_boards() -> list[BoardName]:
    """Every board, environments in the navigation's order, each flow's mini set first."""
    plugins = sorted(all_plugins(), key=lambda plugin: (plugin.position, plugin.slug))
    return [BoardName(env=plugin.slug, title=plugin.title, flow=flow, subset=subset)
            for plugin in plugins for flow in plugin.flows for subset in SUBSETS]


def board_name_problem(env: str, flow: str, subset: str) -> str | None:
    """What names no board in ``env``/``flow``/``subset``, as a sentence; None when it is a board."""
    try:
        plugin = get_plugin(env)
    except KeyError:
        return f"there is no environment {env!r}"
    if flow not in plugin.flows:
        return f"{plugin.title} has no flow {flow!r}"
    if subset not in SUBSETS:
        return f"there is no set {subset!r}: a board is the mini or the full set"
    return None


def unknown_board_detail(env: str, flow: str, subset: str) -> dict[str, Any]:
    """The API's 404 body for a board's name (``detail`` becomes its message): what is wrong and the
    valid values, the environment's own flows when the environment exists."""
    problem = board_name_problem(env, flow, subset) or "no such board"
    try:
        flows = list(get_plugin(env).flows)
    except KeyError:
        flows = sorted({flow for plugin in all_plugins() for flow in plugin.flows})
    return {"detail": f"no such board: {problem}",
            "environments": sorted(plugin.slug for plugin in all_plugins()),
            "flows": flows, "subsets": list(SUBSETS),
            "boards": [board.words for board in known_boards()]}
