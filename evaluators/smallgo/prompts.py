"""Small Go prompts. Bump the version whenever a text changes."""
from __future__ import annotations

from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, PromptSet

#: The opening words of the rules: the baselines recognise a Small Go request by them.
OPENING = "You play Go with the black stones on a small board."

RULES = (
    f"{OPENING} White is played by a Go program and answers each of your moves. Stones are placed on "
    "the intersections; a group of stones with no empty intersection next to it is captured. A move is "
    "a point named by its column letter (A, B, C, … left to right, without I) and its row number (1 at "
    "the bottom), such as C3, or 'pass'. A move onto an occupied point, or one that the rules forbid, "
    "counts as a pass. The game ends when you pass and White passes straight after, when White "
    "resigns, or after the move limit. Your score is the share of the board you hold at the end: your "
    "stones and the empty points that only your stones surround.\n"
)

REGENERATE = "That reply did not follow the format. Answer again, exactly in the format asked for."


def _prompt_set(flow: str, format_instruction: str, turns: tuple[str, str] = ("", "")) -> PromptSet:
    """The flow's texts: the rules and the regenerate message are the same in both flows."""
    first_turn, next_turn = turns
    return PromptSet(version=f"smallgo-{flow}-v1", system=RULES, format_instruction=format_instruction,
                     first_turn=first_turn, next_turn=next_turn, regenerate=REGENERATE)


GLOBAL = _prompt_set(FLOW_GLOBAL, "Plan all your moves now; they are played in order, White answering each. "
                                  "Reply in this format:\n### Analyze\n<your analysis>\n"
                                  "### Actions\n<your moves separated by ',', e.g. C3, B2, D4>")
ONLINE = _prompt_set(FLOW_ONLINE, "Give one move per reply; you will then see White's answer. Reply in this "
                                  "format:\n# analyze\n<your analysis>\n# action\n<one move>",
                     ("This is the board before your first move.", "This is the board after White's answer."))
