"""What rendering a WebUI page produces: its states and result, the ways a page fails, and the
caps on what a hostile page can make the renderer record."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import ViewportSize

from evaluators.webui.clock import ClockKind
from evaluators.webui.elements import PageState
from evaluators.webui.options import OFFICIAL_VIEWPORT_HEIGHT

VIEWPORT: ViewportSize = {"width": 1920, "height": OFFICIAL_VIEWPORT_HEIGHT}
#: Caps that keep a hostile page from growing the records without bound.
MAX_RECORDS = 500
MAX_MESSAGE_CHARS = 2000


class PageUnresponsive(Exception):
    """The page stopped answering (or crashed) and was killed."""


class PageCrashed(PageUnresponsive):
    """The page's renderer crashed, or the page or its browser was closed under it."""


class PageLoadError(Exception):
    """The page could not be loaded (missing index.html, navigation failure, load timeout)."""


class PageReadError(Exception):
    """A state could not be read: the page broke what extraction relies on (say, JSON.stringify)."""


@dataclass
class RenderedState(PageState):
    """A :class:`PageState` plus ``dom``: xpath → outerHTML of *every* ``<body>`` descendant,
    hidden ones included, which the official evaluator compares to tell what an action changed."""

    dom: dict[str, str] | None = None


@dataclass
class RenderResult:
    states: list[RenderedState]
    #: Why the page has no states at all (no index.html, navigation failed, load hung).
    load_error: str | None = None
    blocked_urls: list[str] = field(default_factory=list)
    #: Files inside the page folder that the page asked for and that do not exist (file URLs).
    missing_files: list[str] = field(default_factory=list)
    #: Uncaught exceptions ("Name: message"), in order, for the whole render.
    page_errors: list[str] = field(default_factory=list)
    #: The uncaught exceptions raised before the origin state was read.
    page_errors_on_load: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    #: Selenium calls the facade cannot run (a platform limitation, not the page's fault).
    unsupported_calls: list[str] = field(default_factory=list)
    #: The page stopped responding (or crashed) and was killed; later actions did not run.
    unresponsive: bool = False
    #: The memory or CPU limit the page went past (it was killed; ``load_error`` says the same).
    resource_error: str | None = None
    #: The isolation layers of the browser that rendered the page (``Isolation.describe``).
    isolation: str = ""
    #: The time the states were read in: the clock asked for, or "real" after a fallback.
    clock: ClockKind = "virtual"
    #: Why the page was rendered again on the real clock (the virtual clock gave up on it), if it was.
    clock_fallback: str | None = None
    #: The viewport's height in CSS pixels (its width is 1920).
    viewport_height: int = VIEWPORT["height"]
    trace_path: Path | None = None
    seconds: float = 0.0


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, without Playwright's call log, capped."""
    text = exc.message if isinstance(exc, PlaywrightError) else str(exc)
    text = text.split("Call log:")[0].strip()
    return (text.splitlines()[0] if text else "")[:MAX_MESSAGE_CHARS]


def describe(exc: BaseException) -> str:
    """``"<Exception>: message"``, as a state's ``action_error`` records it."""
    return f"{type(exc).__name__}: {first_line(exc)}".rstrip(": ")


def append_capped(records: list[str], text: str) -> None:
    """Add ``text`` to ``records`` unless they are full; a long text is cut."""
    if len(records) < MAX_RECORDS:
        records.append(text[:MAX_MESSAGE_CHARS])
