"""Football's own settings: declared for the platform's checks, read back typed by the episode."""
from __future__ import annotations

from dataclasses import dataclass

from evaluators.base import SettingOption
from evaluators.settings import EvaluationSettings

#: The submission setting that selects the labelled, non-default reward variant (false: official).
SHOT_HELD_SETTING = "football_shot_held_until_received"

# In this order a stored row lists them, as it did before they were declared here.
OPTIONS: dict[str, SettingOption] = {
    # The official decision rhythm; false plays one engine step per decision.
    "auto_render": SettingOption(bool, True),
    # True is the labelled reward variant in which a keeper's save after a shot is not a stolen ball
    # (evaluators/football/reward.py); false is the official rule.
    SHOT_HELD_SETTING: SettingOption(bool, False, variant=True),
}


@dataclass(frozen=True)
class FootballOptions:
    auto_render: bool
    shot_held_until_received: bool

    @classmethod
    def of(cls, settings: EvaluationSettings) -> FootballOptions:
        # Settings of another environment carry none of these: they read as the defaults.
        values = {name: settings.options.get(name, option.default) for name, option in OPTIONS.items()}
        return cls(auto_render=bool(values["auto_render"]), shot_held_until_received=bool(values[SHOT_HELD_SETTING]))
