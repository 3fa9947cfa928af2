"""Pages sleep on the browser's virtual clock: the page sees the time pass, the states are those of real time.
Every fixture page scoring the same on both clocks is checked in test_webui_fixture_pages."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluators.webui.clock import CLOCKS, ClockKind
from evaluators.webui.live_page import NAVIGATION_START_GRACE_SECONDS
from evaluators.webui.render import PageRenderer
from evaluators.webui.selenium_compat import load_actions

pytestmark = pytest.mark.integration



@pytest.fixture(scope="module")
def renderer() -> Iterator[PageRenderer]:
    with PageRenderer(action_timeout=3.0, load_timeout=5.0, kill_grace=2.0) as shared:
        yield shared


# --- what a page sees while an action sleeps -----------------------------------------------------

# A click starts a 4 s transition, a 4 s CSS animation, a 1 s transition, two timers and a
# requestAnimationFrame loop; the page writes down when each of them ran, on its own clock.
TIMED_PAGE = """<!doctype html><html><head><style>
#bar { width: 0px; height: 10px; background: red; transition: width 4s linear; }
#bar.on { width: 400px; }
#grow { width: 0px; height: 10px; background: blue; }
#grow.on { animation: grow 4s linear forwards; }
@keyframes grow { from { width: 0px; } to { width: 400px; } }
#short { width: 0px; height: 10px; background: green; transition: width 1s linear; }
#short.on { width: 100px; }
</style></head><body>
<div id="bar"></div><div id="grow"></div><div id="short"></div><button id="go">go</button>
<script>
window.seen = {frames: 0};
document.getElementById('short').addEventListener('transitionend', () => {
  seen.shortEnded = performance.now() - seen.clicked;
});
document.getElementById('go').addEventListener('click', () => {
  seen.clicked = performance.now();
  seen.clickedDate = Date.now();
  for (const id of ['bar', 'grow', 'short']) document.getElementById(id).classList.add('on');
  setTimeout(() => { seen.timer1900 = performance.now() - seen.clicked; }, 1900);
  setTimeout(() => { seen.timer2100 = performance.now() - seen.clicked; }, 2100);
  const frame = (stamp) => {
    seen.frames++;
    seen.lastFrame = stamp - seen.clicked;
    if (seen.frames < 1000) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
});
</script></body></html>"""

READ_SEEN = """() => Object.assign({}, seen, {
  elapsed: performance.now() - seen.clicked, dateElapsed: Date.now() - seen.clickedDate,
  bar: parseFloat(getComputedStyle(document.getElementById('bar')).width),
  grow: parseFloat(getComputedStyle(document.getElementById('grow')).width),
  short: parseFloat(getComputedStyle(document.getElementById('short')).width)})"""


def page_with(root: Path, html: str, actions: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "index.html").write_text(html, encoding="utf-8")
    (root / "actions.py").write_text(actions, encoding="utf-8")
    return root


def seen_after_actions(renderer: PageRenderer, folder: Path, clock: ClockKind) -> dict[str, Any]:
    with renderer.open_page(folder, settle_ms=300, clock=clock) as live:
        for action in load_actions(folder / "actions.py"):
            assert live.run_action(action) is None
        seen: dict[str, Any] = live.page.evaluate(READ_SEEN)
        return seen


CLICK_AND_SLEEP = ("from selenium.webdriver.common.by import By\nimport time\n\n"
                   "def go(driver):\n    driver.find_element(By.ID, 'go').click()\n    time.sleep(2)\n\n"
                   "actions = [go]\n")


def test_a_two_second_sleep_moves_timers_frames_dates_animations_and_transitions_by_two_seconds(
        renderer: PageRenderer, tmp_path: Path):
    seen = seen_after_actions(renderer, page_with(tmp_path / "timed", TIMED_PAGE, CLICK_AND_SLEEP), "virtual")
    # the page saw exactly the slept time pass, on every clock it can read
    assert seen["elapsed"] == 2000 and seen["dateElapsed"] == 2000
    assert seen["timer1900"] == 1900 and "timer2100" not in seen
    # an animation frame every 16 ms, the last one within a frame of the end of the sleep
    assert 120 <= seen["frames"] <= 126 and 1984 <= seen["lastFrame"] <= 2000
    # half of the 4 s transition and of the 4 s animation (400 px each); the 1 s transition is over,
    # and its transitionend was dispatched when it ended, not when the sleep did
    assert seen["bar"] == pytest.approx(200, abs=2) and seen["grow"] == pytest.approx(200, abs=2)
    assert seen["short"] == 100 and 1000 <= seen["shortEnded"] <= 1020


def test_the_same_sleep_in_real_time_shows_the_page_the_same_two_seconds(renderer: PageRenderer, tmp_path: Path):
    seen = seen_after_actions(renderer, page_with(tmp_path / "timed", TIMED_PAGE, CLICK_AND_SLEEP), "real")
    # wall-clock time only ever runs late on a busy machine: lower bounds
    assert seen["elapsed"] >= 2000 and seen["dateElapsed"] >= 1999
    assert 1900 <= seen["timer1900"] and seen["frames"] >= 60
    assert seen["bar"] >= 190 and seen["grow"] >= 190  # a real transition starts at the next frame
    # A transition's clock is the frame's: its start is stamped when the frame began, which on a busy
    # machine can be a few milliseconds before the click handler read performance.now().
    assert seen["short"] == 100 and seen["shortEnded"] >= 1000 - 50


def test_a_click_a_half_second_sleep_and_a_click_stay_two_single_clicks(renderer: PageRenderer, tmp_path: Path):
    html = ("<!doctype html><button id='go'>go</button><script>window.seen = {details: [], doubles: 0};"
            "const b = document.getElementById('go');"
            "b.addEventListener('click', e => seen.details.push(e.detail));"
            "b.addEventListener('dblclick', () => seen.doubles++);</script>")
    actions = ("from selenium.webdriver.common.by import By\nimport time\n\n"
               "def twice(driver):\n    b = driver.find_element(By.ID, 'go')\n    b.click()\n    time.sleep(0.5)\n"
               "    b.click()\n\nactions = [twice]\n")
    folder = page_with(tmp_path / "clicks", html, actions)
    with renderer.open_page(folder, clock="virtual") as live:
        assert live.run_action(load_actions(folder / "actions.py")[0]) is None
        assert live.page.evaluate("() => seen") == {"details": [1, 1], "doubles": 0}


def test_a_covered_click_is_retried_on_the_pages_time_until_a_timer_uncovers_it(renderer: PageRenderer,
                                                                                tmp_path: Path):
    html = ("<!doctype html><button id='go' onclick='seen.clicked = performance.now()'>go</button>"
            "<div id='cover' style='position:fixed;inset:0'></div><script>window.seen = {};</script>")
    actions = ("from selenium.webdriver.common.by import By\n\n"
               "def go(driver):\n    driver.find_element(By.ID, 'go').click()\n\nactions = [go]\n")
    folder = page_with(tmp_path / "covered", html, actions)
    with renderer.open_page(folder, settle_ms=300, clock="virtual") as live:
        # set once the clock stands still: a timer set while the page loads runs on the wall clock
        # until the load event, and a slow load on a busy host would let it fire before the click
        live.page.evaluate("() => setTimeout(() => { document.getElementById('cover').remove();"
                           " seen.uncovered = performance.now(); }, 800)")
        assert live.run_action(load_actions(folder / "actions.py")[0]) is None
        seen = live.page.evaluate("() => seen")
    # the retry's 50 ms waits passed on the page's clock: the click came right after the cover went
    assert 0 <= seen["clicked"] - seen["uncovered"] <= 60


def test_a_timer_that_loops_forever_during_a_sleep_is_still_stopped(renderer: PageRenderer, tmp_path: Path):
    html = "<!doctype html><button id='go' onclick='setTimeout(() => { for (;;) {} }, 500)'>go</button>"
    actions = ("from selenium.webdriver.common.by import By\nimport time\n\n"
               "def go(driver):\n    driver.find_element(By.ID, 'go').click()\n    time.sleep(1)\n\n"
               "def again(driver):\n    time.sleep(1)\n\nactions = [go, again]\n")
    folder = page_with(tmp_path / "loop", html, actions)
    result = renderer.render_states(folder, load_actions(folder / "actions.py"), screenshots=False, clock="virtual")
    assert result.unresponsive
    assert result.states[1].action_error is not None and result.states[1].action_error.startswith("PageUnresponsive")
    assert result.states[2].action_error is not None and result.states[2].action_error.startswith("not run")


@pytest.mark.parametrize("clock", CLOCKS)
def test_a_form_submit_reload_keeps_date_running_forward_and_the_new_documents_timers_run(
        renderer: PageRenderer, tmp_path: Path, clock: ClockKind):
    # The submit time travels in the form's own query: Chromium may not hand a sessionStorage
    # write made as the document leaves to the next document (5 of 300 writes from the navigate
    # event were lost on a busy machine), which left this page without its timer.
    html = ("<!doctype html><form><input name='q' value='x'><input type='hidden' name='before'>"
            "<button id='send'>send</button></form>"
            "<p id='out'>first</p><script>"
            "const before = new URLSearchParams(location.search).get('before');"
            "if (before) setTimeout(() => { document.getElementById('out').textContent ="
            " Date.now() >= Number(before) ? 'later' : 'earlier'; }, 300);"
            "document.querySelector('form').addEventListener('submit', () => {"
            " document.querySelector('[name=before]').value = String(Date.now()); });</script>")
    actions = ("from selenium.webdriver.common.by import By\nimport time\n\n"
               "def send(driver):\n    time.sleep(2)\n    driver.find_element(By.ID, 'send').click()\n"
               "    time.sleep(1)\n\nactions = [send]\n")
    folder = page_with(tmp_path / "reload", html, actions)
    result = renderer.render_states(folder, load_actions(folder / "actions.py"), screenshots=False, clock=clock)
    out = next(e for e in result.states[-1].elements if e.attributes.get("id") == "out")
    assert result.states[-1].action_error is None and out.text == "later"


def test_a_reload_whose_request_the_browser_is_slow_to_send_still_gets_the_sleep_after_the_submit(
        renderer: PageRenderer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # A busy browser can take longer than any fixed grace to send the new document's request:
    # the wait rests on the page's own navigate event, and ends when the route sees the request.
    # the submit comes from a timer: the click returns before any navigation, as on a busy host
    # where Playwright's input no longer waits for a navigation that starts late
    html = ("<!doctype html><form><input name='q' value='x'></form><button id='send' type='button' "
            "onclick=\"setTimeout(() => document.querySelector('form').requestSubmit())\">send</button>"
            "<p id='out'>first</p><script>"
            "if (location.search) setTimeout(() => { document.getElementById('out').textContent = 'later'; }, 300);"
            "</script>")
    actions = ("from selenium.webdriver.common.by import By\nimport time\n\n"
               "def send(driver):\n    driver.find_element(By.ID, 'send').click()\n    time.sleep(1)\n\n"
               "actions = [send]\n")
    folder = page_with(tmp_path / "slow-reload", html, actions)
    # The request is held for at least 1.5 s of the action's time, and on a busy machine each short
    # wait while it is held lasts longer than it says: the module's 3 s left the click and the reload
    # around it too little, and the watchdog stopped a page that was only slow.
    monkeypatch.setattr(renderer, "action_timeout", 15.0)
    with renderer.open_page(folder, clock="virtual") as live:
        held: list[Any] = []
        waited = {"ms": 0.0}

        def hold(route: Any) -> None:
            if route.request.is_navigation_request():
                held.append(route)
            else:
                route.fallback()

        live.context.route("**/index.html?*", hold)
        real_wait = live.page.wait_for_timeout

        def wait_then_release(ms: float) -> None:
            real_wait(ms)
            if held:
                waited["ms"] += ms
                if waited["ms"] > (NAVIGATION_START_GRACE_SECONDS + 0.5) * 1000:
                    while held:
                        held.pop().fallback()

        live.page.wait_for_timeout = wait_then_release  # type: ignore[method-assign,assignment]
        assert live.run_action(load_actions(folder / "actions.py")[0]) is None
        state = live.capture("send", None, screenshot=False)
    assert waited["ms"] > NAVIGATION_START_GRACE_SECONDS * 1000  # the request really came late
    out = next(e for e in state.elements if e.attributes.get("id") == "out")
    assert out.text == "later"


def test_a_mailto_link_or_a_navigation_the_page_cancels_does_not_count_as_leaving(renderer: PageRenderer,
                                                                                   tmp_path: Path):
    html = ("<!doctype html><a id='mail' href='mailto:someone@example.org'>mail</a>"
            "<a id='stay' href='other.html'>stay</a><script>window.seen = 0;"
            "navigation.addEventListener('navigate', (e) => { if (e.destination.url.endsWith('other.html'))"
            " e.preventDefault(); });"
            "document.body.addEventListener('click', () => setTimeout(() => { seen += 1; }, 300));</script>")
    actions = ("from selenium.webdriver.common.by import By\nimport time\n\n"
               "def mail(driver):\n    driver.find_element(By.ID, 'mail').click()\n    time.sleep(1)\n\n"
               "def stay(driver):\n    driver.find_element(By.ID, 'stay').click()\n    time.sleep(1)\n\n"
               "actions = [mail, stay]\n")
    folder = page_with(tmp_path / "no-leave", html, actions)
    with renderer.open_page(folder, clock="virtual") as live:
        advances: list[tuple[int, bool]] = []
        advance = live.clock._advance  # type: ignore[attr-defined]

        def recorded(*args: Any, **kwargs: Any) -> tuple[int, bool]:
            advances.append(advance(*args, **kwargs))
            return advances[-1]

        live.clock._advance = recorded  # type: ignore[attr-defined]
        for action in load_actions(folder / "actions.py"):
            assert live.run_action(action) is None
        assert live.page.evaluate("() => seen") == 2
        assert live.page.evaluate("() => location.pathname.endsWith('index.html')")
    assert advances and not any(leaving for _, leaving in advances)
    assert sum(done for done, _ in advances) == 2000


def test_a_transitionend_handler_attribute_still_runs_when_its_transition_ends(renderer: PageRenderer,
                                                                             tmp_path: Path):
    # no addEventListener call to notice: the clock finds the handler attribute itself
    html = TIMED_PAGE.replace('<div id="short"></div>',
                              '<div id="short" ontransitionend="seen.shortEnded = performance.now() - seen.clicked">'
                              '</div>').replace("document.getElementById('short').addEventListener", "void")
    seen = seen_after_actions(renderer, page_with(tmp_path / "attribute", html, CLICK_AND_SLEEP), "virtual")
    assert seen["short"] == 100 and 1000 <= seen["shortEnded"] <= 1020
