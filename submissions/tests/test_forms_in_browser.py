"""The submit form's environment and flow pair, and the publish confirmation, in headless Chromium."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from accounts.services import team_create
from catalogue.models import Scenario
from submissions.models import Attempt, ModelEntry, Submission

pytestmark = pytest.mark.integration

PASSWORD = "a long passphrase 7"


def _log_in(page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.locator("main form button[type=submit]").click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def test_choosing_an_environment_offers_only_its_flows(live_server, site_page, transactional_db):
    user = get_user_model().objects.create_user("ada", password=PASSWORD)
    team_create(user=user, name="Lab")
    page, errors = site_page()
    _log_in(page, live_server, "ada")
    page.goto(f"{live_server.url}/submit/")
    env, flow = page.locator("select[name=env]"), page.locator("select[name=flow]")
    global_option = flow.locator("option[value=global]")
    # The page starts on a pair that makes a board: WebUI (the first environment) has a Global flow.
    assert (env.input_value(), flow.input_value()) == ("webui", "global")
    assert not global_option.is_disabled()

    env.select_option("football")
    assert flow.input_value() == "online" and global_option.is_disabled()
    assert "Football has the Online flow only." in page.locator(".flow-note").inner_text()

    env.select_option("sokoban")
    assert not global_option.is_disabled() and flow.input_value() == "online"
    flow.select_option("global")
    assert flow.input_value() == "global" and page.locator(".flow-note").inner_text() == ""

    page.goto(f"{live_server.url}/submit/upload/")
    page.locator("select[name=env]").select_option("football")
    assert page.locator("select[name=flow]").input_value() == "online"
    assert page.locator("select[name=flow] option[value=global]").is_disabled()
    assert not errors, errors


def test_publishing_asks_for_confirmation_and_can_be_called_off(live_server, site_page, transactional_db,
                                                                 fixture_scenarios):
    user = get_user_model().objects.create_user("ada", password=PASSWORD)
    team = team_create(user=user, name="Lab")
    model = ModelEntry.objects.create(team=team, name="Vision-7B")
    submission = Submission.objects.create(team=team, model=model, environment_id="sokoban", flow="global",
                                           subset="mini", suite="fixture", status=Submission.Status.COMPLETED)
    Attempt.objects.create(submission=submission, repeat=0, status=Attempt.Status.SCORED, score=50.0,
                           scenario=Scenario.objects.filter(environment_id="sokoban", suite="fixture").first())
    page, errors = site_page()
    _log_in(page, live_server, "ada")
    page.goto(f"{live_server.url}/submissions/{submission.id}/")

    page.get_by_role("button", name="Publish it").click()
    page.get_by_role("heading", name=f"Publish submission #{submission.id}?").wait_for()
    submission.refresh_from_db()
    assert not submission.is_public
    page.get_by_role("link", name="No, keep it private").click()
    page.wait_for_url(f"**/submissions/{submission.id}/")
    submission.refresh_from_db()
    assert not submission.is_public and "private" in page.locator("main").inner_text()

    page.get_by_role("button", name="Publish it").click()
    page.get_by_role("button", name="Yes, publish it").click()
    page.wait_for_url(f"**/submissions/{submission.id}/")
    assert "Published" in page.locator(".messages").inner_text()
    submission.refresh_from_db()
    assert submission.is_public
    assert page.get_by_role("button", name="Publish it").count() == 0
    assert not errors, errors
