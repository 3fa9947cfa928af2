"""GridWalk prompts. Bump the version whenever a text changes."""
from __future__ import annotations

from evaluators.base import PromptSet
from evaluators.gridwalk.parsing import GLOBAL_MARKER, ONLINE_MARKER

#: The opening words of the rules: the baselines recognise a GridWalk request by them.
OPENING = "You guide a walker across a grid of squares."

RULES = (
    f"{OPENING} The blue disc is the walker, the green square is the goal, dark squares are walls and "
    "light squares are open floor. Each move takes the walker one square:\n"
    "- 'North': one square up.\n"
    "- 'South': one square down.\n"
    "- 'West': one square to the left.\n"
    "- 'East': one square to the right.\n"
    "A move into a wall or off the grid leaves the walker where it is. Bring the walker onto the goal; "
    "the closer it ends, the better the score.\n"
)

REGENERATE = "I could not read a move in your last reply. Please answer again, keeping strictly to the format."

GLOBAL = PromptSet(
    version="gridwalk-global-v1",
    system=RULES,
    format_instruction=(
        "Plan the whole route now; every move is carried out in order. Reply in this format:\n"
        "Thinking: <your reasoning>\n"
        f"{GLOBAL_MARKER} <the moves, separated by commas, e.g. North, East, East>"
    ),
    first_turn="",
    next_turn="",
    regenerate=REGENERATE,
)

ONLINE = PromptSet(
    version="gridwalk-online-v1",
    system=RULES,
    format_instruction=(
        "Give one move per reply; you will then see where the walker stands. Reply in this format:\n"
        "Thinking: <your reasoning>\n"
        f"{ONLINE_MARKER} <one move>"
    ),
    first_turn="This is where the walker starts.",
    next_turn="This is where the walker stands now.",
    regenerate=REGENERATE,
)
