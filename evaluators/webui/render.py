"""Rendering WebUI pages in headless Chromium: load, run the scripted actions, read every state.

A :class:`PageRenderer` owns one Chromium for the life of a worker process and opens each page in
a fresh browser context (the official run used two separate Chrome profiles for the target and
the generated page, so nothing — localStorage included — is shared). Viewport 1920×1080 by default
(``viewport_height=937``: what the official harness's 1920×1080 window gives under today's headless
Chromium), screen 1920×1080, device scale 1, classic (space-taking) scrollbars as in the official
headless Chrome.

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
from the bounding box, size from offsetWidth/offsetHeight; see ``_EXTRACT_JS``). "Displayed"
follows Selenium's ``is_displayed`` (the ``bot.dom.isShown`` atom, re-implemented): not
``display:none`` on itself or an ancestor, not ``visibility:hidden``/``collapse``, no
ancestor-or-self with opacity 0, a positive size (or a child with one), not entirely clipped away
by an ``overflow:hidden`` container or pushed to negative page coordinates; ``<option>`` follows
its ``<select>``, hidden inputs and ``<noscript>`` never show. Colours of the seven colour
properties are reported as Selenium's ``value_of_css_property`` reports them
(``rgba(r, g, b, a)``); other values are ``getComputedStyle`` strings.

Measuring never writes to the page: reading a state and taking a screenshot leave the DOM and the
computed styles as they were, so a state scores the same with or without screenshots.
"""
from __future__ import annotations

import atexit
import base64
import contextlib
import json
import logging
import math
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit
from urllib.request import url2pathname

import psutil
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Playwright,
    Request,
    Route,
    ViewportSize,
    sync_playwright,
)
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from evaluators.browser import evaluation_policy, launch_evaluation_chromium
from evaluators.webui.clock import CLOCKS, ClockKind, PageClock, page_clock
from evaluators.webui.elements import CSS_PROPERTIES, Element, PageState
from evaluators.webui.options import PAPER_VIEWPORT_HEIGHT, TODAY_VIEWPORT_HEIGHT
from evaluators.webui.selenium_compat import CompatDriver, UnsupportedSeleniumCall, cooperative_sleep, is_fatal
from evaluators.webui.selenium_compat._dom import HELPERS

log = logging.getLogger(__name__)

VIEWPORT: ViewportSize = {"width": 1920, "height": PAPER_VIEWPORT_HEIGHT}
#: The viewport heights a render may ask for: the paper-era window (the default), and what the
#: official harness's 1920×1080 window leaves for the page under today's headless Chromium.
VIEWPORT_HEIGHTS = (PAPER_VIEWPORT_HEIGHT, TODAY_VIEWPORT_HEIGHT)
#: The screen the page sees (window.screen): the official harness's 1920×1080 window fits in it.
SCREEN: ViewportSize = {"width": 1920, "height": 1080}
#: Caps that keep a hostile page from growing the records without bound.
MAX_RECORDS = 500
#: How long after a form submit a read waits for the new document's request to show up.
NAVIGATION_START_GRACE_SECONDS = 1.0
MAX_MESSAGE_CHARS = 2000
#: Environment variable that marks the Chromium processes a renderer launched (to find them).
_TOKEN_VARIABLE = "MAGEBENCH_PAGE_RENDERER"

#: How element boxes are measured. "webdriver" is what the official evaluator reads through
#: Selenium's ``element.rect`` (see ``_EXTRACT_JS``); "bounding-box" takes the size from
#: getBoundingClientRect instead, kept only to measure what the official sizes change.
Geometry = Literal["webdriver", "bounding-box"]
GEOMETRIES: tuple[Geometry, ...] = ("webdriver", "bounding-box")

# Boxes as chromedriver's Get Element Rect returns them (checked against chromedriver 156):
# x, y are the bounding box's top-left corner plus the page scroll, unrounded; width and height
# come from the GET_SIZE atom, i.e. offsetWidth/offsetHeight (whole layout pixels, transforms
# ignored) for HTML elements, and the bounding box's size for elements without offset sizes (SVG)
# or whose offset sizes are both 0. Selenium's Python ``rect`` passes these values on unrounded.
# The atom briefly restyles a display:none element to measure it; such elements are never
# "displayed", so their size is never used and is not measured here (nothing is written).
_EXTRACT_JS = "(args) => {" + HELPERS + r"""
  const props = args.props, boundingBox = args.boundingBox;
  const body = document.body;
  if (!body) return '{"elements": [], "dom": {}}';
  const elements = [];
  const dom = {};
  const sx = window.scrollX, sy = window.scrollY;
  const size = (el, r) => {
    if (boundingBox) return [r.width, r.height];
    const w = el.offsetWidth, h = el.offsetHeight;
    if (typeof w !== 'number' || typeof h !== 'number' || (w === 0 && h === 0)) return [r.width, r.height];
    return [w, h];
  };
  for (const el of body.getElementsByTagName('*')) {
    const path = H.xpath(el);
    dom[path] = el.outerHTML;
    const r = el.getBoundingClientRect();
    const [width, height] = size(el, r);
    if (!(width * height > 0.1) || !H.isShown(el, false)) continue;
    const styles = {};
    for (const name of props) styles[name] = H.cssValue(el, name);
    const attributes = {};
    for (const a of el.attributes) attributes[a.name] = a.value;
    elements.push({ tag: el.tagName.toLowerCase(), rect: [r.left + sx, r.top + sy, width, height],
      text: H.visibleText(el), attributes, styles, descendants: el.getElementsByTagName('*').length, xpath: path });
  }
  // one string: Playwright serializes a large object value by value, JSON text in one piece
  return JSON.stringify({ elements, dom });
}"""


#: The function through which the page's guards report what they took away (see below).
_REPORT_BINDING = "__magebenchBlocked"

# WebRTC reaches its STUN and TURN servers from the network stack, where no route sees it: the
# servers a page names are recorded and removed before WebRTC gets them (the missing network and
# the WebRTC flags stop them anyway; this is what makes the attempt visible in the record).
_WEBRTC_GUARD_JS = """(() => {
  const Original = window.RTCPeerConnection;
  if (typeof Original !== 'function') return;
  const report = (config) => {
    try {
      for (const server of (config && config.iceServers) || [])
        for (const url of [].concat(server.urls || server.url || [])) window.%s(String(url));
    } catch (e) {}
  };
  const strip = (config) => (config && config.iceServers) ? Object.assign({}, config, {iceServers: []}) : config;
  const setConfiguration = Original.prototype.setConfiguration;
  Original.prototype.setConfiguration = function (config) {
    report(config);
    return setConfiguration.call(this, strip(config));
  };
  const Guarded = new Proxy(Original, {construct(target, args, newTarget) {
    report(args[0]);
    return Reflect.construct(target, [strip(args[0]), ...args.slice(1)], newTarget);
  }});
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection'])
    if (window[name] === Original) window[name] = Guarded;
})();""" % _REPORT_BINDING  # noqa: UP031 (the script's own braces would all need doubling in an f-string)


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


# ---------------------------------------------------------------------------------------------
# Finding and killing the Chromium processes a renderer launched (Linux /proc)


def _process_table() -> dict[int, tuple[int, str]]:
    """pid → (parent pid, command line) for every process we can read."""
    table: dict[int, tuple[int, str]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except (OSError, ValueError, IndexError):
            continue
        table[int(entry)] = (parent, command)
    return table


def _browser_pid(token: str) -> int | None:
    """The Chromium browser process whose environment carries ``token``."""
    marker = f"{_TOKEN_VARIABLE}={token}".encode()
    for pid, (_, command) in _process_table().items():
        if "--type=" in command or "crashpad" in command or "chrom" not in command:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                if marker in environ.read().split(b"\0"):
                    return pid
        except OSError:
            continue
    return None


def _parent_pid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return int(stat.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _is_renderer(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"--type=renderer" in cmdline.read()
    except OSError:
        return False


def _renderer_pids(browser_pid: int) -> list[int]:
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, stack = [], [browser_pid]
    while stack:
        for child in children.get(stack.pop(), []):
            stack.append(child)
            if "--type=renderer" in table[child][1]:
                found.append(child)
    return found


def _kill(pids: Sequence[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------------------------------------
# Watchdog


class _Watchdog:
    """Fires ``escalate(stage)`` when a guarded step overruns: stage 1 at the deadline, stage 2
    ``grace`` seconds later if the step is still stuck. Deliberate waits extend the deadline."""

    def __init__(self, escalate: Callable[[int], None], grace: float) -> None:
        self._escalate = escalate
        self._grace = grace
        self._condition = threading.Condition()
        self._deadline: float | None = None
        self._stage = 0
        self._closed = False
        self.fired = False
        self._thread = threading.Thread(target=self._run, name="page-watchdog", daemon=True)
        self._thread.start()

    @contextlib.contextmanager
    def guard(self, seconds: float) -> Iterator[None]:
        with self._condition:
            self._deadline = time.monotonic() + seconds
            self._stage = 0
            self.fired = False
            self._condition.notify_all()
        try:
            yield
        finally:
            with self._condition:
                self._deadline = None
                self._condition.notify_all()

    def extend(self, seconds: float) -> None:
        with self._condition:
            if self._deadline is not None and self._stage == 0:
                self._deadline += seconds
                self._condition.notify_all()

    def close(self) -> None:
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    def _run(self) -> None:
        with self._condition:
            while not self._closed:
                if self._deadline is None:
                    self._condition.wait()
                    continue
                remaining = self._deadline - time.monotonic()
                if remaining > 0:
                    self._condition.wait(remaining)
                    continue
                self._stage += 1
                self.fired = True
                self._deadline = time.monotonic() + self._grace if self._stage < 2 else None
                try:
                    self._escalate(self._stage)
                except Exception:  # the watchdog must outlive whatever it kills
                    log.exception("page watchdog could not escalate")


class _ResourceMonitor:
    """Caps what a page may take: while a page is open, samples the browser's renderer processes and
    kills one whose resident memory or CPU time passes the page's limit.

    Every page gets renderer processes of its own (a fresh browser context), so a renderer's totals
    are its page's; workers run in it too. What a page does between two samples is caught by two
    hard limits some way above the caps: V8's heap limit (a launch flag) and RLIMIT_DATA and
    RLIMIT_CPU, set on every renderer when it is first seen (allocations past the first fail, the
    kernel stops a process past the second).
    """

    INTERVAL = 0.05
    #: How far above the caps the hard limits sit, so that sampling is what normally stops a page.
    MEMORY_MARGIN_MB = 512
    CPU_MARGIN_SECONDS = 5.0
    #: What an idle renderer has mapped writable (about 600 MB here, mostly untouched): a renderer
    #: seen right after its fork has not mapped it yet, and must not be limited as if it never would.
    DATA_BASELINE_MB = 1024

    def __init__(self, memory_mb: int, cpu_seconds: float) -> None:
        self.memory_mb = memory_mb
        self.cpu_seconds = cpu_seconds
        self._condition = threading.Condition()
        self._browser_pid: int | None = None
        self._pages = 0
        self._closed = False
        self._overrun: str | None = None
        #: Every pid looked at once, and those of them descending from the browser.
        self._seen: set[int] = set()
        self._family: set[int] = set()
        self._family_of: int | None = None
        self._processes: dict[int, psutil.Process] = {}
        self._thread = threading.Thread(target=self._run, name="page-resources", daemon=True)
        self._thread.start()

    def begin(self, browser_pid: int | None) -> None:
        """A page opens: watch the browser's renderers until :meth:`end`."""
        with self._condition:
            if self._pages == 0:
                self._overrun = None
            self._pages += 1
            self._browser_pid = browser_pid
            self._condition.notify_all()

    def end(self) -> str | None:
        """A page closed: what it went past while open, if anything."""
        with self._condition:
            self._pages = max(0, self._pages - 1)
            return self._overrun

    def close(self) -> None:
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    def _run(self) -> None:
        while True:
            with self._condition:
                while not self._closed and (self._pages == 0 or self._browser_pid is None):
                    self._condition.wait()
                if self._closed:
                    return
                browser_pid = self._browser_pid
            assert browser_pid is not None  # the wait above ends only with a browser to watch or when closed
            try:
                self._rescan(browser_pid)
                self._sample()
            except Exception:  # the monitor must outlive whatever it watches
                log.exception("page resource monitor failed a round")
            with self._condition:
                self._condition.wait(self.INTERVAL)

    def _rescan(self, browser_pid: int) -> None:
        """Find new renderers: only processes not seen before are looked up (reading every
        process's stat 20 times a second would cost more than the sampling itself)."""
        if self._family_of != browser_pid:
            self._seen, self._family, self._family_of = set(), {browser_pid}, browser_pid
            self._processes.clear()
        alive = {int(entry) for entry in os.listdir("/proc") if entry.isdigit()}
        parents = {pid: _parent_pid(pid) for pid in alive - self._seen}
        grown = True
        while grown:  # a child may be listed before its new parent
            joined = {pid for pid, parent in parents.items() if parent in self._family and pid not in self._family}
            self._family |= joined
            grown = bool(joined)
        self._seen = alive
        self._family &= alive | {browser_pid}
        for pid in list(self._processes):
            if pid not in self._family:
                del self._processes[pid]
        for pid in self._family - set(self._processes) - {browser_pid}:
            # re-read each time: a process forked from the zygote takes a moment to name its type
            if not _is_renderer(pid):
                continue
            with contextlib.suppress(psutil.Error):
                process = psutil.Process(pid)
                self._processes[pid] = process
                self._hard_limits(process)

    def _hard_limits(self, process: psutil.Process) -> None:
        try:
            data = (max(process.memory_info().data, self.DATA_BASELINE_MB * 2**20)
                    + (self.memory_mb + self.MEMORY_MARGIN_MB) * 2**20)
            process.rlimit(psutil.RLIMIT_DATA, (data, data))
            cpu = math.ceil(self.cpu_seconds + self.CPU_MARGIN_SECONDS)
            process.rlimit(psutil.RLIMIT_CPU, (cpu, cpu + 1))
        except (psutil.Error, OSError) as exc:
            log.warning("could not set hard limits on renderer %s: %s", process.pid, exc)

    def _sample(self) -> None:
        for pid, process in list(self._processes.items()):
            try:
                with process.oneshot():
                    resident = process.memory_info().rss
                    times = process.cpu_times()
            except psutil.Error:
                continue
            cpu = times.user + times.system
            if resident > self.memory_mb * 2**20:
                why = (f"the page exceeded its {self.memory_mb} MB memory limit "
                       f"({resident / 2**20:.0f} MB resident) and was stopped")
            elif cpu > self.cpu_seconds:
                why = f"the page exceeded its {self.cpu_seconds:g} s CPU time limit and was stopped"
            else:
                continue
            with self._condition:
                self._overrun = self._overrun or why
            log.warning("%s: killing renderer %s", why, pid)
            _kill([pid])
            self._processes.pop(pid, None)


# ---------------------------------------------------------------------------------------------
# Playwright per thread


_playwrights = threading.local()


def shared_playwright() -> Playwright:
    """One started Playwright per thread and process (the sync API allows one per thread)."""
    current = getattr(_playwrights, "instance", None)
    if current is not None and getattr(_playwrights, "pid", None) == os.getpid():
        return current
    instance = sync_playwright().start()
    _playwrights.instance, _playwrights.pid = instance, os.getpid()
    atexit.register(_stop_quietly, instance)
    return instance


def _stop_quietly(instance: Playwright) -> None:
    with contextlib.suppress(Exception):
        instance.stop()


# ---------------------------------------------------------------------------------------------
# One open page


def _first_line(exc: BaseException) -> str:
    text = exc.message if isinstance(exc, PlaywrightError) else str(exc)
    text = text.split("Call log:")[0].strip()
    return (text.splitlines()[0] if text else "")[:MAX_MESSAGE_CHARS]


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {_first_line(exc)}".rstrip(": ")


def _append(records: list[str], text: str) -> None:
    if len(records) < MAX_RECORDS:
        records.append(text[:MAX_MESSAGE_CHARS])


def _element(index: int, raw: dict[str, Any], dom: dict[str, str]) -> Element:
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
            _append(self.blocked_urls, url)

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
        _append(self.page_errors, text)
        _append(self._errors_for_state, f"Uncaught {text}")

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            _append(self.console_errors, message.text)
            _append(self._errors_for_state, message.text)

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
                _append(self.missing_files, request.url)

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
                raise PageLoadError(f"navigation failed: {_first_line(exc)}") from exc
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
                        raise PageReadError(f"the page could not be read: {_first_line(exc)}") from exc
        try:
            raw = json.loads(text)
            dom: dict[str, str] = raw["dom"]
            elements = [_element(i, e, dom) for i, e in enumerate(raw["elements"])]
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise PageReadError(f"the page returned an unreadable state ({type(exc).__name__}: {exc})") from exc
        return elements, dom

    def elements(self) -> list[Element]:
        return self.read()[0]

    def screenshot(self) -> bytes | None:
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
                log.warning("screenshot failed: %s", _first_line(exc))
                return None

    def capture(self, name: str, action_error: str | None, screenshot: bool) -> RenderedState:
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
                    _append(self.unsupported_calls, str(exc))
                    error = _describe(exc)
                except (Exception, SystemExit) as exc:
                    if is_fatal(exc) or self.crashed:
                        raise PageUnresponsive(f"the page crashed during action {name!r}") from exc
                    error = _describe(exc)
                self.clock.check()  # did the page leave the virtual clock (in a handler, say)?
            return error
        finally:
            driver.on_wait = None

    def close(self, trace_path: Path | None = None) -> Path | None:
        saved = None
        try:
            with self.renderer.guarded(30.0, "closing the page"):
                if trace_path is not None:
                    try:
                        trace_path.parent.mkdir(parents=True, exist_ok=True)
                        self.context.tracing.stop(path=str(trace_path))
                        saved = trace_path
                    except PlaywrightError as exc:
                        log.warning("could not save the Playwright trace: %s", _first_line(exc))
                self.context.close()
        except (PlaywrightError, PageUnresponsive) as exc:
            log.warning("closing a page context failed: %s", _first_line(exc))
            self.renderer.discard_browser()
        finally:
            self.resource_error = self.renderer.monitor.end()
        return saved


# ---------------------------------------------------------------------------------------------
# The renderer


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
        self._browser_pid: int | None = None
        self._token = ""
        self._discard = False
        self.watchdog = _Watchdog(self._escalate, kill_grace)
        self.monitor = _ResourceMonitor(self.page_memory_mb, self.page_cpu_seconds)

    # --- browser lifecycle -------------------------------------------------------------------

    def _ensure_browser(self) -> Browser:
        if self._browser is not None and (self._discard or not self._browser.is_connected()):
            with contextlib.suppress(Exception):
                self._browser.close()
            self._browser = None
        if self._browser is None:
            playwright = self._playwright or shared_playwright()
            self._token = uuid.uuid4().hex
            # Playwright hides scrollbars in headless mode; the official headless Chrome did not,
            # and a vertical scrollbar takes 15 px of layout width (1905 px wide pages).
            self._browser, isolation = launch_evaluation_chromium(
                playwright, env={**os.environ, _TOKEN_VARIABLE: self._token},
                js_heap_mb=self.page_memory_mb + _ResourceMonitor.MEMORY_MARGIN_MB,
                network_namespace=self.network_namespace, ignore_default_args=["--hide-scrollbars"])
            self.isolation = isolation.describe()
            self._browser_pid = _browser_pid(self._token)
            self._discard = False
        return self._browser

    @property
    def browser_pid(self) -> int | None:
        """The Chromium browser process in use (None before the first page)."""
        return self._browser_pid

    @property
    def browser_version(self) -> str:
        """The version of the Chromium in use ("" before the first page)."""
        with contextlib.suppress(Exception):
            return self._browser.version if self._browser is not None else ""
        return ""

    def discard_browser(self) -> None:
        """Relaunch Chromium before the next page (after it stopped answering)."""
        self._discard = True

    def _escalate(self, stage: int) -> None:
        pid = self._browser_pid
        if pid is None:
            log.error("a page stopped responding and its Chromium process is unknown; cannot stop it")
            return
        if stage == 1:
            renderers = _renderer_pids(pid)
            log.warning("a page stopped responding: killing its renderer processes %s", renderers)
            _kill(renderers)
        else:
            log.warning("Chromium stopped responding: killing the browser (pid %s)", pid)
            self._discard = True
            _kill([pid])

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
                        f"{what} failed: the page crashed or was closed ({_first_line(exc)})") from exc
                raise
        if self.watchdog.fired:
            raise PageUnresponsive(overran)

    def close(self) -> None:
        self.watchdog.close()
        self.monitor.close()
        if self._browser is not None:
            with contextlib.suppress(Exception):
                self._browser.close()
            self._browser = None

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
        self.monitor.begin(self._browser_pid)
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
                    context.tracing.start(screenshots=True, snapshots=True)
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
