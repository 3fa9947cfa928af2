"""Football's official prompts, read from an operator's official checkout (never run).

Only the Online flow exists officially for Football. Its texts: the rules (``FootballEnv.system_prompt``),
the Online flow's Football format and turn texts, and the text every observation opens with before
its frame (``add_text`` before ``add_image``, in ``__init__`` and ``_take_action`` alike).
"""
from __future__ import annotations

from evaluators.agents.checkout import ONLINE_FLOW, OfficialCheckout, build_prompt_set
from evaluators.base import FLOW_ONLINE, PromptSet

ENV_FILE = "env/football_env.py"
ENV_CLASS = "FootballEnv"
TASK = "Football"


def official_prompt_set(checkout: OfficialCheckout, flow: str) -> PromptSet | None:
    """The texts the official harness sends to a model playing Football in ``flow`` (None for Global)."""
    if flow != FLOW_ONLINE:
        return None
    online = checkout.online_flow
    return build_prompt_set(
        system=checkout.returned_text(ENV_FILE, ENV_CLASS, "system_prompt"),
        format_instruction=checkout.task_text(ONLINE_FLOW, "OnlinePlan", "special_prompt_for_task", TASK),
        first_turn=online.first_turn,
        next_turn=online.next_turn,
        regenerate=online.regenerate,
        unavailable_image=online.unavailable_image,
        observation_lead=checkout.frame_lead(ENV_FILE, ENV_CLASS, ["__init__", "_take_action"]),
    )
