"""The site on a phone (390 × 844) and in the dark colour scheme, in headless Chromium.

Every kind of page (site_pages.py) must fit the screen's width: wide tables scroll inside their own
box, and nothing makes the page itself scroll sideways. The header's links fold into a menu button.
In dark mode, pages and charts take the dark colours, and follow the system setting when it changes.
"""
from __future__ import annotations

from typing import Any

import pytest

from leaderboard.tests.site_pages import run_submission, visit_site_pages

pytestmark = pytest.mark.integration

PHONE = {"width": 390, "height": 844}

# The page's width against the window's; when the page is wider, the outermost elements sticking out on
# the right, leaving out those inside a box that clips or scrolls them (a table in its scrolling wrapper).
OVERFLOW_JS = """() => {
  const width = window.innerWidth;
  const scrollWidth = document.documentElement.scrollWidth;
  const offenders = [];
  if (scrollWidth > width) {
    const contained = (el) => {
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        if (getComputedStyle(p).overflowX !== "visible") return true;
      }
      return false;
    };
    document.querySelectorAll("body *").forEach((el) => {
      const box = el.getBoundingClientRect();
      // Only the outermost element sticking out: its contents go with it.
      const parent = el.parentElement.getBoundingClientRect();
      if (box.right > width && box.width > 0 && !(parent.right > width) && !contained(el)) {
        const name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
          + (el.classList.length ? "." + Array.from(el.classList).join(".") : "");
        offenders.push(name + " (right " + Math.round(box.right) + ")");
      }
    });
  }
  // A chart in a box that clips it would not widen the page: it must fit the screen all the same.
  const charts = Array.from(document.querySelectorAll(".js-plotly-plot"))
    .map((plot) => [plot.id, plot.querySelector(".main-svg").getBoundingClientRect()])
    .filter(([, box]) => box.right > width || box.left < 0)
    .map(([id, box]) => "chart #" + id + " from " + Math.round(box.left) + " to " + Math.round(box.right));
  return { width: width, scrollWidth: scrollWidth, offenders: offenders.slice(0, 15), charts: charts };
}"""

# Relative luminance (0 black … 1 white) of an element's computed colour property.
LUMINANCE_JS = """([selector, property]) => {
  const node = document.querySelector(selector);
  if (!node) return null;
  const parts = getComputedStyle(node)[property].match(/[\\d.]+/g).map(Number);
  const [r, g, b] = parts.slice(0, 3).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}"""


def _overflow(page: Any, name: str) -> str | None:
    found = page.evaluate(OVERFLOW_JS)
    if found["scrollWidth"] <= found["width"] and not found["charts"]:
        return None
    return (f"{name}: {found['scrollWidth']}px wide on a {found['width']}px screen; sticking out: "
            f"{found['offenders'] + found['charts']}")


def test_no_page_is_wider_than_a_phone_screen_and_the_header_menu_opens(live_server, site_page, played):
    page, errors = site_page(viewport=PHONE)
    too_wide: list[str] = []
    for name in visit_site_pages(page, live_server.url, played):
        problem = _overflow(page, name)
        if problem:
            too_wide.append(problem)
    assert not too_wide, "\n".join(too_wide)
    assert not errors, errors

    # Signed out again: the menu holds the links to log in and to sign up.
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/queue/")
    menu = page.locator("header .site-menu > summary")
    header = page.locator("header")
    links = ["Boards", "Queue", "API", "Log in", "Sign up", "Submit a model"]
    assert menu.is_visible()
    for link in links:
        assert not header.get_by_role("link", name=link, exact=True).is_visible(), link
    menu.click()
    for link in links:
        shown = header.get_by_role("link", name=link, exact=True)
        assert shown.is_visible(), link
        box = shown.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (link, box)
    assert _overflow(page, "queue with the menu open") is None
    header.get_by_role("link", name="Sign up").click()
    page.wait_for_url("**/accounts/signup/")
    # The menu is a button for the keyboard too: Enter opens it.
    page.locator("header .site-menu > summary").focus()
    page.keyboard.press("Enter")
    assert page.locator("header").get_by_role("link", name="Log in").is_visible()
    assert not errors, errors


def test_on_a_wide_screen_the_header_shows_its_links_without_a_menu(live_server, site_page, transactional_db):
    page, errors = site_page(viewport={"width": 1300, "height": 900})
    page.goto(f"{live_server.url}/")
    header = page.locator("header")
    assert not header.locator(".site-menu > summary").is_visible()
    for link in ("Boards", "Queue", "API", "Log in", "Sign up", "Submit a model"):
        assert header.get_by_role("link", name=link, exact=True).is_visible(), link
    header.get_by_role("link", name="Sign up").click()
    page.wait_for_url("**/accounts/signup/")
    assert not errors, errors


def test_in_dark_mode_pages_are_dark_with_light_text_and_charts_follow_the_system_setting(
        live_server, site_page, transactional_db, fixture_scenarios, baseline_endpoint, wait_for):
    run_submission(baseline_endpoint("oracle").url, "Oracle agent", "sokoban", "online", baseline=True,
                   resolution=256, max_loop=8)
    page, errors = site_page(viewport=PHONE)

    def luminance(selector: str, property: str) -> float:
        value = page.evaluate(LUMINANCE_JS, [selector, property])
        assert value is not None, selector
        return float(value)

    page.goto(f"{live_server.url}/boards/sokoban/online/mini/?suite=fixture")
    assert luminance("body", "backgroundColor") > 0.8 and luminance("body", "color") < 0.1

    page.emulate_media(color_scheme="dark")
    for selector in ("body", "header.top", "table.board"):
        assert luminance(selector, "backgroundColor") < 0.05, selector
    assert luminance("body", "color") > 0.6
    # Even the muted text of a baseline row, and links, stay readable on the dark background.
    assert luminance("table.board tr.baseline td", "color") > 0.3
    assert luminance("main a", "color") > 0.3

    page.goto(f"{live_server.url}/boards/sokoban/online/mini/analysis/?suite=fixture")
    page.wait_for_load_state("networkidle")
    chart = ".js-plotly-plot .main-svg"
    wait_for(lambda: page.locator(chart).count() > 0, 20, "a chart to be drawn")
    assert luminance(chart, "backgroundColor") < 0.05
    assert page.evaluate("document.querySelector('.js-plotly-plot').layout.font.color") == "#e2e8f0"

    # The system turns light while the page is open: the chart redraws in light colours.
    page.emulate_media(color_scheme="light")
    wait_for(lambda: luminance(chart, "backgroundColor") > 0.9, 10, "the chart to turn light")
    assert page.evaluate("document.querySelector('.js-plotly-plot').layout.font.color") == "#1d2330"
    assert not errors, errors
