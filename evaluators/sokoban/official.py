"""Sokoban's official prompts, read from an operator's official checkout (never run).

Global: the rules (``SokobanEnv.system_prompt``), the Sokoban format of the Global flow and its text
for a left-out image. Online: the rules, the Online flow's Sokoban format and its turn texts. The
official Global flow has no text for an unusable reply; the Online flow's stands in for it, sent
only by the labelled parse-retry option.
"""
from __future__ import annotations

from evaluators.agents.checkout import ONLINE_FLOW, OfficialCheckout, build_prompt_set
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, PromptSet

ENV_FILE = "env/sokoban_env.py"
ENV_CLASS = "SokobanEnv"
TASK = "Sokoban"


def official_prompt_set(checkout: OfficialCheckout, flow: str) -> PromptSet | None:
    """The texts the official harness sends to a model playing Sokoban in ``flow``."""
    if flow not in (FLOW_GLOBAL, FLOW_ONLINE):
        return None
    system = checkout.returned_text(ENV_FILE, ENV_CLASS, "system_prompt")
    # Official Sokoban frames come without a text ("" here); one put before them is read like Football's.
    lead = checkout.frame_lead(ENV_FILE, ENV_CLASS, ["__init__", "take_action"])
    if flow == FLOW_GLOBAL:
        return checkout.global_prompt_set(system, TASK, observation_lead=lead)
    online = checkout.online_flow
    return build_prompt_set(
        system=system,
        format_instruction=checkout.task_text(ONLINE_FLOW, "OnlinePlan", "special_prompt_for_task", TASK),
        first_turn=online.first_turn,
        next_turn=online.next_turn,
        regenerate=online.regenerate,
        unavailable_image=online.unavailable_image,
        observation_lead=lead,
    )
