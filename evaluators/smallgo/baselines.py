"""How the baseline agents play Small Go: idle passes, random names points at random (from the
largest board: a point off a smaller one is a pass). Both read only what a model reads."""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from evaluators.base import BaselineOptions
from evaluators.baselines.agents import EnvironmentProfile, play_actions

from .board import ACTIONS, PASS
from .prompts import OPENING

PROFILE = EnvironmentProfile("smallgo", ACTIONS, lambda text: OPENING in text, idle_action=PASS)


def baseline_reply(agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random,
                   options: BaselineOptions) -> str | None:
    return play_actions(PROFILE, agent, messages, rng, options)
