"""WebUI's own settings: declared for the platform's checks, read back typed by the episode."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evaluators.base import SettingOption
from evaluators.settings import EvaluationSettings
from evaluators.webui.online_variants import NATURAL, VARIANTS, OnlineVariant

if TYPE_CHECKING:  # the clock module loads Playwright, which the site's own processes need not
    from evaluators.webui.clock import ClockKind

#: The submission setting that selects the labelled metric variant (false: official).
EXCLUDE_UNCHANGED_SETTING = "webui_exclude_unchanged"
#: The setting that renders pages in wall-clock time instead of the browser's virtual clock.
REAL_TIME_SETTING = "webui_real_time"
#: The setting that renders pages in the paper-era 1920×1080 viewport instead of the official 1920×937.
VIEWPORT_1080_SETTING = "webui_viewport_1080"
#: The setting that picks which official WebUI Online flow the refinement rounds follow.
ONLINE_FLOW_SETTING = "webui_online_flow"
#: The viewport heights: the official harness's today (the default) and the paper's.
OFFICIAL_VIEWPORT_HEIGHT = 937
PAPER_VIEWPORT_HEIGHT = 1080

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
    # False, the default, renders both pages in a 1920×937 viewport: the official harness asks
    # Selenium for a 1920×1080 window, which under today's headless Chromium (Chrome 132 on) leaves
    # 937 px of it to the page, and the official evaluator as shipped scores exactly so. True gives
    # the page the whole 1920×1080, as the headless mode of the paper's time did and as the paper's
    # numbers were measured. A variant: it changes scores (measured on the metric card). A yes/no
    # for the one other height there is. Submissions stored before 937 became the default record
    # true (submissions/migrations/0018), so they keep reading as the 1080 they ran at.
    VIEWPORT_1080_SETTING: SettingOption(bool, False, variant=True),
    # Which of the official harness's WebUI Online flows the refinement rounds follow
    # (evaluators.webui.online_variants): natural, the one the paper's Online numbers were measured
    # with, is the default; the others are its ablations, each a labelled variant. Named values
    # rather than yes/no switches, because the four exclude one another.
    ONLINE_FLOW_SETTING: SettingOption(str, NATURAL, variant=True, choices=tuple(VARIANTS)),
}


@dataclass(frozen=True)
class WebUIOptions:
    exclude_unchanged: bool
    #: The time pages are rendered in.
    clock: ClockKind = "virtual"
    #: The height of the viewport both pages are rendered in (its width is 1920).
    viewport_height: int = OFFICIAL_VIEWPORT_HEIGHT
    #: The official Online flow the refinement rounds follow.
    online_flow: OnlineVariant = VARIANTS[NATURAL]

    @classmethod
    def of(cls, settings: EvaluationSettings) -> WebUIOptions:
        # Settings of another environment carry none of these: they read as the defaults.
        values = {name: settings.options.get(name, option.default) for name, option in OPTIONS.items()}
        return cls(exclude_unchanged=bool(values[EXCLUDE_UNCHANGED_SETTING]),
                   clock="real" if values[REAL_TIME_SETTING] else "virtual",
                   viewport_height=PAPER_VIEWPORT_HEIGHT if values[VIEWPORT_1080_SETTING] else OFFICIAL_VIEWPORT_HEIGHT,
                   online_flow=VARIANTS[str(values[ONLINE_FLOW_SETTING])])
