"""Sokoban prompts, in the platform's own words. Bump the version whenever a text changes."""
from __future__ import annotations

from evaluators.base import PromptSet

_RULES = (
    "You are playing Sokoban on a grid seen from above. You control the worker and must push every "
    "box onto a target square. The legal moves are Up, Down, Left and Right: each moves the worker "
    "one square, and a box in the way is pushed one square further if the square behind it is free. "
    "Boxes can only be pushed, never pulled, and two boxes side by side cannot be pushed together. "
    "The red brick pattern is wall. A box pushed into a corner or against a wall away from any target "
    "may become stuck for good, so think ahead before pushing."
)

GLOBAL = PromptSet(
    version="sokoban-global-v1",
    system=_RULES,
    format_instruction=(
        "Plan the whole solution at once. Reply in exactly this format:\n"
        "### Analyze\n<your reasoning about the level>\n"
        "### Actions\n<all moves in order, separated by commas, e.g. Up, Up, Left, Down>"
    ),
    first_turn="Here is the level. Solve it.",
    next_turn="",
    regenerate="Please regenerate the response that satisfy the format requirements strictly.",
)

ONLINE = PromptSet(
    version="sokoban-online-v1",
    system=_RULES,
    format_instruction=(
        "You play one move per turn. Reply in exactly this format:\n"
        "# analyze\n<your reasoning about the current position>\n"
        "# action\n<exactly one of Up, Down, Left, Right and nothing else>"
    ),
    first_turn="Please act according to the initial game scene.",
    next_turn="Please continue to act according to the current game scene.",
    regenerate="Please regenerate the response that satisfy the format requirements strictly.",
)
