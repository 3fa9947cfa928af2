"""Timers on the virtual clock keep Chromium's own timing, and a page the virtual clock cannot run as
real time would is rendered on the real clock instead, with the reason recorded."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluators.tests.webui_pages import aes, reply_folder
from evaluators.webui.baselines import page_files
from evaluators.webui.clock import ClockKind
from evaluators.webui.render import PageRenderer
from evaluators.webui.results import RenderResult
from evaluators.webui.selenium_compat import load_actions

pytestmark = pytest.mark.integration

CLOCKS: tuple[ClockKind, ClockKind] = ("virtual", "real")


@pytest.fixture(scope="module")
def renderer() -> Iterator[PageRenderer]:
    with PageRenderer(action_timeout=5.0, load_timeout=5.0, kill_grace=2.0) as shared:
        yield shared


def page_with(root: Path, actions: str, **files: str) -> Path:
    """A page folder: ``index_html``, ``script_js``, ``style_css`` … and its actions.py."""
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (root / name.replace("_", ".")).write_text(content, encoding="utf-8")
    (root / "actions.py").write_text(actions, encoding="utf-8")
    return root


def render(renderer: PageRenderer, folder: Path, clock: ClockKind, **options: Any) -> RenderResult:
    return renderer.render_states(folder, load_actions(folder / "actions.py"), screenshots=False, clock=clock,
                                  **options)


def texts(result: RenderResult, element_id: str) -> list[str]:
    return [next(e.text for e in state.elements if e.attributes.get("id") == element_id) for state in result.states]


# --- an official-style clock page: setInterval(changeTime), no delay -----------------------------

CLOCK_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>Desk Clock</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <main class="clock-card">
    <h1 class="title" data-filter-by="text" data-evalby="text|font-size|font-weight|color">Desk Clock</h1>
    <div id="time" class="time" data-filter-by="class"
         data-evalby="font-size|color|background-color|width|height">00:00:00</div>
    <p id="state" class="state" data-filter-by="has_text" data-evalby="text|font-size|color">Starting</p>
    <div class="controls">
      <button id="toggle" class="btn" data-filter-by="text"
              data-evalby="text|font-size|color|background-color|border-radius">Pause</button>
      <button id="format" class="btn btn-light" data-filter-by="text"
              data-evalby="text|color|background-color">12 h</button>
    </div>
  </main>
  <script src="script.js"></script>
</body>
</html>
"""

CLOCK_CSS = """* { box-sizing: border-box; margin: 0; padding: 0; }
body { display: flex; justify-content: center; padding-top: 80px; background-color: #f1f5f9;
       font-family: Arial, Helvetica, sans-serif; }
.clock-card { width: 420px; padding: 32px; background-color: #ffffff; border-radius: 18px; text-align: center; }
.title { font-size: 28px; font-weight: 700; color: #0f172a; }
.time { width: 320px; height: 72px; margin: 20px auto; line-height: 72px; font-size: 44px; color: #0f172a;
        background-color: #e2e8f0; border-radius: 12px; font-variant-numeric: tabular-nums; }
.time.paused { color: #94a3b8; }
.time.h12 { background-color: #fef3c7; }
.state { font-size: 14px; color: #475569; }
.controls { margin-top: 20px; display: flex; gap: 12px; justify-content: center; }
.btn { padding: 10px 20px; font-size: 16px; color: #ffffff; background-color: #2563eb; border: 0; border-radius: 8px; }
.btn-light { color: #1e293b; background-color: #e2e8f0; }
"""

# changeTime runs on an interval without a delay, as on the official page that would not load:
# the time shown is never scored, the state line is (it changes only on clicks and after the
# interval's first runs, so both clocks show the same thing).
CLOCK_JS = """let running = true, runs = 0, twelve = false;
const timeEl = document.getElementById('time');
const stateEl = document.getElementById('state');
const pad = (n) => String(n).padStart(2, '0');
function changeTime() {
  if (!running) return;
  runs += 1;
  const now = new Date();
  const hours = twelve ? (now.getHours() % 12 || 12) : now.getHours();
  timeEl.textContent = pad(hours) + ':' + pad(now.getMinutes()) + ':' + pad(now.getSeconds());
  if (runs === 7) stateEl.textContent = 'Ticking';
}
setInterval(changeTime);
document.getElementById('toggle').addEventListener('click', (event) => {
  running = !running;
  event.target.textContent = running ? 'Pause' : 'Resume';
  timeEl.classList.toggle('paused', !running);
  stateEl.textContent = running ? 'Ticking again' : 'Paused';
});
document.getElementById('format').addEventListener('click', (event) => {
  twelve = !twelve;
  event.target.textContent = twelve ? '24 h' : '12 h';
  timeEl.classList.toggle('h12', twelve);
});
"""

CLOCK_ACTIONS = """from selenium.webdriver.common.by import By
import time


def pause_clock(driver):
    driver.find_element(By.ID, 'toggle').click()
    time.sleep(1)


def switch_format(driver):
    driver.find_element(By.ID, 'format').click()
    time.sleep(0.5)


def resume_clock(driver):
    driver.find_element(By.ID, 'toggle').click()
    time.sleep(1)


actions = [pause_clock, switch_format, resume_clock]
"""


def test_a_clock_page_ticking_on_an_interval_without_delay_loads_and_scores_the_same_on_both_clocks(
        renderer: PageRenderer, tmp_path: Path):
    page = page_with(tmp_path / "desk-clock", CLOCK_ACTIONS, index_html=CLOCK_HTML, style_css=CLOCK_CSS,
                     script_js=CLOCK_JS)
    # the renderer's watchdog gives a load 5 s (the platform's, 20): the page loads on the virtual clock
    targets = {clock: render(renderer, page, clock) for clock in CLOCKS}
    for clock, target in targets.items():
        assert target.load_error is None and not target.unresponsive, clock
        assert target.clock == clock and target.clock_fallback is None
        assert texts(target, "state") == ["Ticking", "Paused", "Paused", "Ticking again"], clock
        assert all(state.action_error is None for state in target.states)
    scores: dict[str, dict[str, float]] = {}
    for reply in ("perfect", "degraded"):
        folder = reply_folder(page, page_files(page, degrade=reply == "degraded"), tmp_path / reply)
        scores[reply] = {clock: aes(targets[clock], render(renderer, folder, clock), False) for clock in CLOCKS}
    assert scores["perfect"]["virtual"] == scores["perfect"]["real"] == pytest.approx(1.0)
    assert scores["degraded"]["virtual"] == scores["degraded"]["real"] < 1.0


# --- Chromium's timing of zero-delay and short timers -------------------------------------------

# Started by a click (the clock stands still then); each entry is when a callback ran, in ms after it.
TIMING_JS = """window.seen = {};
const record = (name, count, schedule) => {
  const times = seen[name] = [];
  const start = performance.now();
  schedule((stop) => { times.push(performance.now() - start); if (times.length >= count) stop(); });
};
document.getElementById('go').addEventListener('click', () => {
  record('interval without delay', 10, (run) => { const id = setInterval(() => run(() => clearInterval(id))); });
  record('interval 0', 10, (run) => { const id = setInterval(() => run(() => clearInterval(id)), 0); });
  record('interval 2', 10, (run) => { const id = setInterval(() => run(() => clearInterval(id)), 2); });
  record('chain 0', 10, (run) => { let more = true; const step = () => { run(() => { more = false; });
    if (more) setTimeout(step, 0); }; setTimeout(step, 0); });
  record('chain 1', 10, (run) => { let more = true; const step = () => { run(() => { more = false; });
    if (more) setTimeout(step, 1); }; setTimeout(step, 1); });
  record('chain of 5 from a frame', 5, (run) => { let more = true; const step = () => { run(() => { more = false; });
    if (more) requestAnimationFrame(() => setTimeout(step)); }; requestAnimationFrame(() => setTimeout(step)); });
  let loops = 0;
  const loop = () => { loops += 1; seen.loops = loops; setTimeout(loop); };
  setTimeout(loop);
});
"""

CLICK_AND_SLEEP = ("from selenium.webdriver.common.by import By\nimport time\n\n"
                   "def go(driver):\n    driver.find_element(By.ID, 'go').click()\n    time.sleep(1)\n\n"
                   "actions = [go]\n")


def test_zero_delay_and_short_timers_run_when_chromium_runs_them(renderer: PageRenderer, tmp_path: Path):
    page = page_with(tmp_path / "timing", CLICK_AND_SLEEP,
                     index_html="<!doctype html><button id='go'>go</button><script src='script.js'></script>",
                     script_js=TIMING_JS)
    with renderer.open_page(page, settle_ms=300, clock="virtual") as live:
        assert live.run_action(load_actions(page / "actions.py")[0]) is None
        seen = live.page.evaluate("() => seen")
        assert live.clock.fallback is None
    # Chromium 156 (measured): no 1 ms minimum; a timer set at nesting level 6 or deeper (the 7th of a
    # chain, an interval's 7th run) waits at least 4 ms
    at_once_then_every_4 = [0, 0, 0, 0, 0, 0, 4, 8, 12, 16]
    assert seen["interval without delay"] == seen["interval 0"] == seen["chain 0"] == at_once_then_every_4
    assert seen["interval 2"] == [2, 4, 6, 8, 10, 12, 16, 20, 24, 28]
    assert seen["chain 1"] == [1, 2, 3, 4, 5, 6, 10, 14, 18, 22]
    # a timer set from an animation frame starts a new chain (level 1): it runs in the frame's
    # millisecond, and each next frame comes 16 ms later
    frames = seen["chain of 5 from a frame"]
    assert 0 < frames[0] <= 16 and [b - a for a, b in zip(frames, frames[1:])] == [16, 16, 16, 16]
    # a self-rescheduling zero-delay timer moves on with the clock: 6 runs at once, then one every 4 ms
    assert seen["loops"] == 6 + 1000 // 4


def test_a_timer_that_throws_is_an_uncaught_page_error_and_the_clock_goes_on(renderer: PageRenderer, tmp_path: Path):
    script = ("let n = 0; const out = document.getElementById('n');"
              "setInterval(() => { n += 1; out.textContent = String(n); if (n === 2) throw new Error('boom'); }, 100);"
              "requestAnimationFrame(() => { throw new TypeError('frame'); });")
    page = page_with(tmp_path / "throws", CLICK_AND_SLEEP,
                     index_html="<!doctype html><p id='n'>0</p><button id='go'>go</button>"
                                "<script src='script.js'></script>", script_js=script)
    result = render(renderer, page, "virtual")
    assert result.clock == "virtual" and result.clock_fallback is None
    assert any("boom" in error for error in result.page_errors)
    assert any("frame" in error for error in result.page_errors)
    # 1 s after the click the interval has run about 13 times (load, then 300 ms + 1 s), not stopped at 2
    assert int(texts(result, "n")[-1]) >= 12


def test_past_100_callbacks_in_a_millisecond_the_page_time_moves_on(renderer: PageRenderer, tmp_path: Path):
    # every message sets a zero-delay timer at nesting level 1 that posts the next message: Chromium
    # runs these as fast as it can; the virtual clock lets 100 run per millisecond of page time
    script = ("const channel = new MessageChannel(); window.runs = 0;"
              "channel.port1.onmessage = () => setTimeout(() => { window.runs += 1; channel.port2.postMessage(0); });"
              "document.getElementById('go').addEventListener('click', () => channel.port2.postMessage(0));")
    actions = ("from selenium.webdriver.common.by import By\nimport time\n\n"
               "def go(driver):\n    driver.find_element(By.ID, 'go').click()\n    time.sleep(0.004)\n\n"
               "actions = [go]\n")
    page = page_with(tmp_path / "ping-pong", actions, script_js=script,
                     index_html="<!doctype html><button id='go'>go</button><script src='script.js'></script>")
    with renderer.open_page(page, clock="virtual") as live:
        assert live.run_action(load_actions(page / "actions.py")[0]) is None
        runs = live.page.evaluate("() => runs")
        assert live.clock.fallback is None
    # a few milliseconds only: on a loaded machine 100 message round trips per millisecond of page
    # time can fall behind the wall clock far enough for the page to go over to the real clock
    assert runs == 100 * 5  # the click's millisecond and the 4 slept


# --- what the virtual clock cannot do: the page goes over to the real clock ----------------------


def test_a_page_waiting_for_its_clock_in_a_busy_loop_is_rendered_on_the_real_clock(renderer: PageRenderer,
                                                                                  tmp_path: Path):
    script = ("document.getElementById('go').addEventListener('click', () => {"
              "  const until = Date.now() + 200; while (Date.now() < until) {}"
              "  document.getElementById('out').textContent = 'waited'; });")
    page = page_with(tmp_path / "busy-wait", CLICK_AND_SLEEP, script_js=script,
                     index_html="<!doctype html><p id='out'>idle</p><button id='go'>go</button>"
                                "<script src='script.js'></script>")
    result = render(renderer, page, "virtual")
    assert result.clock == "real" and result.clock_fallback is not None and "busy loop" in result.clock_fallback
    assert not result.unresponsive and texts(result, "out") == ["idle", "waited"]
    # asked for the real clock, the page simply runs on it
    real = render(renderer, page, "real")
    assert real.clock == "real" and real.clock_fallback is None and texts(real, "out") == ["idle", "waited"]


def test_a_page_whose_timers_cannot_keep_up_with_time_is_rendered_on_the_real_clock(renderer: PageRenderer,
                                                                                   tmp_path: Path):
    # each run computes for tens of milliseconds, every 4 ms: a real browser skips the runs it has
    # no time for; the virtual clock would run every one of them, ever further behind the wall clock
    script = ("let sum = 0; document.getElementById('go').addEventListener('click', () => setInterval(() => {"
              "  for (let i = 0; i < 3e7; i++) sum += i % 7;"
              "  document.getElementById('out').textContent = 'busy'; }, 4));")
    actions = ("from selenium.webdriver.common.by import By\nimport time\n\n"
               "def go(driver):\n    driver.find_element(By.ID, 'go').click()\n    time.sleep(3)\n\n"
               "actions = [go]\n")
    page = page_with(tmp_path / "behind", actions, script_js=script,
                     index_html="<!doctype html><p id='out'>idle</p><button id='go'>go</button>"
                                "<script src='script.js'></script>")
    result = render(renderer, page, "virtual")
    assert result.clock == "real" and result.clock_fallback is not None and "behind" in result.clock_fallback
    assert not result.unresponsive and texts(result, "out") == ["idle", "busy"]


# --- a page that really hangs is still stopped ---------------------------------------------------


def test_a_page_that_really_hangs_is_still_killed_by_the_watchdog(renderer: PageRenderer, tmp_path: Path):
    actions = "actions = []\n"
    loading = page_with(tmp_path / "hangs-loading", actions,
                        index_html="<!doctype html><p>x</p><script>while (true) {}</script>")
    result = render(renderer, loading, "virtual")
    assert result.states == [] and result.load_error is not None and "did not finish" in result.load_error
    assert result.clock == "virtual" and result.clock_fallback is None  # a hang is no reason to render again
    ticking = page_with(tmp_path / "hangs-ticking", CLICK_AND_SLEEP,
                        index_html="<!doctype html><button id='go'>go</button><script>"
                                   "let hang = false; setInterval(() => { if (hang) for (;;) {} });"
                                   "document.getElementById('go').onclick = () => { hang = true; };</script>")
    result = render(renderer, ticking, "virtual")
    assert result.unresponsive and result.clock_fallback is None
    assert result.states[1].action_error is not None and result.states[1].action_error.startswith("PageUnresponsive")


# --- one evaluation, one kind of clock -----------------------------------------------------------


@pytest.mark.parametrize("busy", ["generated", "target"])
def test_when_either_page_falls_back_both_pages_of_the_evaluation_run_on_the_real_clock(tmp_path: Path, busy: str):
    from evaluators.base import ScenarioSpec
    from evaluators.runner import effective_settings
    from evaluators.webui.env import WebUIEpisode
    from evaluators.webui.parsing import CodeWrite

    body = ("<p id='out' data-filter-by='has_text' data-evalby='text|color'>idle</p>"
            "<button id='go' data-filter-by='text' data-evalby='text'>go</button>")
    plain = (f"<!doctype html>{body}<script>document.getElementById('go').onclick = () => "
             "{ document.getElementById('out').textContent = 'waited'; };</script>")
    # the same page, except that it waits for its clock in a busy loop before it answers
    waiting = (f"<!doctype html>{body}<script>document.getElementById('go').onclick = () => {{"
               "const until = Date.now() + 100; while (Date.now() < until) {} "
               "document.getElementById('out').textContent = 'waited'; };</script>")
    target = page_with(tmp_path / "target", CLICK_AND_SLEEP, index_html=waiting if busy == "target" else plain)
    spec = ScenarioSpec(env="webui", key=f"fallback-{busy}", data={}, resource_path=target)
    episode = WebUIEpisode(spec, effective_settings("webui", "global"))
    try:
        episode.step(CodeWrite(kind="html", code=waiting if busy == "generated" else plain))
        evaluation = episode.score_details()
        assert episode._target.clock == episode._generated.clock == "real"
    finally:
        episode.close()
    assert evaluation["aes"] == pytest.approx(1.0)
    assert evaluation["clock"] == "real" and evaluation["clock_asked"] == "virtual"
    assert evaluation["clock_fallback"]["page"] == busy
    assert "busy loop" in evaluation["clock_fallback"]["reason"]
    assert evaluation["clock_note"].startswith(f"Both pages ran on the real clock because the {busy} page")
