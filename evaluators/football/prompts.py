"""Football prompts, in the platform's own words. Bump the version whenever a text changes.

They tell the model what the official prompts tell it (env/football_env.py system prompt, the Online
format instruction), no more: who it controls, which goal to attack, and the 16 official action IDs
with what each does, written with their ``action_`` prefix as the official parser requires.
"""
from __future__ import annotations

from evaluators.base import PromptSet
from evaluators.football.env import ACCEPTED_ACTIONS

_MOVES = ", ".join(f"'{name}'" for name in ACCEPTED_ACTIONS[:8])

_RULES = (
    "You are playing a football game. The player you control wears a yellow jersey and has a blue name above "
    "his head. Your aim is to attack the goal on the **right** of the pitch, by the usual rules of football. Your "
    "team-mates also wear yellow; the opponents wear other colours. You control your player with text "
    "commands; the action IDs are:\n"
    "\n"
    f"- {_MOVES}: run in the direction the action ID names.\n"
    "- 'action_long_pass': a long pass to a team-mate; who receives it is decided from the direction you are "
    "moving in.\n"
    "- 'action_high_pass': a high pass, chosen the same way as action_long_pass.\n"
    "- 'action_short_pass': a short pass, chosen the same way as action_long_pass.\n"
    "- 'action_shot': a shot, always towards the opponents' goal.\n"
    "- 'action_sprint', 'action_release_sprint': start and stop sprinting; sprinting stays on until released. "
    "A sprinting player is faster but controls the ball worse.\n"
    "- 'action_dribble', 'action_release_dribble': start and stop dribbling; dribbling stays on until released. "
    "A dribbling player is slower but harder to take the ball from.\n"
)

ONLINE = PromptSet(
    version="football-online-v3",
    system=_RULES,
    format_instruction=(
        "Give exactly one action per reply, in this format:\n"
        "# analyze\n<your analysis>\n"
        "# action\n<one action ID>\n"
        "\n"
        "Example:\n"
        "# analyze\n...\n"
        "# action\naction_left"
    ),
    first_turn="This is the game at the start. Choose your first action.",
    next_turn="This is the game after your last action. Choose the next one.",
    regenerate="That reply did not follow the format. Answer again, exactly in the format asked for.",
    observation_lead="The match as it stands:",
)
