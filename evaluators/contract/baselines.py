"""What the baseline agents do in an environment, and what the demo runs there."""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from evaluators.declarations import BaselineOptions, DemoBaselines


class BaselineDeclarations:
    #: The baseline agents (``evaluators.baselines``) that mean something here.
    baseline_agents: ClassVar[tuple[str, ...]] = ("idle", "random")
    #: Baselines that read no image here, where skipping the frames loses nothing.
    text_only_baselines: ClassVar[tuple[str, ...]] = ()
    #: What a baseline agent does here, where that needs saying (``submit_baselines``' help).
    baseline_notes: ClassVar[Mapping[str, str]] = {}
    #: What the demo's baseline runs fill here (``submit_baselines`` without ``--env``).
    demo_baselines: ClassVar[DemoBaselines] = DemoBaselines()

    def baseline_reply(self, agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random,
                       options: BaselineOptions) -> str | None:
        """What the baseline ``agent`` (idle, random, oracle or degraded) answers to a chat request of
        this environment; None when the request is not this environment's (evaluators.baselines.agents
        asks every plug-in, and answers what none claims without acting).

        Like the baselines, it reads only what a model reads: the request's messages. ``rng`` is
        the agent's seeded generator; ``options`` is how the agent was built.
        """
        return None
