"""Rendering WebUI pages in headless Chromium: load, run the scripted actions, read every state.

A :class:`PageRenderer` owns one Chromium for the life of a worker process and opens each page in
a fresh browser context (the official run used two separate Chrome profiles for the target and
the generated page, so nothing — localStorage included — is shared). Viewport 1920×937 by default
(what the official harness's 1920×1080 window gives the page under today's headless Chromium;
``viewport_height=1080``: the paper-era headless mode, whose viewport was the whole window), screen
1920×1080, device scale 1, classic (space-taking) scrollbars as in the official headless Chrome.

Pages are untrusted code:

* the browser has no network at all (``evaluators.browser.launch_evaluation_chromium``: its own
  network namespace where the machine allows one, a dead proxy, no name resolution, WebRTC without
  UDP; ``RenderResult.isolation`` says which layers were in force);
* only files inside the page's own folder may load: every request, a worker's included, is
  routed, ``file://`` URLs inside the folder continue, everything else (http, https, ws, other
  paths) is aborted and its URL recorded in ``RenderResult.blocked_urls``, as are the WebSockets
  of workers (which no route sees, and which the missing network stops) and the STUN/TURN servers
  a page hands to WebRTC (removed before WebRTC sees them); ``data:`` and ``blob:`` URLs never
  leave the browser and are not routed;
* the main frame may only (re)load the page's own index.html (a form submit reloading it is
  fine); any other navigation is cancelled and recorded, the current document stays;
* popups are closed, downloads refused, service workers blocked;
* a page may hold at most ``page_memory_mb`` of resident memory and ``page_cpu_seconds`` of CPU
  time in its renderer process: past either it is killed and the render ends with a
  ``load_error`` (and ``resource_error``) that names the limit, like any page that fails to render;
* a watchdog bounds every step: loading, each action (its own sleeps excluded from the budget),
  each state read and the final close. A page that stops answering (an infinite loop in a
  handler) has its renderer processes killed; if the browser itself stops answering it is
  killed too and relaunched for the next page. The failing step is reported, the worker lives.

Time: a page loads in real time; from its load event on it lives on the browser's virtual clock
(``evaluators.webui.clock``), so the settle after load (``settle_ms``) and every wait of an action
(``time.sleep``, pointer-move durations, a covered click's retries) move the page's timers, animation
frames, ``Date`` and CSS animations forward by exactly the time waited, at once; clicks and typing
happen while the clock stands still. ``clock="real"`` (the ``webui_real_time`` setting) waits in
wall-clock time instead; both give the same states. A page the virtual clock cannot run as real
time would (it waits for its clock in a busy loop, its timers cannot keep up, it breaks the clock:
see ``evaluators.webui.clock``) is rendered again from the start on the real clock; the result says
so (``clock``, ``clock_fallback``). The watchdog's budgets do not count a wait's nominal length as
work, on either clock, so a timer that loops forever during a sleep is still stopped, no later than
in real time.

States: ``origin`` after the load event (plus ``settle_ms``), then one per action, named by the
function. When an action raises, the state records ``action_error`` (``"<Exception>: message"``)
and is still read, so replays show what the page looked like; scoring treats it as the official
"action failed" (S = 0 for a generated page). Later actions still run, as the official evaluator
does on the generated page (on the target it aborts: the caller decides what a failing target
means). Only when the page stopped responding are later actions not run: their states carry
``action_error`` "not run: …" and no elements. A state the page made unreadable (it replaced
``JSON.stringify``, say) carries ``action_error`` "PageReadError: …" and no elements.

Elements are read in one ``evaluate`` per state: every displayed descendant of ``<body>`` whose box
has an area above 0.1 px², the box measured as chromedriver's Get Element Rect measures it (corner
from the bounding box, size from offsetWidth/offsetHeight; see ``js/extract_state.js``). "Displayed"
follows Selenium's ``is_displayed`` (the ``bot.dom.isShown`` atom, re-implemented): not
``display:none`` on itself or an ancestor, not ``visibility:hidden``/``collapse``, no
ancestor-or-self with opacity 0, a positive size (or a child with one), not entirely clipped away
by an ``overflow:hidden`` container or pushed to negative page coordinates; ``<option>`` follows
its ``<select>``, hidden inputs and ``<noscript>`` never show. Colours of the seven colour
properties are reported as Selenium's ``value_of_css_property`` reports them
(``rgba(r, g, b, a)``); other values are ``getComputedStyle`` strings.

Measuring never writes to the page: reading a state and taking a screenshot leave the DOM and the
computed styles as they were, so a state scores the same with or without screenshots.

The parts live beside this module: ``live_page`` (one open page: its routes, records and steps),
``watchdog`` (the step deadlines), ``monitor`` (the memory and CPU caps), ``processes`` (finding
and killing the browser's processes), ``results`` (what a render returns and how a page fails),
``playwright_instance`` (the Playwright renderers share) and ``js/`` (the scripts run in the page).
"""
from __future__ import annotations

import contextlib
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from playwright.sync_api import Browser, Playwright, ViewportSize
from playwright.sync_api import Error as PlaywrightError

from evaluators.browser import evaluation_policy, launch_evaluation_chromium
from evaluators.webui import processes
from evaluators.webui.clock import CLOCKS, ClockKind
from evaluators.webui.live_page import LivePage
from evaluators.webui.monitor import ResourceMonitor
from evaluators.webui.options import OFFICIAL_VIEWPORT_HEIGHT, PAPER_VIEWPORT_HEIGHT
from evaluators.webui.playwright_instance import shared_playwright
from evaluators.webui.results import (
    VIEWPORT,
    PageCrashed,
    PageLoadError,
    PageReadError,
    PageUnresponsive,
    RenderedState,
    RenderResult,
    first_line,
)
from evaluators.webui.selenium_compat import is_fatal
from evaluators.webui.watchdog import Watchdog

log = logging.getLogger(__name__)

#: The viewport heights a render may ask for: what the official harness's 1920×1080 window leaves
#: for the page under today's headless Chromium (the default), and the paper-era whole window.
VIEWPORT_HEIGHTS = (OFFICIAL_VIEWPORT_HEIGHT, PAPER_VIEWPORT_HEIGHT)
#: The screen the page sees (window.screen): the official harness's 1920×1080 window fits in it.
SCREEN: ViewportSize = {"width": 1920, "height": 1080}

#: How element boxes are measured. "webdriver" is what the official evaluator reads through
#: Selenium's ``element.rect`` (see ``js/extract_state.js``); "bounding-box" takes the size from
#: getBoundingClientRect instead, kept only to measure what the official sizes change.
Geometry = Literal["webdriver", "bounding-box"]
GEOMETRIES: tuple[Geometry, ...] = ("webdriver", "bounding-box")


class PageRenderer:
    """One Chromium, reused; a fresh context per page. Use from the thread that created it."""

    def __init__(self, *, playwright: Playwright | None = None, action_timeout: float = 15.0,
                 load_timeout: float = 20.0, extract_timeout: float = 30.0, kill_grace: float = 5.0,
                 geometry: Geometry = "webdriver", page_memory_mb: int | None = None,
                 page_cpu_seconds: float | None = None, network_namespace: bool = True,
                 clock: ClockKind = "virtual", viewport_height: int = VIEWPORT["height"]) -> None:
        if geometry not in GEOMETRIES:
            raise ValueError(f"unknown geometry {geometry!r}; expected one of {', '.join(GEOMETRIES)}")
        if clock not in CLOCKS:
            raise ValueError(f"unknown clock {clock!r}; expected one of {', '.join(CLOCKS)}")
        if viewport_height not in VIEWPORT_HEIGHTS:
            raise ValueError(f"unknown viewport height {viewport_height!r}; expected one of "
                             f"{', '.join(map(str, VIEWPORT_HEIGHTS))}")
        #: The clock pages run on unless a render asks for another (see evaluators.webui.clock).
        self.clock: ClockKind = clock
        #: The viewport height pages get unless a render asks for another (``VIEWPORT_HEIGHTS``).
        self.viewport_height = viewport_height
        policy = evaluation_policy()
        self.page_memory_mb = page_memory_mb or policy.page_memory_mb
        self.page_cpu_seconds = page_cpu_seconds or policy.page_cpu_seconds
        #: False: the flag layer alone, no network namespace (see launch_evaluation_chromium).
        self.network_namespace = network_namespace
        #: The isolation of the current browser ("" before the first page).
        self.isolation = ""
        self._playwright = playwright
        self.geometry = geometry
        self.action_timeout = action_timeout
        self.load_timeout = load_timeout
        self.extract_timeout = extract_timeout
        self._browser: Browser | None = None
        #: The browser's process, by pid and start time: after it exits, its pid may be another's.
        self._browser_process: processes.ProcessRecord | None = None
        self._token = ""
        self._discard = False
        self.watchdog = Watchdog(self._escalate, kill_grace)
        self.monitor = ResourceMonitor(self.page_memory_mb, self.page_cpu_seconds)

    # --- browser lifecycle -------------------------------------------------------------------

    def _ensure_browser(self) -> Browser:
        if self._browser is not None and (self._discard or not self._browser.is_connected()):
            self._close_browser()
        if self._browser is None:
            playwright = self._playwright or shared_playwright()
            self._token = uuid.uuid4().hex
            # Playwright hides scrollbars in headless mode; the official headless Chrome did not,
            # and a vertical scrollbar takes 15 px of layout width (1905 px wide pages).
            self._browser, isolation = launch_evaluation_chromium(
                playwright, env={**os.environ, processes.TOKEN_VARIABLE: self._token},
                js_heap_mb=self.page_memory_mb + ResourceMonitor.MEMORY_MARGIN_MB,
                network_namespace=self.network_namespace, ignore_default_args=["--hide-scrollbars"])
            self.isolation = isolation.describe()
            self._browser_process = processes.browser_process(self._token)
            self._discard = False
        return self._browser

    @property
    def browser_pid(self) -> int | None:
        """The Chromium browser process in use (None before the first page)."""
        return self._browser_process.pid if self._browser_process is not None else None

    @property
    def browser_version(self) -> str:
        """The version of the Chromium in use ("" before the first page)."""
        with contextlib.suppress(Exception):
            return self._browser.version if self._browser is not None else ""
        return ""

    def launched_browser_version(self) -> str:
        """The version of the Chromium pages are rendered in, launching it first if need be."""
        self._ensure_browser()
        return self.browser_version

    def discard_browser(self) -> None:
        """Relaunch Chromium before the next page (after it stopped answering)."""
        self._discard = True

    def _escalate(self, stage: int) -> None:
        browser = self._browser_process
        if browser is None:
            log.error("a page stopped responding and its Chromium process is unknown; cannot stop it")
            return
        if stage == 1:
            renderers = processes.renderer_processes(browser)
            log.warning("a page stopped responding: killing its renderer processes %s",
                        [renderer.pid for renderer in renderers])
            processes.kill(renderers)
        else:
            log.warning("Chromium stopped responding: killing the browser (pid %s)", browser.pid)
            self._discard = True
            browser.kill()

    @contextlib.contextmanager
    def guarded(self, seconds: float, what: str) -> Iterator[None]:
        """Bound a step: if it overruns, the page (then the browser) is killed and
        :class:`PageUnresponsive` raised."""
        overran = f"{what} did not finish within {seconds:g} s; the page was stopped"
        with self.watchdog.guard(seconds):
            try:
                yield
            except Exception as exc:
                if self.watchdog.fired:
                    raise PageUnresponsive(overran) from exc
                if is_fatal(exc):
                    raise PageCrashed(
                        f"{what} failed: the page crashed or was closed ({first_line(exc)})") from exc
                raise
        if self.watchdog.fired:
            raise PageUnresponsive(overran)

    def _close_browser(self) -> None:
        """Close the browser, and stop watching its processes: their pids are free for others now."""
        self.monitor.forget(self._browser_process)
        self._browser_process = None
        if self._browser is not None:
            with contextlib.suppress(Exception):
                self._browser.close()
            self._browser = None

    def close(self) -> None:
        """Stop the watchdog and the monitor, and close the browser."""
        self.watchdog.close()
        self.monitor.close()
        self._close_browser()

    def __enter__(self) -> PageRenderer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- pages -------------------------------------------------------------------------------

    def _new_page(self, page_dir: Path, *, trace: bool, clock: ClockKind | None = None,
                  viewport_height: int | None = None) -> LivePage:
        try:
            return self._new_page_once(page_dir, trace=trace, clock=clock, viewport_height=viewport_height)
        except PageCrashed as exc:
            # Nothing of the page has run yet (its index.html loads later), so a blank tab that crashed
            # is the browser's failure: open it again in a fresh browser rather than fail the attempt.
            log.warning("a blank page crashed while opening, relaunching the browser: %s", exc)
            self._discard = True
            return self._new_page_once(page_dir, trace=trace, clock=clock, viewport_height=viewport_height)

    def _new_page_once(self, page_dir: Path, *, trace: bool, clock: ClockKind | None,
                       viewport_height: int | None) -> LivePage:
        browser = self._ensure_browser()
        self.monitor.begin(self._browser_process)
        try:
            return self._open_context(browser, page_dir, trace=trace, clock=clock or self.clock,
                                      viewport_height=viewport_height or self.viewport_height)
        except BaseException:
            self.monitor.end()
            raise

    def _open_context(self, browser: Browser, page_dir: Path, *, trace: bool, clock: ClockKind,
                      viewport_height: int) -> LivePage:
        if viewport_height not in VIEWPORT_HEIGHTS:
            raise ValueError(f"unknown viewport height {viewport_height!r}; expected one of "
                             f"{', '.join(map(str, VIEWPORT_HEIGHTS))}")
        viewport: ViewportSize = {"width": VIEWPORT["width"], "height": viewport_height}
        with self.guarded(30.0, "opening a browser context"):
            context = browser.new_context(viewport=viewport, screen=SCREEN, device_scale_factor=1,
                                          service_workers="block", accept_downloads=False, locale="en-US")
            try:
                context.set_default_timeout(self.extract_timeout * 1000)
                if trace:
                    # DOM snapshots only: the trace viewer re-renders each action's page from them, and
                    # the replay has each state's screenshot. A screencast film strip cost about a
                    # sixth of an attempt's CPU (Chromium encodes a JPEG for every painted frame).
                    context.tracing.start(screenshots=False, snapshots=True)
                return LivePage(self, context, page_dir, clock)
            except BaseException:
                with contextlib.suppress(PlaywrightError):
                    context.close()
                raise

    @contextlib.contextmanager
    def open_page(self, page_dir: Path, *, settle_ms: int = 0, trace_path: Path | None = None,
                  clock: ClockKind | None = None, viewport_height: int | None = None) -> Iterator[LivePage]:
        """A loaded page to drive by hand (``live.driver``); raises :class:`PageLoadError`.

        A page that leaves the virtual clock goes on in real time (``live.clock.fallback`` says why)."""
        live = self._new_page(Path(page_dir), trace=trace_path is not None, clock=clock,
                              viewport_height=viewport_height)
        try:
            live.load(settle_ms)
            yield live
        finally:
            live.close(trace_path)

    def render_states(self, page_dir: Path, actions: Sequence[Callable[[Any], object]], *,
                      screenshots: bool = True, trace_path: Path | None = None,
                      settle_ms: int = 300, clock: ClockKind | None = None,
                      viewport_height: int | None = None) -> RenderResult:
        """Load ``page_dir/index.html``, read the origin state, then run each action and read
        the state it leaves (see the module docstring for failures and what is read).
        ``clock``: the time the page lives in (the renderer's own when None); a page that leaves
        the virtual clock is rendered again on the real one (``clock_fallback`` says why).
        ``viewport_height``: one of ``VIEWPORT_HEIGHTS`` (the renderer's own when None)."""
        options: dict[str, Any] = {"screenshots": screenshots, "trace_path": trace_path, "settle_ms": settle_ms,
                                   "viewport_height": viewport_height or self.viewport_height}
        result = self._render_page(Path(page_dir), actions, clock=clock or self.clock, **options)
        if result.clock_fallback is None:
            return result
        # The states read so far mix two clocks: the whole page again, on the real clock.
        log.warning("rendering %s again on the real clock: %s", page_dir, result.clock_fallback)
        again = self._render_page(Path(page_dir), actions, clock="real", **options)
        again.clock_fallback = result.clock_fallback
        again.seconds += result.seconds
        return again

    def _render_page(self, page_dir: Path, actions: Sequence[Callable[[Any], object]], *, screenshots: bool,
                     trace_path: Path | None, settle_ms: int, clock: ClockKind,
                     viewport_height: int) -> RenderResult:
        started = time.monotonic()
        result = RenderResult(states=[], clock=clock, viewport_height=viewport_height)
        if not (page_dir / "index.html").is_file():
            result.load_error = f"index.html not found in {page_dir}"
            result.seconds = time.monotonic() - started
            return result
        live = self._new_page(page_dir, trace=trace_path is not None, clock=clock, viewport_height=viewport_height)
        live.clock.discard_after_fallback = True  # after a fallback the page is rendered again
        try:
            self._render(live, actions, result, screenshots=screenshots, settle_ms=settle_ms)
        finally:
            result.trace_path = live.close(trace_path)
            result.isolation = self.isolation
            result.clock_fallback = live.clock.fallback
            if live.resource_error is not None:
                # a page past its limits is a failed render, whatever it showed before it was stopped
                result.resource_error = result.load_error = live.resource_error
                result.unresponsive = True
            result.blocked_urls = list(live.blocked_urls)
            result.missing_files = list(live.missing_files)
            result.page_errors = list(live.page_errors)
            result.console_errors = list(live.console_errors)
            result.unsupported_calls = list(live.unsupported_calls)
            result.seconds = time.monotonic() - started
        return result

    def _render(self, live: LivePage, actions: Sequence[Callable[[Any], object]], result: RenderResult, *,
                screenshots: bool, settle_ms: int) -> None:
        try:
            live.load(settle_ms)
            if live.clock.fallback is not None:
                return  # rendered again on the real clock
            result.page_errors_on_load = list(live.page_errors)
            result.states.append(live.capture("origin", None, screenshots))
        except (PageLoadError, PageReadError) as exc:
            result.load_error = str(exc)
            return
        except PageUnresponsive as exc:
            result.load_error, result.unresponsive = str(exc), True
            return
        stopped: str | None = None
        for action in actions:
            name = getattr(action, "__name__", repr(action))
            if stopped is not None:
                result.states.append(RenderedState(name=name, elements=[], action_error=stopped))
                continue
            error: str | None = None
            try:
                error = live.run_action(action)
                if live.clock.fallback is not None:
                    return  # rendered again on the real clock
                result.states.append(live.capture(name, error, screenshots))
            except PageReadError as exc:
                # scored like a failed action: the page broke what the state is read with
                result.states.append(RenderedState(name=name, elements=[],
                                                   action_error=error or f"PageReadError: {exc}"))
            except PageUnresponsive as exc:
                result.unresponsive = True
                stopped = f"not run: the page stopped responding during {name!r}"
                result.states.append(RenderedState(name=name, elements=[],
                                                   action_error=f"PageUnresponsive: {exc}"))
