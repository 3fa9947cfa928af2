"""The analysis page's charts in headless Chromium: legends clear of the axis titles, best-of-N only
with repeats, its table kept inside its card."""
from __future__ import annotations

from typing import Any

import pytest

from catalogue.models import Scenario
from leaderboard.tests.test_analysis_in_browser import _seed, seeded_board  # noqa: F401 (a fixture)

pytestmark = pytest.mark.integration

CHARTS = ("#chart-errors", "#chart-best-of-n", "#chart-tag-0", "#chart-tag-1")


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def _box(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def test_no_legend_is_drawn_over_an_axis_title_or_outside_its_chart(live_server, site_page, seeded_board):  # noqa: F811
    # Long model names: their tick labels slant and push the x axis title down, where a legend placed
    # relative to the plot area would be.
    keys = sorted(Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True)
                  .values_list("key", flat=True))
    for i in range(3):
        _seed(f"An instruction-tuned vision language model, variant {i}", keys, lambda k, r, i=i: 5.0 * i + k + r)
    page, errors = site_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/analysis/?suite=fixture")
    for chart in CHARTS:
        page.wait_for_selector(f"{chart} svg.main-svg", timeout=15_000)
        legend = _box(page, f"{chart} .legend")
        frame = _box(page, chart)
        for title in (".g-xtitle", ".g-ytitle"):
            assert _overlap(legend, _box(page, f"{chart} {title}")) is False, (chart, title)
        # Below the plot area, and inside the chart's own box (not clipped; a pixel for the legend's
        # background rectangle, which reaches the figure's edge).
        assert legend["y"] >= _box(page, f"{chart} .g-xtitle")["y"], chart
        assert frame["y"] <= legend["y"] and legend["y"] + legend["height"] <= frame["y"] + frame["height"] + 1, chart
    assert errors == []


def test_the_best_of_n_table_scrolls_inside_its_card_beside_the_chart(live_server, site_page, seeded_board):  # noqa: F811
    page, errors = site_page(viewport={"width": 1000, "height": 900})
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/analysis/?suite=fixture")
    page.wait_for_selector("#chart-best-of-n svg.main-svg", timeout=15_000)
    card = page.locator("table.analysis-best").locator("xpath=..")
    assert card.evaluate("c => getComputedStyle(c).overflowX") == "auto"
    assert not _overlap(_box(page, "table.analysis-best >> xpath=.."), _box(page, "#chart-best-of-n"))
    assert errors == []


def test_one_repeat_per_scenario_gives_a_sentence_instead_of_a_best_of_n_curve(live_server, site_page,
                                                                             transactional_db, fixture_scenarios):
    keys = sorted(Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True)
                  .values_list("key", flat=True))
    submission = _seed("Single try", keys, lambda i, r: 10.0 * i)
    submission.attempts.filter(repeat__gt=0).delete()
    page, errors = site_page()
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/analysis/?suite=fixture")
    page.wait_for_selector("#chart-errors svg.main-svg", timeout=15_000)
    assert "one repeat gives no best-of-N curve" in page.locator("#best-of-n").inner_text()
    assert page.locator("#chart-best-of-n").count() == 0 and page.locator("table.analysis-best").count() == 0
    assert errors == []
