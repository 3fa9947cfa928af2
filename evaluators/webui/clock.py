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

Timers follow Chromium's own rules rather than those of Playwright's clock, which runs a
``setInterval`` without a delay (or with 0) again and again at the same instant, so that time never
moves on and the page never finishes loading (see ``_TIMERS_JS``): a zero or missing delay runs the
callback at once, the 7th timer of a chain of timers set from timer callbacks, and an interval from
its 7th run on, wait at least 4 ms; an interval that falls behind skips the runs it missed. A
callback that throws is reported as the page's uncaught error and the clock goes on. Past 100
callbacks within one millisecond of the page's time, the rest wait for the next millisecond (no
browser runs more in a millisecond).

Each ``advance`` is one script run in the page, its duration bounded by the caller's watchdog: a
page whose timer loops forever hangs the script and is killed like any page that stops answering.

Some pages cannot run faithfully on a clock that only moves when waited on. The clock then *falls
back*: it records why (``PageClock.fallback``), lets the page's time run in real time from there,
and the renderer renders the page again from the start on the real clock (an evaluation then puts
its other page on the real clock too). It falls back when the page

* waits in a busy loop for its clock to move (reads it a million times while it stands still);
* keeps the clock more than 2 s behind the wall clock during one wait, at less than half its pace
  (its timers' work takes longer than the time they are given: a real browser would skip interval
  runs, the virtual clock cannot);
* breaks the clock (removes ``__pwClock`` from its window, or the advance fails in the page).

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

#: Chromium's timer clamping, as the HTML standard has it and as Chromium 156 was measured to do
#: (setTimeout chains and setInterval with delays 0, 1, 2, 3 and none): a timer set while the
#: timer nesting level is above 5 waits at least 4 ms, i.e. the 7th timer of a chain and the 7th
#: run of an interval on; there is no 1 ms minimum (a zero or missing delay runs 6 times at once).
MAX_TIMER_NESTING = 5
MIN_NESTED_DELAY_MS = 4
#: At most this many callbacks in one millisecond of the page's time; the rest wait for the next.
CALLBACKS_PER_MS = 100
#: Reads of a clock that stands still after which the page is taken to wait for it in a busy loop.
SPIN_READS = 1_000_000
#: How far (ms) the page's time may fall behind the wall clock during one wait (while it also runs
#: at less than half the wall clock's pace) before the page falls back to the real clock.
BEHIND_LIMIT_MS = 2000

# Runs in every document right after Playwright's clock is installed, before any page script: the
# clock's timers follow Chromium's rules (see the module docstring), and the clock notes why it
# cannot go on (``runaway``), in ``__pwClock.controller.__magebench``, where an advance reads it.
#
# * nesting: outside timer callbacks the nesting level is 0; a timer set at level n runs its
#   callback at level n + 1, and an interval one level deeper at each run; a delay under 4 ms set
#   at a level above 5 (a timer, or an interval's next run) becomes 4 ms. Delays are WebIDL longs
#   (whole, wrapped to 32 bits, negative → 0). Playwright's clock instead moves a nested zero-delay
#   timer 1 ms on and repeats a zero-delay interval at the same instant forever.
# * missed runs: an interval late by more than its period (only while the page loads, when
#   Playwright's clock follows the wall clock) runs once and is then due at its next beat after
#   now, as Chromium's repeating timers are, instead of running every missed beat.
# * errors: a callback that throws is reported as an uncaught error (Playwright's clock would pass
#   the error to whoever advances the clock, stopping the advance) and the next callbacks run.
_TIMERS_JS = r"""(() => {
  const clock = globalThis.__pwClock;
  const c = clock && clock.controller;
  if (!c || c.__magebench) return;
  const MAX_NESTING = __MAX_NESTING__, NESTED_MIN = __NESTED_MIN__, PER_MS = __PER_MS__;
  const SPIN_READS = __SPIN_READS__, BEHIND_MS = __BEHIND_MS__;
  const realNow = clock.builtins.performance.now.bind(clock.builtins.performance);
  const m = {
    runaway: null, nesting: 0, tick: -1, ran: 0, readAt: -1, reads: 0,
    // set by an advance while it runs: where the wall clock and the page's time were at its start
    advance: null,
    givenUp(reason) {
      if (m.runaway) return;
      m.runaway = reason;
      // the page's time follows the wall clock from here (a busy loop waiting for it ends)
      if (!c._realTime) { try { c.resume(); } catch (e) {} }
    },
    behind() {
      if (!m.advance) return false;
      const wall = realNow() - m.advance.wall, moved = c._now.ticks - m.advance.ticks;
      if (wall - moved <= BEHIND_MS || wall <= 2 * moved) return false;
      m.givenUp(`the page's time fell more than ${BEHIND_MS / 1000} s behind the wall clock while it waited `
                + '(its timers take longer to run than the time they are given)');
      return true;
    }};
  Object.defineProperty(c, '__magebench', {value: m});
  const long = (value) => {
    const number = Number(value);
    if (!Number.isFinite(number)) return 0;
    let whole = Math.trunc(number) % 4294967296;
    if (whole < 0) whole += 4294967296;
    return whole >= 2147483648 ? whole - 4294967296 : whole;
  };
  const report = (error) => {
    try { globalThis.reportError(error); } catch (e) { console.error(error); }
  };
  const addTimer = c.addTimer, takeFirstTimer = c._takeFirstTimer, now = c.now, performanceNow = c.performanceNow;
  c.addTimer = function (options) {
    const func = options && options.func;
    if (typeof func !== 'function' && typeof func !== 'string') return addTimer.call(this, options);
    const timed = options.type === 'Timeout' || options.type === 'Interval';
    const repeating = options.type === 'Interval';
    // the level the callback runs at: one above the level the timer is set at
    const entry = {level: m.nesting + 1, timer: null};
    let delay = options.delay;
    if (timed) {
      delay = Math.max(0, long(options.delay));
      if (m.nesting > MAX_NESTING && delay < NESTED_MIN) delay = NESTED_MIN;
    }
    const run = typeof func === 'function' ? func : () => globalThis.eval(func);
    const callback = function (...args) {
      m.nesting = timed ? entry.level : 0;
      if (repeating && entry.timer) {
        // the interval's next run is set from this one, at this run's level
        if (entry.level > MAX_NESTING && entry.timer.delay < NESTED_MIN) {
          entry.timer.delay = NESTED_MIN;
          entry.timer.callAt = c._now.ticks + NESTED_MIN;
        }
        entry.level = Math.min(entry.level + 1, 1e6);
      }
      try {
        return run.apply(this, args);
      } catch (error) {
        report(error);
      } finally {
        m.nesting = 0;
      }
    };
    const id = addTimer.call(this, Object.assign({}, options, {func: callback, delay}));
    const timer = this._timers.get(id);
    entry.timer = timer || null;
    if (timer && timed) {
      timer.delay = delay;
      timer.callAt = timer.createdAt + delay;
    }
    return id;
  };
  c._takeFirstTimer = function (beforeTick) {
    // an advance stops at the first sign that the page cannot keep to virtual time
    if (m.advance && (m.runaway || m.behind())) return null;
    const ticks = this._now.ticks;
    if (m.tick === ticks && m.ran >= PER_MS) {
      for (const timer of this._timers.values()) if (timer.callAt <= ticks) timer.callAt = ticks + 1;
    }
    const timer = takeFirstTimer.call(this, beforeTick);
    if (!timer) return timer;
    const at = this._now.ticks;
    if (m.tick !== at) { m.tick = at; m.ran = 0; }
    m.ran++;
    if (timer.type === 'Interval' && timer.delay > 0 && timer.callAt <= at) {
      const scheduled = timer.callAt - timer.delay;
      timer.callAt = at + (timer.delay - (at - scheduled) % timer.delay);
    }
    return timer;
  };
  const counted = (read) => function () {
    const value = read.call(this);
    if (!this._realTime && !m.runaway) {
      if (this._now.ticks !== m.readAt) { m.readAt = this._now.ticks; m.reads = 0; }
      else if (++m.reads >= SPIN_READS) m.givenUp('the page waits in a busy loop for its clock to move');
    }
    return value;
  };
  c.now = counted(now);
  c.performanceNow = counted(performanceNow);
})();""".replace("__MAX_NESTING__", str(MAX_TIMER_NESTING)).replace("__NESTED_MIN__", str(MIN_NESTED_DELAY_MS)) \
    .replace("__PER_MS__", str(CALLBACKS_PER_MS)).replace("__SPIN_READS__", str(SPIN_READS)) \
    .replace("__BEHIND_MS__", str(BEHIND_LIMIT_MS))

# One advance in one document: pause the fake clock (a document that loaded since the last advance
# still runs in real time), then move it and the frozen animations forward frame by frame.
# Returns how far it got, and whether the document started leaving (a reload, a form submit): the
# advance stops there, and the rest belongs to the next document. ``resume``: that navigation was
# refused or is over, the document stays.
_ADVANCE_JS = """async ([ms, frameMs, resume, handlers]) => {
  const clock = globalThis.__pwClock;
  if (!clock || !clock.controller || !clock.builtins) return {broken: true, done: 0, leaving: false};
  const c = clock.controller, native = clock.builtins, timers = c.__magebench;
  // a page that gave up its virtual time runs on the wall clock from then on: never paused again
  if (timers && timers.runaway) return {broken: false, done: 0, leaving: false, runaway: timers.runaway};
  await c.pauseAt(c.now());
  const state = globalThis.__magebenchVirtualTime || (globalThis.__magebenchVirtualTime = {
    seen: new WeakMap(), navigations: [], channel: new MessageChannel(), queued: []});
  if (!state.channel.port1.onmessage) state.channel.port1.onmessage = () => state.queued.shift()();
  // tasks the page queued (a planned form navigation, a posted message) run between two frames, as
  // they would while real time passes; a zero timeout would be clamped after a few nested calls
  const yieldTask = () => new Promise((resolve) => { state.queued.push(resolve); state.channel.port2.postMessage(0); });
  if (!state.listening && globalThis.navigation) {
    state.listening = true;
    // only navigations that bring a new document through the network (which the route answers)
    // count: a mailto: link or a navigation the page cancels leaves this document in place
    navigation.addEventListener('navigate', (event) => {
      const to = event.destination;
      if (!to || to.sameDocument || !/^(file|https?):/i.test(to.url)) return;
      state.navigations.push(event);  // read later: a listener after this one may still cancel it
    });
  }
  if (resume) state.navigations.length = 0;
  const leaving = () => state.navigations.some((event) => !event.defaultPrevented);
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
  if (timers) timers.advance = {wall: native.performance.now(), ticks: c._now.ticks};
  try {
    while (done < ms && !leaving() && !(timers && (timers.runaway || timers.behind()))) {
      await yieldTask();
      if (leaving()) break;
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
  } finally {
    if (timers) timers.advance = null;
  }
  return {broken: false, done, leaving: leaving(), runaway: timers ? timers.runaway : null};
}"""


_RUNAWAY_JS = """() => {
  const clock = globalThis.__pwClock;
  const timers = clock && clock.controller && clock.controller.__magebench;
  return timers ? timers.runaway : null;
}"""


class PageClock:
    """Wall-clock time: a sleep waits (the official protocol's own behaviour)."""

    kind: ClockKind = "real"

    def __init__(self, page: Page, *, settle: Callable[[], None] | None = None) -> None:
        self.page = page
        #: Lets a navigation under way finish; called before a sleep on the wall clock.
        self.settle = settle
        #: Why a virtual clock gave the page over to the wall clock (never set on the real clock).
        self.fallback: str | None = None
        #: Set when whatever the page does after a fallback is thrown away (it is rendered again):
        #: the waits left are then not waited for.
        self.discard_after_fallback = False

    def document_loaded(self) -> None:
        """A document of the page fired its load event (the first one, or a reload)."""

    def sync(self) -> None:
        """Put a document that loaded since the last call on this clock."""

    def check(self) -> str | None:
        """Whether the page has left the clock since the last look (see :attr:`fallback`)."""
        return self.fallback

    def sleep(self, seconds: float) -> None:
        # chromedriver's click returns once a navigation it started has loaded, so a sleep after a
        # submit is the new document's time, however long the load took on a busy machine.
        if self.settle is not None:
            self.settle()
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
        super().__init__(page, settle=settle)
        self.context = context
        #: Called when the page starts leaving during an advance: its request is on its way.
        self.expect_navigation = expect_navigation
        self._loads = 0
        self._synced = 0
        #: Milliseconds the clock was advanced, and how many of them a new document starts with.
        self._advanced_ms = 0
        self._carried_ms = 0
        self._cdp = cdp
        context.add_init_script(_LISTENERS_JS)
        context.clock.install()
        context.add_init_script(_TIMERS_JS)  # after the clock's own script, before the page's

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

    def fall_back(self, reason: str) -> None:
        """Give the page over to the wall clock for the rest of its life, noting why."""
        if self.fallback is not None:
            return
        self.fallback = reason
        log.warning("the page leaves the virtual clock and runs in real time: %s", reason)
        try:
            # its timers, Date and animation frames follow the wall clock, in this document and the next
            self.context.clock.resume()
        except PlaywrightError as exc:
            if is_fatal(exc):
                raise
            log.debug("could not resume the page's clock: %s", exc.message.splitlines()[0])
        try:
            self._cdp.send("Animation.setPlaybackRate", {"playbackRate": 1})
        except PlaywrightError as exc:
            log.debug("could not unfreeze the page's animations: %s", exc.message.splitlines()[0])

    def check(self) -> str | None:
        if self.fallback is None:
            try:
                reason = self.page.main_frame.evaluate(_RUNAWAY_JS)
            except PlaywrightError as exc:
                if is_fatal(exc):
                    raise
                reason = None  # a document on its way out: the next advance looks again
            if reason:
                self.fall_back(str(reason))
        return self.fallback

    def sync(self) -> None:
        if self._synced == self._loads or self.fallback is not None:
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
        while remaining > 0 and self.fallback is None:
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
        if self.fallback is not None and remaining > 0 and not self.discard_after_fallback:
            self.page.wait_for_timeout(remaining)

    def _advance(self, frame: Frame, ms: int, *, resume: bool = False) -> tuple[int, bool]:
        """Advance one document by ``ms``: how far it got, and whether it started leaving."""
        if self.fallback is not None:
            return 0, False
        try:
            result = frame.evaluate(_ADVANCE_JS, [ms, FRAME_MS, resume, _HANDLER_ATTRIBUTES])
        except PlaywrightError as exc:
            message = exc.message
            if is_fatal(exc):
                raise
            if "context was destroyed" in message or "detached" in message.lower():
                return 0, True  # the document went away while it was moved: the next one gets the time
            self.fall_back("the virtual clock failed in the page ("
                           + (message.splitlines()[0] if message else type(exc).__name__) + ")")
            return 0, False
        if not isinstance(result, dict) or result.get("broken"):
            if frame is self.page.main_frame:
                self.fall_back("the page removed its virtual clock from its window")
            return 0, False
        if result.get("runaway"):
            self.fall_back(str(result["runaway"]))
        return int(result.get("done", 0)), bool(result.get("leaving"))


def page_clock(kind: ClockKind, context: BrowserContext, page: Page, cdp: CDPSession, *,
               settle: Callable[[], None] | None = None,
               expect_navigation: Callable[[], None] | None = None) -> PageClock:
    """The clock a new page runs on (before it navigates); ``cdp``: a DevTools session on the page."""
    if kind not in CLOCKS:
        raise ValueError(f"unknown clock {kind!r}; expected one of {', '.join(CLOCKS)}")
    if kind == "virtual":
        return VirtualClock(context, page, cdp, settle=settle, expect_navigation=expect_navigation)
    return PageClock(page, settle=settle)
