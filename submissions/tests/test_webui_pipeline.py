"""WebUI submissions through the pipeline: a Celery worker with a browser, the board and the replay."""
from __future__ import annotations

import pytest

from accounts.services import team_get_or_create
from conftest import FIXTURE_RESOURCES
from evaluators.browser import launch_chromium
from leaderboard.selectors import board_get
from submissions.engine import attempt_run
from submissions.models import Attempt, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint

pytestmark = pytest.mark.integration
PAGES = FIXTURE_RESOURCES / "WebUI"


def _submit(url: str, name: str, *, baseline: bool = True, flow: str = "global") -> Submission:
    team = team_get_or_create(name="MageBench baselines")
    model = model_entry_upsert(team=team, name=name, is_baseline=baseline)
    return submission_create_endpoint(model=model, env="webui", flow=flow, subset="mini", suite="fixture",
                                      endpoint_url=url, settings={"repeats": 1, "resolution": 640},
                                      is_baseline=baseline)


@pytest.mark.django_db(transaction=True)
def test_a_celery_worker_renders_and_scores_webui_attempts(fixture_scenarios, baseline_endpoint,
                                                           celery_worker_process, wait_for):
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import start_server

    with start_server(make_agent("oracle", pages=[PAGES])) as server:
        submission = _submit(server.url, "Oracle agent")
        wait_for(lambda: not Submission.objects.get(id=submission.id).is_active, 300, "the WebUI submission")
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPLETED, submission.status_reason
    scores = list(submission.attempts.values_list("score", flat=True))
    assert len(scores) == 3 and all(score == pytest.approx(100.0) for score in scores)


@pytest.mark.django_db(transaction=True)
def test_the_webui_board_shows_the_lost_score_and_the_replay_shows_each_state(live_server, fixture_scenarios, wait_for):
    from playwright.sync_api import sync_playwright

    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import start_server

    for agent, name in (("idle", "Idle agent"), ("degraded", "Degraded oracle")):
        with start_server(make_agent(agent, pages=[PAGES])) as server:
            submission = _submit(server.url, name)
            for attempt_id in submission.attempts.values_list("id", flat=True):
                attempt_run(attempt_id=attempt_id)
    board = board_get(env="webui", flow="global", subset="mini", suite="fixture")
    rows = {row.model: row for row in board.rows}
    assert rows["Idle agent"].breakdown["parse"] == pytest.approx(100.0) and rows["Idle agent"].mean == 0.0
    degraded = rows["Degraded oracle"]
    assert 0 < degraded.mean < 100
    assert degraded.mean + sum(degraded.breakdown.values()) == pytest.approx(100.0)
    assert not board.has_action_diagnostics

    attempt = Attempt.objects.filter(submission__model__name="Degraded oracle").order_by("id").first()
    errors: list[str] = []
    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{live_server.url}/boards/webui/global/mini/?suite=fixture")
        row = page.locator("table.board tbody tr", has_text="Degraded oracle")
        assert row.locator(".lostbar .seg.attribute").count() == 1
        assert "IA %" not in page.locator("table.board thead").inner_text()
        page.goto(f"{live_server.url}/attempts/{attempt.id}/replay/")
        states = page.locator(".webui-state")
        assert states.count() == len(attempt.details["state_scores"])
        # Polled from Python: the site's CSP allows no eval, which an in-page wait_for_function needs.
        wait_for(lambda: page.evaluate("Array.from(document.querySelectorAll('.shot img'))"
                                       ".every(i => i.complete && i.naturalWidth > 0)"),
                 15, "the screenshots to decode")
        assert page.locator(".webui-state").first.locator(".box").count() > 0
        # The panel's own style sheet sets each state's target and generated page side by side.
        assert page.locator(".webui-state .pair").first.evaluate("node => getComputedStyle(node).display") == "grid"
        assert page.get_by_role("link", name="Playwright trace").count() == 1
        trace = page.request.get(f"{live_server.url}/attempts/{attempt.id}/trace.zip")
        assert trace.ok and trace.body()[:2] == b"PK"
        browser.close()
    assert errors == []
