"""WebUI's own settings: declared for the platform's checks, read back typed by the episode."""
from __future__ import annotations

from dataclasses import dataclass

from evaluators.base import SettingOption
from evaluators.settings import EvaluationSettings

#: The submission setting that selects the labelled metric variant (false: official).
EXCLUDE_UNCHANGED_SETTING = "webui_exclude_unchanged"

OPTIONS: dict[str, SettingOption] = {
    # True leaves out target elements an action left unchanged (what the official code intends; its
    # own test never succeeds, see evaluators.webui.aes); false, the official metric, scores every
    # element in every state.
    EXCLUDE_UNCHANGED_SETTING: SettingOption(bool, False, variant=True),
}


@dataclass(frozen=True)
class WebUIOptions:
    exclude_unchanged: bool

    @classmethod
    def of(cls, settings: EvaluationSettings) -> WebUIOptions:
        # Settings of another environment carry none of these: they read as the defaults.
        default = OPTIONS[EXCLUDE_UNCHANGED_SETTING].default
        return cls(exclude_unchanged=bool(settings.options.get(EXCLUDE_UNCHANGED_SETTING, default)))
