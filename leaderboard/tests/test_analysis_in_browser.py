"""A board's analysis and comparison pages in headless Chromium: the charts draw without console errors."""
from __future__ import annotations

import pytest

from accounts.models import Team
from catalogue.models import Scenario
from submissions.models import Attempt, ModelEntry, Submission

pytestmark = pytest.mark.integration


def _seed(name: str, keys: list[str], score_of, env: str = "sokoban", flow: str = "global") -> Submission:
    team, _ = Team.objects.get_or_create(name="Lab", defaults={"slug": "lab"})
    sub = Submission.objects.create(is_public=True, team=team, model=ModelEntry.objects.create(team=team, name=name),
                                    environment_id=env, flow=flow, subset="mini", suite="fixture",
                                    status=Submission.Status.COMPLETED)
    scenarios = {s.key: s for s in Scenario.objects.filter(environment_id=env, suite="fixture", key__in=keys)}
    Attempt.objects.bulk_create(
        Attempt(submission=sub, scenario=scenarios[key], repeat=repeat, status=Attempt.Status.SCORED,
                score=score_of(i, repeat), invalid_action=(i + repeat) % 3 == 0, repeating_action=i % 4 == 0)
        for i, key in enumerate(keys) for repeat in range(3))
    return sub


@pytest.fixture
def seeded_board(transactional_db, fixture_scenarios):
    keys = sorted(Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True)
                  .values_list("key", flat=True))
    lab = _seed("Lab model", keys, lambda i, r: 8.0 * i + 6.0 * r)
    other = _seed("Other model", keys, lambda i, r: 40.0 + 4.0 * ((i + r) % 5))
    return lab, other


def test_a_visitor_sees_the_analysis_charts_and_compares_two_models(live_server, site_page, seeded_board):
    lab, other = seeded_board
    page, errors = site_page()

    page.goto(f"{live_server.url}/boards/sokoban/global/mini/analysis/?suite=fixture")
    # IA/RA bars, best-of-N curves, and one chart per tag (variant, boxes).
    for chart in ("#chart-errors", "#chart-best-of-n", "#chart-tag-0", "#chart-tag-1"):
        page.wait_for_selector(f"{chart} svg.main-svg", timeout=15_000)
    assert page.locator("#chart-best-of-n .scatterlayer .trace").count() == 2
    assert page.locator("table.matrix td.cell a").count() == 2 * 10

    page.get_by_role("link", name="Compare models", exact=True).click()
    page.wait_for_url("**/compare/**")
    page.select_option("#compare-a", str(other.id))
    page.select_option("#compare-b", str(lab.id))
    page.get_by_role("button", name="Compare").click()
    page.wait_for_url(f"**a={other.id}&b={lab.id}**")
    page.wait_for_selector("#chart-compare svg.main-svg", timeout=15_000)
    assert page.locator("#chart-compare .scatterlayer .point").count() == 10
    assert "Paired t-test" in page.locator("table.compare-summary").inner_text()
    assert errors == []


def test_the_football_analysis_draws_a_pitch_zone_heatmap_for_the_model_picked(live_server, site_page,
                                                                               transactional_db, fixture_scenarios):
    keys = ["R3_R_1", "R5_P_1", "R9_T_1"]
    _seed("Striker", keys, lambda i, r: 1.0 + i, env="football", flow="online")
    keeper = _seed("Keeper", keys, lambda i, r: -0.5, env="football", flow="online")
    page, errors = site_page()

    page.goto(f"{live_server.url}/boards/football/online/mini/analysis/?suite=fixture")
    page.locator("#chart-zones").scroll_into_view_if_needed()
    cells = page.locator("#chart-zones .heatmap-label")
    cells.nth(8).wait_for(timeout=15_000)
    assert cells.count() == 9
    assert cells.filter(has_text="2.00").count() == 1
    page.select_option("#zone-model", str(keeper.id))
    cells.filter(has_text="-0.50").first.wait_for(timeout=15_000)
    assert cells.filter(has_text="-0.50").count() == 3
    assert errors == []
