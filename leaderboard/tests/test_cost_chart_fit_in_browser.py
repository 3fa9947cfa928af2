"""The cost charts keep their size and their labels inside the plot, in headless Chromium at desktop and phone
sizes: a window resize (a phone rotating, its address bar showing or hiding) must not squash a chart, and no
point's label may run past the plot's edge."""
from __future__ import annotations

import pytest

from leaderboard.tests.test_cost_in_browser import _seed

pytestmark = pytest.mark.integration

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
RESIZED = {"desktop": {"width": 1200, "height": 900}, "phone": {"width": 390, "height": 700}}
PAGES = {"board": "/boards/sokoban/global/mini/cost/?suite=fixture&x=tokens", "overview": "/cost/?subset=mini"}

# Each chart's height, and whether its x axis's tick labels lie within the chart's box.
MEASURE = """() => [...document.querySelectorAll('[data-cost-chart]')].map((node) => {
    const chart = node.getBoundingClientRect();
    const ticks = [...node.querySelectorAll('.xtick text')].map((t) => t.getBoundingClientRect());
    return {height: chart.height,
            xAxisShown: ticks.length > 0 && ticks.every((t) => t.bottom <= chart.bottom && t.top >= chart.top)}; })"""
# Every point label's box against its plot area's box (plotly's own record of the plot area), in page pixels.
LABELS = """() => [...document.querySelectorAll('[data-cost-chart]')].flatMap((node) => {
    const box = node.getBoundingClientRect(), size = node._fullLayout._size;
    const area = {left: box.left + size.l, right: box.left + size.l + size.w,
                  top: box.top + size.t, bottom: box.top + size.t + size.h};
    return [...node.querySelectorAll('.textpoint text')].map((t) => { const r = t.getBoundingClientRect();
      return {label: t.textContent, inside: r.left >= area.left - 0.5 && r.right <= area.right + 0.5
              && r.top >= area.top - 0.5 && r.bottom <= area.bottom + 0.5}; }); })"""
RESIZE_ALL = """() => Promise.all([...document.querySelectorAll('[data-cost-chart]')]
    .filter((n) => n._fullLayout).map((n) => window.Plotly.Plots.resize(n)))"""


@pytest.fixture
def boards(transactional_db, fixture_scenarios):
    # Long names, a cheap weak entry at the far left and a dear strong one at the far right, on two boards.
    _seed("Idle agent", 1_000, 50, lambda i, r: 0.0, None)
    _seed("Random agent with a long name", 8_000, 400, lambda i, r: 30.0 + i + r, None)
    _seed("Strong model", 20_000, 1_000, lambda i, r: 70.0 + 2.0 * i + r, None)
    _seed("Middling model", 16_000, 800, lambda i, r: 20.0 + i + r, None)
    _seed("Web model", 3_000, 300, lambda i, r: 80.0 + i, None, env="webui")
    _seed("Other web model", 6_000, 300, lambda i, r: 40.0 + i, None, env="webui")


def _open(live_server, site_page, size: str, path: str):
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}{path}")
    page.wait_for_selector("[data-cost-chart] svg.main-svg", timeout=15_000)
    page.wait_for_function("() => [...document.querySelectorAll('[data-cost-chart]')].every((n) => n._fullLayout)")
    return page, errors


@pytest.mark.parametrize("where", PAGES)
@pytest.mark.parametrize("size", SIZES)
def test_a_cost_chart_keeps_its_height_and_x_axis_after_the_window_is_resized(live_server, site_page, boards,
                                                                               size, where):
    page, errors = _open(live_server, site_page, size, PAGES[where])
    before = page.evaluate(MEASURE)
    assert before and all(chart["height"] >= 400 and chart["xAxisShown"] for chart in before)
    page.set_viewport_size(RESIZED[size])
    # The same re-layout the browser's resize event triggers, awaited: plotly re-reads each container's size.
    page.evaluate(RESIZE_ALL)
    after = page.evaluate(MEASURE)
    assert [chart["height"] for chart in after] == [chart["height"] for chart in before]
    assert all(chart["xAxisShown"] for chart in after)
    assert errors == []


@pytest.mark.parametrize("where", PAGES)
@pytest.mark.parametrize("size", SIZES)
def test_every_cost_chart_label_lies_inside_its_plot_area(live_server, site_page, boards, size, where):
    page, errors = _open(live_server, site_page, size, PAGES[where])
    labels = page.evaluate(LABELS)
    assert len(labels) >= 4
    assert [label["label"] for label in labels if not label["inside"]] == []
    assert errors == []
