"""A board's cost page in headless Chromium: the score-against-cost chart draws with its frontier marked."""
from __future__ import annotations

import pytest

from accounts.models import Team
from catalogue.models import Scenario
from submissions.models import Attempt, ModelEntry, Submission

pytestmark = pytest.mark.integration


def _seed(name: str, prompt: int, completion: int, score_of, prices: tuple[float, float] | None,
          env: str = "sokoban") -> Submission:
    team, _ = Team.objects.get_or_create(name="Lab", defaults={"slug": "lab"})
    model = ModelEntry.objects.create(team=team, name=name, price_input_per_mtok=prices[0] if prices else None,
                                      price_output_per_mtok=prices[1] if prices else None)
    sub = Submission.objects.create(is_public=True, team=team, model=model, environment_id=env, flow="global",
                                    subset="mini", suite="fixture", status=Submission.Status.COMPLETED)
    scenarios = Scenario.objects.filter(environment_id=env, suite="fixture", in_mini=True).order_by("key")
    Attempt.objects.bulk_create(
        Attempt(submission=sub, scenario=scenario, repeat=repeat, status=Attempt.Status.SCORED,
                score=score_of(i, repeat), model_calls=3, prompt_tokens=prompt, completion_tokens=completion,
                duration_seconds=2.0)
        for i, scenario in enumerate(scenarios) for repeat in range(2))
    return sub


@pytest.fixture
def priced_board(transactional_db, fixture_scenarios):
    _seed("Cheap model", 2_000, 100, lambda i, r: 20.0 + 2.0 * i + r, (0.5, 1.0))
    _seed("Strong model", 20_000, 1_000, lambda i, r: 70.0 + 2.0 * i + r, (3.0, 15.0))
    _seed("Wasteful model", 40_000, 2_000, lambda i, r: 40.0 + 2.0 * i + r, (3.0, 15.0))
    _seed("Unpriced model", 1_000, 50, lambda i, r: 10.0 + i + r, None)


def test_a_visitor_sees_scores_against_cost_with_the_frontier_and_switches_to_tokens(live_server, site_page,
                                                                                     priced_board):
    page, errors = site_page()
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/?suite=fixture")
    page.get_by_role("link", name="Score vs cost").click()
    page.wait_for_url("**/cost/**")
    page.wait_for_selector("#chart-cost svg.main-svg", timeout=15_000)
    # Traces: dominated entries, the frontier's line, the frontier's points.
    traces = page.evaluate("""() => document.getElementById('chart-cost').data.map(
        (t) => [t.name, t.mode, t.x.length])""")
    assert traces == [["dominated", "markers+text", 1], ["Pareto frontier", "lines", 2],
                      ["on the frontier", "markers+text", 2]]
    assert page.locator("#chart-cost .scatterlayer .point").count() == 3
    assert page.locator("table.cost-table tbody tr").count() == 4
    frontier = page.locator("table.cost-table tr[data-frontier='yes'] td:first-child").all_inner_texts()
    assert [name.strip() for name in frontier] == ["Cheap model", "Strong model"]
    assert "no prices" in page.locator("table.cost-table tr[data-frontier='excluded']").inner_text()

    page.get_by_role("link", name="Tokens per scenario").click()
    page.wait_for_url("**x=tokens**")
    page.wait_for_selector("#chart-cost svg.main-svg", timeout=15_000)
    assert page.evaluate("() => document.getElementById('chart-cost').layout.xaxis.title.text").startswith("Tokens")
    # By tokens the unpriced model is the cheapest: it joins the frontier, and nothing is left unplaced.
    frontier = page.locator("table.cost-table tr[data-frontier='yes'] td:first-child").all_inner_texts()
    assert [name.strip() for name in frontier] == ["Unpriced model", "Cheap model", "Strong model"]
    assert page.locator("table.cost-table tr[data-frontier='excluded']").count() == 0
    assert errors == []
