"""WebUI's own settings: declared for the platform's checks, read back typed by the episode."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evaluators.base import SettingOption
from evaluators.settings import EvaluationSettings

if TYPE_CHECKING:  # the clock module loads Playwright, which the site's own processes need not
    from evaluators.webui.clock import ClockKind

#: The submission setting that selects the labelled metric variant (false: official).
EXCLUDE_UNCHANGED_SETTING = "webui_exclude_unchanged"
#: The setting that renders pages in wall-clock time instead of the browser's virtual clock.
REAL_TIME_SETTING = "webui_real_time"

OPTIONS: dict[str, SettingOption] = {
    # True leaves out target elements an action left unchanged (what the official code intends; its
    # own test never succeeds, see evaluators.webui.aes); false, the official metric, scores every
    # element in every state.
    EXCLUDE_UNCHANGED_SETTING: SettingOption(bool, False, variant=True),
    # True renders every page in wall-clock time, each scripted sleep a real wait, as the official
    # run did; false, the default, advances the browser's virtual clock instead
    # (evaluators.webui.clock). Not a variant: both give the same states and the same scores, real
    # time only takes longer. A yes/no rather than a named clock, so no misspelt value gets through.
    REAL_TIME_SETTING: SettingOption(bool, False),
}


@dataclass(frozen=True)
class WebUIOptions:
    exclude_unchanged: bool
    #: The time pages are rendered in.
    clock: ClockKind = "virtual"

    @classmethod
    def of(cls, settings: EvaluationSettings) -> WebUIOptions:
        # Settings of another environment carry none of these: they read as the defaults.
        values = {name: settings.options.get(name, option.default) for name, option in OPTIONS.items()}
        return cls(exclude_unchanged=bool(values[EXCLUDE_UNCHANGED_SETTING]),
                   clock="real" if values[REAL_TIME_SETTING] else "virtual")
