"""How the baseline agents play GridWalk: idle never moves, random moves at random, the oracle reads
the grid from the last image of the request and walks a shortest route.

Like every baseline, they read only what a model reads: the request's texts and images.
"""
from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE
from evaluators.gridwalk.drawing import read
from evaluators.gridwalk.grid import MOVES, Level, LevelError
from evaluators.gridwalk.parsing import GLOBAL_MARKER, ONLINE_MARKER, format_move, format_route
from evaluators.gridwalk.prompts import OPENING

#: The random agent's Global routes are this long at most.
RANDOM_MAX_ROUTE = 30
_SIZE = re.compile(r"The grid has (\d+) rows and (\d+) columns\.")


def _flow(prompt: str) -> str | None:
    if f"{GLOBAL_MARKER} <" in prompt:
        return FLOW_GLOBAL
    if f"{ONLINE_MARKER} <" in prompt:
        return FLOW_ONLINE
    return None


def _reply(flow: str, thinking: str, moves: Sequence[str]) -> str:
    body = format_route(moves) if flow == FLOW_GLOBAL else format_move(moves[0] if moves else "")
    return f"Thinking: {thinking}\n{body.rstrip()}"


def baseline_reply(agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random) -> str | None:
    """The reply of baseline ``agent`` to a GridWalk request; None for any other request."""
    from evaluators.baselines.agents import last_image, prompt_text

    prompt = prompt_text(messages)
    flow = _flow(prompt) if OPENING in prompt else None
    if flow is None:
        return None
    if agent == "random":
        count = 1 if flow == FLOW_ONLINE else rng.randint(1, RANDOM_MAX_ROUTE)
        return _reply(flow, "I pick my moves at random.", [rng.choice(tuple(MOVES)) for _ in range(count)])
    if agent != "oracle":
        return _reply(flow, "I prefer to stay where I am.", [])
    sizes = _SIZE.findall(prompt)
    image = last_image(messages)
    if not sizes or image is None:
        return _reply(flow, "I cannot see the grid.", [])
    rows, cols = (int(n) for n in sizes[-1])
    squares = read(image, rows, cols)
    if len(squares["walker"]) != 1 or len(squares["goal"]) != 1:
        return _reply(flow, "I cannot find the walker and the goal on the grid.", [])
    lines = [["#" if (r, c) in squares["wall"] else "." for c in range(cols)] for r in range(rows)]
    (wr, wc), (gr, gc) = squares["walker"][0], squares["goal"][0]
    lines[wr][wc], lines[gr][gc] = "@", "G"
    try:
        level = Level.from_rows(["".join(line) for line in lines])
    except LevelError:
        return _reply(flow, "The goal cannot be reached from here.", [])
    route = level.route(level.start)
    return _reply(flow, f"The goal is {len(route)} moves away.", route if flow == FLOW_GLOBAL else route[:1])
