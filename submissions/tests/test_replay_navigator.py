"""Replay pages in headless Chromium: the Football navigator (pitch, frame, decisions, timeline and
reward chart as one), and the WebUI states side by side."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from submissions.models import Attempt
from submissions.tests.replay_fixtures import finished_submission
from submissions.tests.test_football_replay import football_attempt

pytestmark = pytest.mark.integration

MARKER = "(() => { const s = document.getElementById('football-chart').layout.shapes; return s[s.length - 1].x0; })()"


@pytest.fixture
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def _football_replay(live_server, site_page, media_root: Path) -> tuple[Any, list[str]]:
    """A Football attempt's replay open on a desktop-sized page, its reward chart drawn."""
    attempt = football_attempt(media_root)
    page, errors = site_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{live_server.url}/attempts/{attempt.id}/replay/")
    page.wait_for_selector("#football-chart .plot-container svg.main-svg", timeout=15_000)
    return page, errors


def _shown(page) -> dict[str, str | None]:
    """What each part of the navigator shows now."""
    return {
        "step": page.locator("#football-step").inner_text(),
        "frame": (page.locator("#football-frame").get_attribute("src") or "").rsplit("/", 1)[-1],
        "decision": page.locator("#football-segments li.active").get_attribute("data-decision"),
        "timeline": page.locator("#step-list li.active").inner_text(),
    }


def test_a_decision_the_arrow_keys_and_the_chart_each_move_the_whole_football_navigator(
        live_server, site_page, transactional_db, media_root, wait_for):
    page, errors = _football_replay(live_server, site_page, media_root)
    assert page.locator("#step-list li.active").inner_text() == "start"

    # A click on a decision: its first engine step, its frame, its timeline entry and the chart's marker.
    page.locator("#football-segments li", has_text="short_pass").click()
    assert _shown(page) == {"step": "Step 2 / 20", "frame": "frame_0002.png", "decision": "2",
                            "timeline": "2. short_pass"}
    wait_for(lambda: page.evaluate(MARKER) == 2, 10, "the chart's marker at step 2")

    page.locator("h1").click()  # keys go to the page, not to a focused control
    page.keyboard.press("ArrowRight")
    assert _shown(page) == {"step": "Step 13 / 20", "frame": "frame_0003.png", "decision": "3",
                            "timeline": "3. top_right"}
    wait_for(lambda: page.evaluate(MARKER) == 13, 10, "the chart's marker at step 13")
    page.keyboard.press("ArrowLeft")
    assert _shown(page)["step"] == "Step 2 / 20" and _shown(page)["timeline"] == "2. short_pass"

    # A click on the chart at engine step 16 (inside decision 3).
    page.locator("#football-chart").scroll_into_view_if_needed()
    box = page.locator("#football-chart svg.main-svg").first.bounding_box()
    assert box is not None
    where = page.evaluate("""(() => { const l = document.getElementById('football-chart')._fullLayout;
        return [l.xaxis._offset + l.xaxis.l2p(16), l.yaxis._offset + l.yaxis._length / 2]; })()""")
    page.mouse.move(box["x"] + where[0], box["y"] + where[1])  # a chart's click comes from what it hovers
    page.mouse.click(box["x"] + where[0], box["y"] + where[1])
    wait_for(lambda: page.locator("#football-step").inner_text() == "Step 16 / 20", 10, "the chart's click")
    assert _shown(page) == {"step": "Step 16 / 20", "frame": "frame_0003.png", "decision": "3",
                            "timeline": "3. top_right"}
    wait_for(lambda: page.evaluate(MARKER) == 16, 10, "the chart's marker at step 16")
    assert errors == []


def test_the_reward_chart_puts_zero_at_the_same_height_on_both_axes_with_its_title_in_view(
        live_server, site_page, transactional_db, media_root):
    page, errors = _football_replay(live_server, site_page, media_root)
    axes = page.evaluate("""(() => { const l = document.getElementById('football-chart')._fullLayout;
        return [l.yaxis.range, l.yaxis2.range, l.yaxis.dtick, l.yaxis2.dtick]; })()""")
    (low, high), (low2, high2), dtick, dtick2 = axes
    assert low < 0 < high and low2 < 0 < high2  # the log has a stolen ball (negative) and gains
    assert low / (high - low) == pytest.approx(low2 / (high2 - low2))
    for value, step in ((low, dtick), (high, dtick), (low2, dtick2), (high2, dtick2)):
        assert value / step == pytest.approx(round(value / step))
    chart = page.locator("#football-chart").bounding_box()
    title = page.locator("#football-chart .gtitle").bounding_box()
    assert chart is not None and title is not None
    assert title["y"] >= chart["y"] and title["y"] + title["height"] <= chart["y"] + chart["height"]
    assert errors == []


def test_the_reward_chart_takes_the_new_colours_when_the_system_turns_dark_with_the_page_open(
        live_server, site_page, transactional_db, media_root, wait_for):
    page, errors = _football_replay(live_server, site_page, media_root)
    colours = """(() => { const c = document.getElementById('football-chart');
        const line = c.data.find((t) => t.name === 'cumulative reward');
        return [line.line.color, c.layout.yaxis.zerolinecolor, c.layout.paper_bgcolor]; })()"""
    assert page.evaluate(colours) == ["#1d2330", "#5f6b7a", "#fff"]
    page.evaluate("window.__before = document.getElementById('football-chart').layout.shapes.slice(-1)[0].x0")
    page.emulate_media(color_scheme="dark")
    # The line and the zero line are drawn in the scheme's text colours: a dark line on a dark chart
    # would vanish.
    wait_for(lambda: page.evaluate(colours)[0] == "#e2e8f0", 10, "the cumulative line to turn light")
    line, zeroline, background = page.evaluate(colours)
    assert zeroline == "#9aa6b5" and background != "#fff"
    assert page.evaluate(MARKER) == page.evaluate("window.__before")  # the redraw keeps the shown step
    assert errors == []


def _webui_attempt(media_root: Path) -> Attempt:
    """A WebUI attempt of two states: the first rendered on both sides, the second with no generated
    screenshot (its click failed)."""
    scenario, submission = finished_submission(env="webui", scenario_key="faq-accordion~2", team="Web lab",
                                               model="Builder", flow="global")
    attempt = Attempt.objects.create(
        submission=submission, scenario=scenario, repeat=0, status=Attempt.Status.SCORED, score=40.0,
        outcome="interaction_error", trajectory_path=f"trajectories/{submission.id}/web",
        details={"outcome": "interaction_error", "load_error": None,
                 "breakdown": {"aes": 0.4, "parse": 0.0, "render": 0.0, "interaction": 0.5, "unmatched": 0.1,
                               "attribute": 0.0}})
    directory = media_root / attempt.trajectory_path
    directory.mkdir(parents=True)
    for name, colour in (("state00_target.png", "#2457c5"), ("state00_generated.png", "#c0392b"),
                         ("state01_target.png", "#1f7a46")):
        image = io.BytesIO()
        Image.new("RGB", (192, 108), colour).save(image, format="PNG")
        (directory / name).write_bytes(image.getvalue())
    states = [{"name": "initial", "target_frame": "state00_target.png", "generated_frame": "state00_generated.png",
               "action_error": None},
              {"name": "after click", "target_frame": "state01_target.png", "generated_frame": None,
               "action_error": "no element matches #faq-2"}]
    (directory / "trajectory.json").write_text(json.dumps({
        "env": "webui", "scenario": scenario.key, "flow": "global", "initial_frame": None,
        "artifacts": {"kind": "webui", "states": states, "code": {"html": "<p>hi</p>"}, "trace": None},
        "status": "scored", "score": 40.0, "calls": [], "steps": []}))
    return attempt


def test_a_webui_replay_shows_target_and_generated_side_by_side_and_says_why_one_is_missing(
        live_server, site_page, transactional_db, media_root, wait_for):
    attempt = _webui_attempt(media_root)
    page, errors = site_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{live_server.url}/attempts/{attempt.id}/replay/")
    first, second = page.locator(".webui-state").nth(0), page.locator(".webui-state").nth(1)
    wait_for(lambda: page.evaluate("Array.from(document.querySelectorAll('.shot img'))"
                                   ".every(i => i.complete && i.naturalWidth > 0)"), 15, "the screenshots to decode")
    # Both images of the first state, side by side, each a link to the full-size image.
    target, generated = first.locator(".shot img").nth(0), first.locator(".shot img").nth(1)
    assert target.is_visible() and generated.is_visible()
    left, right = target.bounding_box(), generated.bounding_box()
    assert left is not None and right is not None
    assert left["x"] + left["width"] <= right["x"] and abs(left["y"] - right["y"]) < 1
    links = first.locator(".shot a.enlarge")
    assert [links.nth(i).get_attribute("href").rsplit("/", 1)[-1] for i in range(2)] == [
        "state00_target.png", "state00_generated.png"]
    full = page.request.get(live_server.url + links.nth(1).get_attribute("href"))
    assert full.ok and full.headers["content-type"] == "image/png"
    # The second state: its target, and a placeholder with the reason instead of an empty box.
    assert second.locator(".shot img").count() == 1
    placeholder = second.locator(".shot.empty")
    assert placeholder.inner_text() == "not rendered: its action failed (no element matches #faq-2)"
    # The breakdown reads as what was kept and what was lost, each label under its own segment.
    assert "lost to interaction 50.0%" in page.locator(".lost-summary").inner_text()
    labels = page.locator("svg.lostlabels text")
    assert [labels.nth(i).text_content() for i in range(labels.count())] == ["interaction 50.0%", "unmatched 10.0%"]
    for name in ("interaction", "unmatched"):
        segment = page.locator(f".lostbar rect.seg.{name}").bounding_box()
        label = page.locator(f"svg.lostlabels text.{name}").bounding_box()
        assert segment is not None and label is not None
        centre = segment["x"] + segment["width"] / 2
        assert label["x"] <= centre <= label["x"] + label["width"], name
        assert label["y"] >= segment["y"] + segment["height"]
    assert page.locator(".lostbar rect.seg.parse").count() == 0  # nothing lost to parse: no segment, no label
    assert errors == []
