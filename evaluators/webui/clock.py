"""The time a WebUI page lives in while it is rendered: the browser's virtual clock, or the wall clock.

The official protocol waits for animations and timers by sleeping (the settle after load, every
``time.sleep`` in actions.py, the duration of a pointer move). With the virtual clock (the default)
those waits cost no wall time: the page's time jumps by exactly the slept duration, and everything
that depends on it moves as it would have:

* JS timers (setTimeout, setInterval, requestIdleCallback), requestAnimationFrame, ``Date`` and
  ``performance.now`` come from Playwright's fake clock (``page.clock``), installed before any page
  script runs and paused once the document has loaded;
* CSS animations, CSS transitions and Web Animations run on the document timeline, which Playwright's
  clock does not drive: the timeline is frozen through the DevTools protocol
  (``Animation.setPlaybackRate`` 0) and every running animation is moved forward with the clock,
  one frame (16 ms) at a time, so that timers see animated values as they would at that moment and
  an animation started by a timer starts at that timer's time;
* animation events (``transitionend``, ``animationiteration`` ...) are dispatched by the browser at
  its next rendering frame: when an animation starts, or crosses the end of an iteration or of its
  run, the clock waits for one real frame before it goes on, so listeners run at the right time.
  Only a page that listens to them (or to a Web Animation's end) pays for those frames: an init
  script notes when it adds such a listener, and handler attributes are looked for.

Loading a document is real work, not a wait: it runs in real time, as in a real browser, and the
clock stops at its load event (a reload by a form submit runs the same way). User input (clicks,
typing) is dispatched while the clock stands still.

Each ``advance`` is one script run in the page, its duration bounded by the caller's watchdog: a
page whose timer loops forever hangs the script and is killed like any page that stops answering.
A page that removes the clock from its own window (``__pwClock``) is given real waits instead.

With the real clock (``webui_real_time``) every wait is a wall-clock wait, as the official run
had. Both give the same states: the fixture pages score identically either way (tested).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Literal

from playwright.sync_api import BrowserContext, CDPSession, Frame, Page
from playwright.sync_api import Error as PlaywrightError

from evaluators.webui.selenium_compat import is_fatal

log = logging.getLogger(__name__)

ClockKind = Literal["virtual", "real"]
CLOCKS: tuple[ClockKind, ...] = ("virtual", "real")

#: The length of one rendering frame of Playwright's fake clock (its requestAnimationFrame period).
FRAME_MS = 16

# Notes, before any page script runs, whether the page listens to animation events or waits for a
# Web Animation to end: only then must the clock stop at each animation boundary for a real frame.
_LISTENERS_JS = """(() => {
  const names = ['animationstart', 'animationend', 'animationiteration', 'animationcancel', 'transitionrun',
    'transitionstart', 'transitionend', 'transitioncancel', 'webkitanimationstart', 'webkitanimationend',
    'webkitanimationiteration', 'webkittransitionend', 'finish', 'cancel'];
  const types = new Set(names);
  const note = () => { globalThis.__magebenchAnimationListeners = true; };
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, ...rest) {
    if (types.has(String(type).toLowerCase())) note();
    return add.call(this, type, ...rest);
  };
  const watch = (target, name) => {
    const d = target && Object.getOwnPropertyDescriptor(target, name);
    if (!d || !d.configurable || (!d.set && !d.get)) return;
    Object.defineProperty(target, name, Object.assign({}, d, {
      get: d.get && function () { if (name === 'finished') note(); return d.get.call(this); },
      set: d.set && function (value) { note(); return d.set.call(this, value); }}));
  };
  for (const target of [HTMLElement.prototype, SVGElement.prototype, Document.prototype, window,
                        globalThis.Animation && Animation.prototype])
    for (const name of names) watch(target, 'on' + name);
  if (globalThis.Animation) watch(Animation.prototype, 'finished');
})();"""
_HANDLER_ATTRIBUTES = ",".join(f"[on{name}]" for name in (
    "animationstart", "animationend", "animationiteration", "animationcancel", "transitionrun", "transitionstart",
    "transitionend", "transitioncancel", "webkitanimationstart", "webkitanimationend", "webkitanimationiteration",
    "webkittransitionend"))

# One advance in one document: pause the fake clock (a document that loaded since the last advance
# still runs in real time), then move it and the frozen animations forward frame by frame.
# Returns how far it got, and whether the document started leaving (a reload, a form submit): the
# advance stops there, and the rest belongs to the next document. ``resume``: that navigation was
# refused or is over, the document stays.
_ADVANCE_JS = """async ([ms, frameMs, resume, handlers]) => {
  const clock = globalThis.__pwClock;
  if (!clock || !clock.controller || !clock.builtins) return {broken: true, done: 0, leaving: false};
  const c = clock.controller, native = clock.builtins;
  await c.pauseAt(c.now());
  const state = globalThis.__magebenchVirtualTime || (globalThis.__magebenchVirtualTime = {
    seen: new WeakMap(), leaving: false, channel: new MessageChannel(), queued: []});
  if (!state.channel.port1.onmessage) state.channel.port1.onmessage = () => state.queued.shift()();
  // tasks the page queued (a planned form navigation, a posted message) run between two frames, as
  // they would while real time passes; a zero timeout would be clamped after a few nested calls
  const yieldTask = () => new Promise((resolve) => { state.queued.push(resolve); state.channel.port2.postMessage(0); });
  if (!state.listening && globalThis.navigation) {
    state.listening = true;
    navigation.addEventListener('navigate', (event) => {
      if (!event.destination || !event.destination.sameDocument) state.leaving = true;
    });
  }
  if (resume) state.leaving = false;
  // the browser dispatches animation events at its next frame; a frame that never comes (a hidden
  // page) must not stall the clock, and a page that hears none of them need not wait for it
  const listening = () => globalThis.__magebenchAnimationListeners === true || !!document.querySelector(handlers);
  const frame = () => !listening() ? Promise.resolve() : new Promise((resolve) => {
    native.requestAnimationFrame(() => resolve());
    native.setTimeout(resolve, 100);
  });
  const phase = (a) => {
    const t = a.effect ? a.effect.getComputedTiming() : null;
    return a.playState + (t ? ':' + t.currentIteration + ':' + (t.progress === null ? '-' : '+') : '');
  };
  let done = 0;
  while (done < ms && !state.leaving) {
    await yieldTask();
    if (state.leaving) break;
    const step = Math.min(frameMs - (c.performanceNow() % frameMs) || frameMs, ms - done);
    const animations = document.getAnimations();
    let started = false, crossed = false;
    for (const a of animations) {
      if (!state.seen.has(a)) { state.seen.set(a, phase(a)); started = true; }
    }
    if (started) await frame();
    for (const a of animations) {
      if (a.playState === 'running' && a.playbackRate) a.currentTime = (a.currentTime || 0) + step * a.playbackRate;
      const now = phase(a);
      if (now !== state.seen.get(a)) { state.seen.set(a, now); crossed = true; }
    }
    await c.runFor(step);
    done += step;
    if (crossed) await frame();
  }
  return {broken: false, done, leaving: state.leaving};
}"""


class PageClock:
    """Wall-clock time: a sleep waits (the official protocol's own behaviour)."""

    kind: ClockKind = "real"

    def __init__(self, page: Page) -> None:
        self.page = page

    def document_loaded(self) -> None:
        """A document of the page fired its load event (the first one, or a reload)."""

    def sync(self) -> None:
        """Put a document that loaded since the last call on this clock."""

    def sleep(self, seconds: float) -> None:
        self.page.wait_for_timeout(seconds * 1000)


class VirtualClock(PageClock):
    """The page's time stands still unless a sleep moves it (see the module docstring).

    Create it before the page navigates: Playwright's clock goes into every document from its start.
    ``settle`` is called before each advance: it lets a pending navigation finish, since a document
    on its way out cannot be advanced.
    """

    kind: ClockKind = "virtual"

    def __init__(self, context: BrowserContext, page: Page, cdp: CDPSession, *,
                 settle: Callable[[], None] | None = None,
                 expect_navigation: Callable[[], None] | None = None) -> None:
        super().__init__(page)
        self.context = context
        self.settle = settle
        #: Called when the page starts leaving during an advance: its request is on its way.
        self.expect_navigation = expect_navigation
        #: Set when the page removed the clock from its window: later sleeps wait in real time.
        self.broken = False
        self._loads = 0
        self._synced = 0
        #: Milliseconds the clock was advanced, and how many of them a new document starts with.
        self._advanced_ms = 0
        self._carried_ms = 0
        self._cdp = cdp
        context.add_init_script(_LISTENERS_JS)
        context.clock.install()

    def document_loaded(self) -> None:
        self._loads += 1

    def _carry(self) -> None:
        """Hand the time advanced so far on to the page's next documents (a reload, a form submit).

        A new document's clock is rebuilt from the log that Playwright's init scripts replay (its
        install, then real time); the virtual time goes into that log too, so that ``Date`` does
        not run backwards across a reload. (Not from the navigation's route: an init script added
        while a request is held there never gets its answer.)
        """
        skipped = self._advanced_ms - self._carried_ms
        if skipped <= 0:
            return
        self._carried_ms = self._advanced_ms
        self.context.add_init_script(f"globalThis.__pwClock && globalThis.__pwClock.controller.log("
                                     f"'runFor', {round(time.time() * 1000)}, {skipped});")

    def sync(self) -> None:
        if self._synced == self._loads or self.broken:
            return
        self._synced = self._loads
        # Frozen first, then the clock paused: CSS time never runs ahead of script time.
        try:
            self._cdp.send("Animation.setPlaybackRate", {"playbackRate": 0})
        except PlaywrightError as exc:
            log.debug("could not freeze the page's animations: %s", exc.message.splitlines()[0])
        for frame in self.page.frames:
            self._advance(frame, 0)

    def sleep(self, seconds: float) -> None:
        remaining = round(seconds * 1000)
        resume = False
        while remaining > 0 and not self.broken:
            if self.settle is not None:
                self.settle()  # a navigation under way finishes first (in real time, as loads do)
            loads = self._loads
            self.sync()
            done, leaving = self._advance(self.page.main_frame, remaining, resume=resume)
            for frame in self.page.frames[1:]:
                self._advance(frame, done)
            remaining -= done
            self._advanced_ms += done
            # The document started leaving: the rest of the sleep goes to the next document, or to
            # this one again once the navigation turns out refused (it stays, and resumes).
            resume = leaving and self._loads == loads
            if leaving:
                self._carry()
                if self.expect_navigation is not None and self._loads == loads:
                    self.expect_navigation()
        self._carry()
        if self.broken and remaining > 0:
            self.page.wait_for_timeout(remaining)

    def _advance(self, frame: Frame, ms: int, *, resume: bool = False) -> tuple[int, bool]:
        """Advance one document by ``ms``: how far it got, and whether it started leaving."""
        try:
            result = frame.evaluate(_ADVANCE_JS, [ms, FRAME_MS, resume, _HANDLER_ATTRIBUTES])
        except PlaywrightError as exc:
            message = exc.message
            if is_fatal(exc):
                raise
            if "context was destroyed" in message or "detached" in message.lower():
                return 0, True  # the document went away while it was moved: the next one gets the time
            log.warning("the virtual clock failed in the page (%s); waiting in real time instead",
                        message.splitlines()[0] if message else type(exc).__name__)
            self.broken = True
            return 0, False
        if not isinstance(result, dict) or result.get("broken"):
            if frame is self.page.main_frame:
                log.warning("the page removed its virtual clock; waiting in real time instead")
                self.broken = True
            return 0, False
        return int(result.get("done", 0)), bool(result.get("leaving"))


def page_clock(kind: ClockKind, context: BrowserContext, page: Page, cdp: CDPSession, *,
               settle: Callable[[], None] | None = None,
               expect_navigation: Callable[[], None] | None = None) -> PageClock:
    """The clock a new page runs on (before it navigates); ``cdp``: a DevTools session on the page."""
    if kind not in CLOCKS:
        raise ValueError(f"unknown clock {kind!r}; expected one of {', '.join(CLOCKS)}")
    if kind == "virtual":
        return VirtualClock(context, page, cdp, settle=settle, expect_navigation=expect_navigation)
    return PageClock(page)
