"""How the baseline agents play Football: idle stands still, random presses any accepted action;
there is no oracle.

Like every baseline, they read only what a model reads: the request's texts.
"""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from evaluators.base import BaselineOptions
from evaluators.baselines.agents import EnvironmentProfile, play_actions
from evaluators.football.env import ACCEPTED_ACTIONS

# Matched loosely so a prompt worded by another harness is recognised as well as the platform's.
# A reply without an action consumes an Online turn without moving the game clock, so a silent
# agent would never finish an episode; action_release_sprint, with no sprint on, stands still.
PROFILE = EnvironmentProfile("football", ACCEPTED_ACTIONS,
                             lambda text: "football" in text.lower() and "action_" in text,
                             idle_action="action_release_sprint")


def baseline_reply(agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random,
                   options: BaselineOptions) -> str | None:
    """The reply of baseline ``agent`` to a Football request; None for any other request."""
    return play_actions(PROFILE, agent, messages, rng, options)
