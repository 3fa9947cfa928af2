"""One WebUI page open in its own browser context: what it may load, what it records, and the steps
that drive it (load, actions, state reads, screenshots, close). :class:`PageRenderer` opens it."""
from __future__ import annotations

import base64
import contextlib
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from playwright.sync_api import BrowserContext, ConsoleMessage, Page, Request, Route
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from evaluators.webui.clock import ClockKind, PageClock, page_clock
from evaluators.webui.elements import CSS_PROPERTIES, Element
from evaluators.webui.results import (
    MAX_MESSAGE_CHARS,
    PageLoadError,
    PageReadError,
    PageUnresponsive,
    RenderedState,
    append_capped,
    describe,
    first_line,
)
from evaluators.webui.selenium_compat import CompatDriver, UnsupportedSeleniumCall, cooperative_sleep, is_fatal
from evaluators.webui.selenium_compat._dom import HELPERS

if TYPE_CHECKING:
    from evaluators.webui.render import PageRenderer

log = logging.getLogger(__name__)

#: How long after a form submit a read waits for the new document's request to show up.
NAVIGATION_START_GRACE_SECONDS = 1.0

#: The function through which the page's guards report what they took away.
_REPORT_BINDING = "__magebenchBlocked"

_SCRIPTS = Path(__file__).with_name("js")
#: One evaluate reads a whole state; the body (js/extract_state.js) uses the Selenium helpers ``H``.
_EXTRACT_JS = "(args) => {" + HELPERS + "\n" + (_SCRIPTS / "extract_state.js").read_text(encoding="utf-8") + "}"
#: Runs in every page before the page's own scripts (js/webrtc_guard.js says why).
_WEBRTC_GUARD_JS = (_SCRIPTS / "webrtc_guard.js").read_text(encoding="utf-8").replace("__REPORT_BINDING__",
                                                                                    _REPORT_BINDING)


def _element(index: int, raw: dict[str, Any], dom: dict[str, str]) -> Element:
    """An element as the extraction script reported it."""
    x, y, width, height = (float(v) for v in raw["rect"])
    return Element(index=index, tag=str(raw["tag"]), rect=(x, y, width, height), text=str(raw["text"]),
                   attributes=dict(raw["attributes"]), styles=dict(raw["styles"]),
                   descendants=int(raw["descendants"]), outer_html=str(dom.get(raw["xpath"], "")),
                   xpath=str(raw["xpath"]))


class LivePage:
    """A page loaded in its own context, with its driver and what the renderer recorded."""

    def __init__(self, renderer: PageRenderer, context: BrowserContext, page_dir: Path,
                 clock: ClockKind = "virtual") -> None:
        self.renderer = renderer
        self.context = context
        self.page_dir = page_dir.resolve()
        self.index = self.page_dir / "index.html"
        self.blocked_urls: list[str] = []
        self.missing_files: list[str] = []
        self.page_errors: list[str] = []
        self.console_errors: list[str] = []
        self.unsupported_calls: list[str] = []
        #: The memory or CPU limit the page went past (known once the page is closed).
        self.resource_error: str | None = None
        self.crashed = False
        #: A main-frame (re)load of index.html is under way (set when routed, cleared on load).
        self.navigating = False
        #: Until when a navigation a command started (a form submit) may still be on its way to
        #: the route handler; a submit that navigates no top-level document costs at most this wait.
        self.navigation_expected_until = 0.0
        #: The document said it is leaving (its ``navigate`` event), and no request for the next
        #: document has reached the route yet: a busy browser may take seconds to send it.
        self.navigation_announced = False
        self._errors_for_state: list[str] = []
        context.route("**/*", self._route)
        context.route_web_socket("**/*", self._route_web_socket)
        context.expose_binding(_REPORT_BINDING, self._on_reported)
        context.add_init_script(_WEBRTC_GUARD_JS)
        self.page: Page = context.new_page()
        #: A DevTools session on the page: its animation timeline and its screenshots.
        self.cdp = context.new_cdp_session(self.page)
        #: The time the page lives in; waits (the settle, the actions' sleeps) go through it.
        self.clock: PageClock = page_clock(clock, context, self.page, self.cdp, settle=self.wait_for_navigation,
                                           expect_navigation=self._expect_pending_navigation)
        # A worker's WebSocket passes no route; it is seen here, and the missing network stops it.
        self.page.on("websocket", self._on_web_socket)
        self.page.on("pageerror", self._on_page_error)
        self.page.on("console", self._on_console)
        self.page.on("crash", self._on_crash)
        self.page.on("load", self._on_load)
        self.page.on("requestfailed", self._on_request_failed)
        context.on("page", self._on_popup)
        self.driver = CompatDriver(self.page)
        self.driver.before_command = self.wait_for_navigation
        self.driver.on_navigation_started = self._expect_navigation
        self.driver.sleeper = self.clock.sleep

    # --- what the page may load --------------------------------------------------------------

    def _inside(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
            return False
        try:
            Path(url2pathname(parts.path)).resolve().relative_to(self.page_dir)
        except (ValueError, OSError):
            return False
        return True

    def _is_index(self, url: str) -> bool:
        parts = urlsplit(url)
        return self._inside(url) and Path(url2pathname(parts.path)).resolve() == self.index.resolve()

    def _block(self, url: str) -> None:
        if url not in self.blocked_urls:
            append_capped(self.blocked_urls, url)

    def _route(self, route: Route) -> None:
        request: Request = route.request
        url = request.url
        try:
            navigation = request.is_navigation_request() and request.frame.parent_frame is None
        except PlaywrightError:
            navigation = False
        with contextlib.suppress(PlaywrightError):  # the page may be closing meanwhile
            if navigation:
                if self._is_index(url):
                    if request.frame.page is self.page:
                        self.navigating = True
                        self.navigation_expected_until = 0.0
                        self.navigation_announced = False
                    route.continue_()
                else:
                    self._block(url)
                    if request.frame.page is self.page:
                        self.navigation_expected_until = 0.0  # refused: no new document to wait for
                        self.navigation_announced = False
                    route.abort("aborted")  # an aborted navigation leaves the current document in place
            elif self._inside(url):
                route.continue_()
            else:
                self._block(url)
                route.abort("blockedbyclient")

    def _route_web_socket(self, socket: Any) -> None:
        self._block(socket.url)
        with contextlib.suppress(PlaywrightError):
            socket.close(code=1008, reason="blocked")

    def _on_web_socket(self, socket: Any) -> None:
        self._block(socket.url)

    def _on_reported(self, _source: Any, url: object) -> None:
        self._block(str(url)[:MAX_MESSAGE_CHARS])

    def _on_page_error(self, error: PlaywrightError) -> None:
        text = f"{getattr(error, 'name', '') or 'Error'}: {error.message}"
        append_capped(self.page_errors, text)
        append_capped(self._errors_for_state, f"Uncaught {text}")

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            append_capped(self.console_errors, message.text)
            append_capped(self._errors_for_state, message.text)

    def _on_crash(self, _page: Page) -> None:
        self.crashed = True

    def _on_load(self, _page: Page) -> None:
        self.navigating = False
        self.navigation_expected_until = 0.0
        self.navigation_announced = False
        self.clock.document_loaded()

    def _expect_navigation(self) -> None:
        self.navigation_expected_until = time.monotonic() + NAVIGATION_START_GRACE_SECONDS

    def _expect_pending_navigation(self) -> None:
        """The document started leaving: unless its request was already seen, it is on its way,
        however long the browser takes to send it (the route or the load ends the wait)."""
        if not self.navigating:
            self.navigation_announced = True

    def _on_request_failed(self, request: Request) -> None:
        with contextlib.suppress(PlaywrightError):
            if request.is_navigation_request() and request.frame.parent_frame is None:
                self.navigating = False
            failure = request.failure or ""
            if "FILE_NOT_FOUND" in failure and self._inside(request.url) and request.url not in self.missing_files:
                append_capped(self.missing_files, request.url)

    def wait_for_navigation(self) -> None:
        """Let a pending reload finish before the next command or read, as chromedriver does
        before each command (a submit followed by a lookup finds the new document)."""
        deadline = time.monotonic() + self.renderer.load_timeout
        while ((self.navigating or self.navigation_announced or time.monotonic() < self.navigation_expected_until)
               and not self.crashed and time.monotonic() < deadline):
            self.page.wait_for_timeout(20)
        self.navigation_expected_until = 0.0
        self.navigation_announced = False
        self.clock.sync()

    def _on_popup(self, popup: Page) -> None:
        if popup is not self.page:
            with contextlib.suppress(PlaywrightError):
                popup.close()

    # --- steps -------------------------------------------------------------------------------

    def load(self, settle_ms: int = 0) -> None:
        """Load index.html, then let the page settle ``settle_ms`` on its clock."""
        if not self.index.is_file():
            raise PageLoadError(f"index.html not found in {self.page_dir}")
        timeout = self.renderer.load_timeout
        with self.renderer.guarded(timeout + settle_ms / 1000 + 5, "loading the page"):
            try:
                self.page.goto(self.index.as_uri(), wait_until="load", timeout=timeout * 1000)
            except PlaywrightTimeoutError as exc:
                raise PageLoadError(f"the page did not finish loading within {timeout:g} s") from exc
            except PlaywrightError as exc:
                if is_fatal(exc):
                    raise
                raise PageLoadError(f"navigation failed: {first_line(exc)}") from exc
            # the document loaded in real time; from here on its time is the clock's
            self.clock.document_loaded()
            self.clock.sync()
            if settle_ms > 0:
                self.clock.sleep(settle_ms / 1000)
            self.clock.check()

    def read(self) -> tuple[list[Element], dict[str, str]]:
        """Every displayed element, and xpath → outerHTML of every body descendant."""
        with self.renderer.guarded(self.renderer.extract_timeout, "reading the page"):
            for attempt in range(2):
                try:
                    self.wait_for_navigation()
                    self.page.wait_for_load_state("load")
                    text = self.page.evaluate(_EXTRACT_JS, {"props": list(CSS_PROPERTIES),
                                                              "boundingBox": self.renderer.geometry == "bounding-box"})
                    break
                except PlaywrightError as exc:
                    if is_fatal(exc):
                        raise
                    # a submit or reload can replace the document between two calls: read the new one
                    if attempt or "context was destroyed" not in exc.message:
                        raise PageReadError(f"the page could not be read: {first_line(exc)}") from exc
        try:
            raw = json.loads(text)
            dom: dict[str, str] = raw["dom"]
            elements = [_element(i, e, dom) for i, e in enumerate(raw["elements"])]
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise PageReadError(f"the page returned an unreadable state ({type(exc).__name__}: {exc})") from exc
        return elements, dom

    def elements(self) -> list[Element]:
        """Every displayed element."""
        return self.read()[0]

    def screenshot(self) -> bytes | None:
        """A PNG of the viewport, or None when the browser could not take one."""
        with self.renderer.guarded(self.renderer.extract_timeout, "taking a screenshot"):
            try:
                # The protocol's own capture of the viewport, as chromedriver takes it: nothing is
                # written to the page (Playwright's default would hide the caret with an inline style,
                # leaving style="" on inputs), and the PNG is encoded for speed (the same pixels as
                # Playwright's screenshot, a larger file, in about half the time).
                shot = self.cdp.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
                return base64.b64decode(shot["data"])
            except PlaywrightError as exc:
                if is_fatal(exc):
                    raise
                log.warning("screenshot failed: %s", first_line(exc))
                return None

    def capture(self, name: str, action_error: str | None, screenshot: bool) -> RenderedState:
        """The state named ``name``, with the errors the page logged since the previous one."""
        elements, dom = self.read()
        shot = self.screenshot() if screenshot else None
        errors, self._errors_for_state = self._errors_for_state, []
        return RenderedState(name=name, elements=elements, action_error=action_error, screenshot=shot,
                             console_errors=errors, dom=dom)

    def run_action(self, action: Callable[[Any], object]) -> str | None:
        """Run one scripted action; the error text if it raised, None if it did not.

        Raises :class:`PageUnresponsive` when the page hung or crashed during the action.
        """
        name = getattr(action, "__name__", repr(action))
        driver = self.driver
        driver.on_wait = self.renderer.watchdog.extend
        error: str | None = None
        try:
            with cooperative_sleep(driver.wait), \
                    self.renderer.guarded(self.renderer.action_timeout, f"action {name!r}"):
                try:
                    action(driver)
                except UnsupportedSeleniumCall as exc:
                    append_capped(self.unsupported_calls, str(exc))
                    error = describe(exc)
                except (Exception, SystemExit) as exc:
                    if is_fatal(exc) or self.crashed:
                        raise PageUnresponsive(f"the page crashed during action {name!r}") from exc
                    error = describe(exc)
                self.clock.check()  # did the page leave the virtual clock (in a handler, say)?
            return error
        finally:
            driver.on_wait = None

    def close(self, trace_path: Path | None = None) -> Path | None:
        """Close the context (saving the trace to ``trace_path``); the trace's path if it was saved."""
        saved = None
        try:
            with self.renderer.guarded(30.0, "closing the page"):
                if trace_path is not None:
                    try:
                        trace_path.parent.mkdir(parents=True, exist_ok=True)
                        self.context.tracing.stop(path=str(trace_path))
                        saved = trace_path
                    except PlaywrightError as exc:
                        log.warning("could not save the Playwright trace: %s", first_line(exc))
                self.context.close()
        except (PlaywrightError, PageUnresponsive) as exc:
            log.warning("closing a page context failed: %s", first_line(exc))
            self.renderer.discard_browser()
        finally:
            self.resource_error = self.renderer.monitor.end()
        return saved
