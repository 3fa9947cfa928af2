"""The summary across environments in headless Chromium: on the home page and a model page, on a
desktop and on a phone, with the selector's numbers and no sideways scrolling."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from leaderboard.selectors import summary_get
from leaderboard.tests.test_summary import summary_entries
from submissions.models import ModelEntry

pytestmark = pytest.mark.integration
VIEWPORTS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def models(transactional_db, fixture_scenarios, lab) -> dict[str, ModelEntry]:
    return summary_entries(lab.team)


def _no_sideways_scroll(page) -> None:
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"the page scrolls sideways: {widths[0]} px wide in {widths[1]} px"
    # The table scrolls inside its box instead, each score on one line (not squeezed letter by letter).
    lines = page.locator("#across-table td.across-cell a, #across-table td.across-mean strong").evaluate_all(
        "scores => scores.map((score) => score.getClientRects().length)")
    assert lines and set(lines) == {1}, lines


@pytest.mark.parametrize("device", VIEWPORTS)
def test_the_home_page_shows_each_models_normalised_scores_and_their_mean(live_server, site_page, models,
                                                                         device) -> None:
    page, errors = site_page(viewport=VIEWPORTS[device])
    page.goto(live_server.url + "/")
    section = page.locator("#across-environments")
    section.scroll_into_view_if_needed()
    expect(section.get_by_role("heading", name="Across environments")).to_be_visible()
    summary = summary_get(flow="global", subset="mini")
    vision = summary.row_of(models["vision"].id)
    assert vision is not None and vision.mean is not None and vision.se is not None
    row = page.locator(f"#across-table tbody tr[data-model='{models['vision'].id}']")
    expect(row).to_have_count(1)
    mean = row.locator("td.across-mean")
    assert float(mean.get_attribute("data-value")) == pytest.approx(vision.mean, abs=1e-6)
    expect(mean).to_have_text(f"{vision.mean:.1f} ± {vision.se:.1f}")
    cells = row.locator("td.across-cell")
    for index, cell in enumerate(vision.cells):
        assert cell is not None and cell.mean is not None
        assert float(cells.nth(index).get_attribute("data-value")) == pytest.approx(cell.mean, abs=1e-6)
    # Football has no analytic maximum: its column says its ends are published references, and the
    # heading names the flow it takes part with.
    football = page.locator("#across-table thead th[data-env='football']")
    expect(football).to_contain_text("reference")
    expect(football).to_contain_text("Online")
    # A model without every environment: no mean, and the tooltip says why.
    tiny = page.locator(f"#across-table tbody tr[data-model='{models['tiny'].id}'] .no-mean")
    expect(tiny).to_have_attribute("title", "No complete entry on Sokoban, WebUI: a mean needs every environment.")
    expect(row.locator("svg.across-plot g")).to_have_count(4)  # three environments and the mean
    _no_sideways_scroll(page)
    # The mean across environments is on screen beside the model, without scrolling the table.
    beside = mean.bounding_box()
    assert beside is not None and beside["x"] + beside["width"] <= VIEWPORTS[device]["width"], beside
    section.screenshot(path=f"/tmp/shots/across-home-{device}.png")
    # The Online choice shows the Online boards (Vision has none on Sokoban and WebUI).
    page.locator("#across-environments h2 a", has_text="Online").click()
    page.wait_for_url("**across=online**")
    expect(page.locator(f"#across-table tbody tr[data-model='{models['vision'].id}'] .no-mean")).to_be_visible()
    assert not errors, errors


@pytest.mark.parametrize("device", VIEWPORTS)
def test_a_models_page_shows_its_rows_of_the_summary(live_server, site_page, models, device) -> None:
    page, errors = site_page(viewport=VIEWPORTS[device])
    page.goto(f"{live_server.url}/models/{models['vision'].id}/")
    section = page.locator("#across-environments")
    section.scroll_into_view_if_needed()
    expect(section).to_be_visible()
    rows = page.locator("#across-table tbody tr")
    expect(rows).to_have_count(2)  # Global · mini and Online · mini
    expect(rows.nth(0).locator("td").first).to_have_text("Global · mini")
    vision = summary_get(flow="global", subset="mini").row_of(models["vision"].id)
    assert vision is not None and vision.mean is not None
    assert float(rows.nth(0).locator("td.across-mean").get_attribute("data-value")) == pytest.approx(vision.mean)
    expect(rows.nth(1).locator(".no-mean")).to_be_visible()
    _no_sideways_scroll(page)
    section.screenshot(path=f"/tmp/shots/across-model-{device}.png")
    assert not errors, errors


@pytest.mark.parametrize("device", VIEWPORTS)
def test_the_across_environments_table_names_each_ceiling_and_has_a_legend_for_its_dots(live_server, site_page, models,
                                                                                     device) -> None:
    page, errors = site_page(viewport=VIEWPORTS[device])
    page.goto(live_server.url + "/")
    scales = page.locator("#across-environments #across-scales")
    scales.scroll_into_view_if_needed()
    expect(scales).to_be_visible()
    # Each environment of the table, in its order, with what its floor and ceiling are.
    expect(scales.locator("dt")).to_have_text([re.compile(f"^{title}") for title in ("Football", "Sokoban", "WebUI")])
    expect(scales.locator("dd[data-env='football'] .across-ceiling")).to_have_text(
        "Ceiling: 21.2, GPT-4o's mean on the mini set, the best model result the paper reports (Table 1).")
    expect(scales.locator("dd[data-env='football'] .across-floor")).to_have_text(
        "Floor: 2.53, the paper's Idle baseline on the mini set (Table 1).")
    expect(scales.locator("dd[data-env='sokoban'] .across-ceiling")).to_have_text(
        "Ceiling: 100 per level: an optimal solution (B_T = R_ub).")
    expect(scales.locator("dd[data-env='webui'] .across-ceiling")).to_have_text(
        "Ceiling: AES 100 %: a page identical to its target in every state.")
    # The legend draws the plot's three marks and says what each is.
    legend = page.locator("#across-environments #across-legend")
    legend.scroll_into_view_if_needed()
    expect(legend).to_be_visible()
    expect(legend.locator("svg")).to_have_count(3)
    expect(legend).to_contain_text("one environment's normalised score (dot) and its 95% interval, ± 1.96 SE (line)")
    expect(legend).to_contain_text("the mean across environments ± 1.96 SE")
    expect(legend).to_contain_text("0 (the floor) and 100 (the ceiling)")
    # The plot's header links to it.
    expect(page.locator("#across-table thead a[href='#across-legend']")).to_have_count(1)
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    page.locator("#across-environments").screenshot(path=f"/tmp/shots/across-ceilings-{device}.png")
    assert not errors, errors
