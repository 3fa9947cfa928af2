"""The site's own pages in headless Chromium: a board, a submission, a replay stepped by keyboard."""
from __future__ import annotations

import pytest

from accounts.services import team_get_or_create
from submissions.engine import attempt_run
from submissions.models import Attempt
from submissions.services import model_entry_upsert, submission_create_endpoint

pytestmark = pytest.mark.integration


@pytest.fixture
def evaluated(transactional_db, fixture_scenarios, baseline_endpoint):
    team = team_get_or_create(name="MageBench baselines")
    model = model_entry_upsert(team=team, name="Oracle agent", is_baseline=True)
    submission = submission_create_endpoint(model=model, env="sokoban", flow="online", subset="mini", suite="fixture",
                                            endpoint_url=baseline_endpoint("oracle").url,
                                            settings={"repeats": 1, "resolution": 256}, is_baseline=True)
    for attempt_id in submission.attempts.values_list("id", flat=True):
        attempt_run(attempt_id=attempt_id)
    return submission


def test_a_visitor_opens_a_board_a_submission_and_steps_through_a_replay(live_server, site_page, evaluated, tmp_path,
                                                                          wait_for):
    attempt = evaluated.attempts.filter(status=Attempt.Status.SCORED).order_by("-steps").first()
    page, errors = site_page()

    page.goto(f"{live_server.url}/boards/sokoban/online/mini/?suite=fixture")
    row = page.locator("table.board tbody tr", has_text="Oracle agent")
    assert "100.00" in row.inner_text() and "baseline" in row.inner_text()
    with page.expect_download() as download:
        page.get_by_role("link", name="CSV", exact=True).click()
    csv_path = tmp_path / "board.csv"
    download.value.save_as(csv_path)
    assert "Oracle agent" in csv_path.read_text()

    # The model's name leads to its page, which lists this entry; the entry's date leads to the submission.
    row.get_by_role("link", name="Oracle agent").click()
    page.wait_for_url(f"**/models/{evaluated.model_id}/")
    page.locator(f"#model-entries a[href$='/submissions/{evaluated.id}/']").click()
    page.wait_for_url(f"**/submissions/{evaluated.id}/")
    assert "completed" in page.locator("p .status").first.inner_text()

    page.goto(f"{live_server.url}/attempts/{attempt.id}/replay/")
    steps = page.locator("#step-list li")
    assert steps.count() == attempt.steps + 1
    assert page.locator("#step-list li.active").inner_text() == "start"
    first_src = page.locator("#frame").get_attribute("src")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.locator("#step-list li.active").inner_text().startswith("2. ")
    assert page.locator("#frame").get_attribute("src") != first_src
    assert "Best so far" in page.locator("#step-table").inner_text()
    assert "# action" in page.locator("#reply").inner_text()
    page.keyboard.press("End")
    assert page.locator("#step-list li.active").inner_text().startswith(f"{attempt.steps}. ")
    page.keyboard.press("ArrowLeft")
    assert page.locator("#step-list li.active").inner_text().startswith(f"{attempt.steps - 1}. ")
    # the frame is fetched after the key press: wait until the browser has decoded it
    # Polled from Python: the site's CSP allows no eval, which an in-page wait_for_function needs.
    wait_for(lambda: page.evaluate("(() => { const img = document.getElementById('frame');"
                                   " return img.complete && img.naturalWidth > 0; })()"), 10, "the frame to decode")
    assert errors == []


def test_a_visitor_sorts_and_filters_a_board(live_server, site_page, evaluated, baseline_endpoint):
    lab = model_entry_upsert(team=team_get_or_create(name="Lab"), name="Zebra model", organisation="Zoo",
                             open_weights=True)
    submission = submission_create_endpoint(model=lab, env="sokoban", flow="online", subset="mini", suite="fixture",
                                            endpoint_url=baseline_endpoint("idle").url,
                                            settings={"repeats": 1, "resolution": 256, "max_loop": 2})
    for attempt_id in submission.attempts.values_list("id", flat=True):
        attempt_run(attempt_id=attempt_id)
    page, errors = site_page()
    page.goto(f"{live_server.url}/boards/sokoban/online/mini/?suite=fixture")

    def models() -> list[str]:
        names = page.locator("table.board tbody tr td:nth-child(2) a:first-of-type")  # not the entry's #id
        return [t.strip() for t in names.all_inner_texts()]

    assert models() == ["Oracle agent", "Zebra model"]  # by score, best first
    model_header = page.locator("table.board th", has_text="Model")
    model_header.click()
    assert models() == ["Oracle agent", "Zebra model"] and "sorted" in model_header.get_attribute("class")
    assert model_header.get_attribute("aria-sort") == "ascending"
    model_header.click()
    assert models() == ["Zebra model", "Oracle agent"] and "↓" in model_header.inner_text()
    score_header = page.locator("table.board th", has_text="Reward score")
    assert "sorted" not in score_header.get_attribute("class")
    score_header.click()
    assert models()[0] == "Oracle agent"

    page.locator("form.filters select[name=org]").select_option("Zoo")
    page.locator("form.filters button").click()
    page.wait_for_url("**org=Zoo**")
    assert models() == ["Oracle agent", "Zebra model"]  # the baseline always stays
    page.locator("form.filters input[name=open]").check()
    page.locator("form.filters button").click()
    assert "Zebra model" in models()
    assert not errors, errors
