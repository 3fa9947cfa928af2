"""The site on a wide screen, on a phone (390 × 844) and in the dark colour scheme, in headless Chromium.

The header's links show on a wide screen. In dark mode, pages and charts take the dark colours, and
follow the system setting when it changes. (Every kind of page on a phone: test_every_page_in_browser.py.)
"""
from __future__ import annotations

import pytest

from leaderboard.tests.site_pages import PHONE, run_submission

pytestmark = pytest.mark.integration

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
