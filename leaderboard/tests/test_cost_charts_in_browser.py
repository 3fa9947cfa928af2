"""The cost charts in headless Chromium at desktop and phone sizes: points labelled with their models, a
log cost axis with free entries drawn at its floor and said so, one chart per environment on the page
across environments, and a model's prices on its page."""
from __future__ import annotations

import math

import pytest

from leaderboard.tests.test_cost_in_browser import _seed
from submissions.models import ModelEntry

pytestmark = pytest.mark.integration

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
FIGURE = """(id) => { const c = document.getElementById(id);
    return {type: c.layout.xaxis.type, range: c.layout.xaxis.range, yrange: c.layout.yaxis.range,
            traces: c.data.map((t) => ({name: t.name, mode: t.mode, x: t.x, text: t.text || null})),
            notes: (c.layout.annotations || []).map((a) => a.text)}; }"""


@pytest.fixture
def priced_boards(transactional_db, fixture_scenarios):
    _seed("Cheap model", 2_000, 100, lambda i, r: 20.0 + 2.0 * i + r, (0.5, 1.0))
    _seed("Strong model", 20_000, 1_000, lambda i, r: 70.0 + 2.0 * i + r, (3.0, 15.0))
    _seed("Free model", 5_000, 200, lambda i, r: 30.0 + i + r, (0.0, 0.0))


def _labels(page, chart: str) -> list[str]:
    return sorted(t.strip() for t in page.locator(f"#{chart} .textpoint text").all_text_contents())


@pytest.mark.parametrize("size", SIZES)
def test_the_cost_chart_labels_its_points_on_a_log_axis_and_draws_a_free_entry_at_its_floor(
        live_server, site_page, priced_boards, size):
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/cost/?suite=fixture")
    page.wait_for_selector("#chart-cost svg.main-svg", timeout=15_000)
    figure = page.evaluate(FIGURE, "chart-cost")
    assert figure["type"] == "log"
    assert _labels(page, "chart-cost") == ["Cheap model", "Free model", "Strong model"]
    points = {name: x for t in figure["traces"] if t["text"] for name, x in zip(t["text"], t["x"], strict=True)}
    cheapest = min(x for name, x in points.items() if name != "Free model")
    # The free entry sits at the floor, a decade below the cheapest priced one, inside the axis range.
    assert points["Free model"] == pytest.approx(10 ** (math.floor(math.log10(cheapest)) - 1))
    assert 10 ** figure["range"][0] < points["Free model"] < cheapest
    assert any("free" in note and "axis floor" in note for note in figure["notes"])
    assert "cost nothing" in page.locator("#chart-cost ~ p.hint").first.inner_text()
    page.screenshot(path=f"/tmp/shots/cost-{size}.png", full_page=True)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= SIZES[size]["width"]
    assert errors == []


@pytest.mark.parametrize("size", SIZES)
def test_the_page_across_environments_has_a_chart_per_board_each_on_its_own_score_scale(
        live_server, site_page, priced_boards, size):
    _seed("Page model", 3_000, 300, lambda i, r: 80.0 + i, (1.0, 2.0), env="webui")
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/cost/?suite=fixture")
    page.get_by_role("link", name="Every environment's cost chart").click()
    page.wait_for_url("**/cost/?subset=mini")
    page.wait_for_selector("#chart-cost-data-sokoban-global svg.main-svg", timeout=15_000)
    page.wait_for_selector("#chart-cost-data-webui-global svg.main-svg", timeout=15_000)
    sections = page.locator("section.cost-board").evaluate_all("(s) => s.map((n) => n.dataset.board)")
    assert {"sokoban/global/mini", "webui/global/mini", "football/online/mini"} <= set(sections)
    sokoban = page.evaluate(FIGURE, "chart-cost-data-sokoban-global")
    webui = page.evaluate(FIGURE, "chart-cost-data-webui-global")
    # Sokoban's costs span two decades; WebUI's single cost has nothing to span: a linear axis around it.
    assert sokoban["type"] == "log" and webui["type"] == "linear"
    assert _labels(page, "chart-cost-data-webui-global") == ["Page model"]
    assert _labels(page, "chart-cost-data-sokoban-global") == ["Cheap model", "Free model", "Strong model"]
    assert sokoban["yrange"] != webui["yrange"]  # each board's own score axis
    assert "No entry of this board" in page.locator("#cost-football-online").inner_text()
    page.screenshot(path=f"/tmp/shots/cost-overview-{size}.png", full_page=True)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= SIZES[size]["width"]
    assert errors == []


@pytest.mark.parametrize("size", SIZES)
def test_a_models_page_shows_the_prices_its_team_gave(live_server, site_page, priced_boards, size):
    cheap = ModelEntry.objects.get(name="Cheap model")
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/models/{cheap.id}/")
    prices = page.locator("#model-prices").inner_text()
    assert "$0.5 per million prompt tokens" in prices and "$1.0 per million completion tokens" in prices
    unpriced = ModelEntry.objects.create(team=cheap.team, name="Unpriced", is_baseline=True)
    page.goto(f"{live_server.url}/models/{unpriced.id}/")
    assert "none given" in page.locator("#model-prices").inner_text()
    assert errors == []


@pytest.mark.parametrize("size", SIZES)
def test_costs_close_together_get_a_linear_axis_that_fits_them(live_server, site_page, transactional_db,
                                                               fixture_scenarios, size):
    # 355, 372 and 391 tokens per scenario, no prices: the axis spans 352.12 … 393.88 (8 % room).
    _seed("Short model", 300, 55, lambda i, r: 20.0 + i + r, None)
    _seed("Middle model", 330, 42, lambda i, r: 40.0 + i + r, None)
    _seed("Long model", 350, 41, lambda i, r: 60.0 + i + r, None)
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/cost/?suite=fixture")
    page.wait_for_selector("#chart-cost svg.main-svg", timeout=15_000)
    figure = page.evaluate(FIGURE, "chart-cost")
    assert figure["type"] == "linear"
    assert figure["range"] == [pytest.approx(352.12), pytest.approx(393.88)]
    xs = sorted(x for t in figure["traces"] if t["text"] for x in t["x"])
    assert xs == [pytest.approx(355.0), pytest.approx(372.0), pytest.approx(391.0)]
    assert "linear" in page.locator("#chart-cost ~ p.hint").first.inner_text()
    page.screenshot(path=f"/tmp/shots/cost-linear-{size}.png", full_page=True)
    assert errors == []
