"""A new team's path through the site in headless Chromium: sign up, create a team and a token,
upload outputs (a bad file first), follow the re-scoring and publish the result."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from conftest import ROOT
from submissions.engine import attempt_run
from submissions.models import Submission

pytestmark = pytest.mark.integration


def test_a_new_team_signs_up_uploads_outputs_and_publishes_them(live_server, site_page, transactional_db,
                                                                 fixture_scenarios, tmp_path):
    page, errors = site_page(viewport={"width": 1300, "height": 1000})
    page.goto(f"{live_server.url}/submit/upload/")
    page.wait_for_url("**/accounts/login/**")  # submitting needs an account
    page.locator("main").get_by_role("link", name="Sign up").click()  # the header has one too
    page.fill("input[name=username]", "grace")
    page.fill("input[name=password1]", "a long passphrase 7")
    page.fill("input[name=password2]", "a long passphrase 7")
    page.get_by_role("button", name="Create the account").click()
    page.wait_for_url("**/accounts/")
    page.fill("input[name=name]", "Hopper Lab")
    page.get_by_role("button", name="Create a team").click()
    page.wait_for_url("**/teams/hopper-lab/")

    page.get_by_role("button", name="Create a token").click()
    token = page.locator("#new-token").inner_text()
    assert token.startswith("mbw_")
    page.reload()
    assert page.locator("#new-token").count() == 0 and token not in page.content()  # shown once

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"scenario": "1-Sokoban-small-v0", "repeat": 0, "replies": ["x"]}\n{"scenario": 3}\n')
    page.goto(f"{live_server.url}/submit/upload/")
    page.fill("input[name=model_name]", "Hopper-VL")
    page.select_option("select[name=env]", "sokoban")
    page.select_option("select[name=flow]", "online")
    page.select_option("select[name=subset]", "full")
    page.set_input_files("input[name=file]", str(bad))
    page.get_by_role("button", name="Upload and re-score").click()
    problems = page.locator(".upload-problems li").all_inner_texts()
    assert problems and all(p.startswith("line 2") for p in problems), problems
    assert not Submission.objects.exists()

    page.select_option("select[name=flow]", "online")
    page.select_option("select[name=subset]", "full")
    page.set_input_files("input[name=file]", str(ROOT / "fixtures" / "uploads" / "example-sokoban-online.jsonl"))
    page.get_by_role("button", name="Upload and re-score").click()
    page.wait_for_url("**/submissions/*/")
    submission = Submission.objects.get()
    assert not submission.is_public and "private" in page.locator("main").inner_text()
    for attempt_id in submission.attempts.values_list("id", flat=True):
        attempt_run(attempt_id=attempt_id)
    # While the submission runs its page refreshes itself every 5 s, and a reload of ours could meet that
    # refresh and be aborted: wait for the refresh that shows it finished (it then stops refreshing).
    expect(page.locator('meta[http-equiv="refresh"]')).to_have_count(0, timeout=120_000)
    assert "re-scored" in page.locator("main").inner_text()
    page.get_by_role("button", name="Publish it").click()
    page.get_by_role("button", name="Yes, publish it").click()  # publishing asks first
    page.wait_for_url(f"**/submissions/{submission.id}/")
    submission.refresh_from_db()
    assert submission.is_public and submission.status == Submission.Status.INCOMPLETE  # 2 runs of a full set
    assert not errors, errors
