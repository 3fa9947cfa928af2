"""Sokoban prompts, in the platform's own words. Bump the version whenever a text changes.

They tell the model what the official prompts tell it (env/sokoban_env.py system prompt, the flows'
format instructions), no more: the colours of the pieces, the four action names, the side-by-side
rule, the wall pattern, deadlocks, and the official advice to restart, which no parser accepts.
"""
from __future__ import annotations

from evaluators.base import PromptSet

_RULES = (
    "You are playing Sokoban. Move the green character so that it pushes the yellow boxes onto the target "
    "areas (the squares with a red dot in the middle). You control the character with text commands; the "
    "action IDs are:\n"
    "- 'Up': the character moves up, pushing a box above it up.\n"
    "- 'Down': the character moves down, pushing a box below it down.\n"
    "- 'Left': the character moves left, pushing a box on its left to the left.\n"
    "- 'Right': the character moves right, pushing a box on its right to the right.\n"
    "\n"
    "Notes:\n"
    "1. Two boxes standing next to each other cannot be pushed together in the direction they are lined up.\n"
    "2. The red brick pattern is wall. The game can reach a state that can no longer be won, for instance "
    "when a box is pushed into a corner that is not a target. You should then restart the game.\n"
)

REGENERATE = "That reply did not follow the format. Answer again, exactly in the format asked for."

GLOBAL = PromptSet(
    version="sokoban-global-v3",
    system=_RULES,
    format_instruction=(
        "Analyse the level, then give every action needed to solve it in one go. Reply in this format:\n"
        "### Analyze\n<your analysis>\n"
        "### Actions\n<a long sequence of Left, Right, Up, Down separated by ','>"
    ),
    # The official Global request shows the level image and the format instruction, nothing else.
    first_turn="",
    next_turn="",
    regenerate=REGENERATE,
)

ONLINE = PromptSet(
    version="sokoban-online-v3",
    system=_RULES,
    format_instruction=(
        "Give exactly one action per reply, in this format:\n"
        "# analyze\n<your analysis>\n"
        "# action\n<one action ID>\n"
        "\n"
        "Example:\n"
        "# analyze\n...\n"
        "# action\nUp"
    ),
    first_turn="This is the game at the start. Choose your first action.",
    next_turn="This is the game after your last action. Choose the next one.",
    regenerate=REGENERATE,
)
