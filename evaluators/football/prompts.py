"""Football prompts, in the platform's own words. Bump the version whenever a text changes."""
from __future__ import annotations

from evaluators.base import PromptSet
from evaluators.football.env import ACCEPTED_ACTIONS

_RULES = (
    "You are playing football (soccer) in the Google Research Football simulator, seen from a broadcast "
    "camera. You control one player of your team: the one with the ball, or the one nearest to it "
    "(the game switches for you). Your team attacks the goal on the right of the pitch. Score, or move the ball towards the right goal "
    "while keeping possession: progress towards goal, getting past opponents, clean passes to free "
    "team-mates and well-placed shots are rewarded. The attack ends when the ball goes out of play, a goal "
    "is scored or the opponents win the ball. Available actions: "
    + ", ".join(ACCEPTED_ACTIONS)
    + ". The eight directions move the player (top is up the screen); repeating the same direction keeps "
    "running that way. Passes and shots are aimed in the direction the player faces."
)

ONLINE = PromptSet(
    version="football-online-v1",
    system=_RULES,
    format_instruction=(
        "You choose one action per turn. Reply in exactly this format:\n"
        "# analyze\n<your reading of the current scene>\n"
        "# action\n<exactly one action name from the list and nothing else>"
    ),
    first_turn="Please act according to the initial game scene.",
    next_turn="Please continue to act according to the current game scene.",
    regenerate="Please regenerate the response that satisfy the format requirements strictly.",
)
