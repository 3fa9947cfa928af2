"""The submit page's "Test the endpoint" button: without script (the page and the call's own page) and
in headless Chromium with a Celery worker making the call."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts.services import team_create
from evaluators.tests.scripted_server import ScriptedServer
from submissions.endpoint_checks import endpoint_check_run
from submissions.models import EndpointCheck, Submission
from submissions.tests.test_endpoint_checks import MAX_TOKENS_REFUSED, chat
from submissions.tests.test_forms_in_browser import PASSWORD, _log_in

pytestmark = pytest.mark.integration


def _form(lab, url: str, **fields: str) -> dict[str, str]:
    return {"team": str(lab.team.id), "env": "sokoban", "flow": "global", "subset": "mini", "endpoint_url": url,
            "endpoint_model": "scripted-1", "api_key": "sk-page-key", "test_endpoint": "1", **fields}


@pytest.mark.django_db
def test_the_button_without_script_starts_a_check_and_links_to_its_result(lab, fixture_scenarios):
    with ScriptedServer([(200, chat("Nothing to do here."), {})]) as server:
        response = lab.client.post(reverse("submit"), _form(lab, server.url))
        check = EndpointCheck.objects.get()
        page = reverse("endpoint-check", args=[check.id])

        assert response.status_code == 200 and page in response.content.decode()
        assert not Submission.objects.exists()
        waiting = lab.client.get(page).content.decode()
        assert 'http-equiv="refresh"' in waiting
        endpoint_check_run(check_id=check.id)

    shown = lab.client.get(page).content.decode()
    assert "Nothing to do here." in shown and "Parse error" in shown and 'http-equiv="refresh"' not in shown


@pytest.mark.django_db
def test_the_button_refuses_what_a_submission_would_refuse_and_writes_nothing(lab, fixture_scenarios):
    response = lab.client.post(reverse("submit"), _form(lab, "http://user:pw@example.com/v1"))

    assert response.status_code == 200 and "carries credentials" in response.content.decode()
    assert not EndpointCheck.objects.exists()


@pytest.mark.django_db
def test_the_page_asks_for_json_and_gets_the_calls_address(lab, fixture_scenarios):
    response = lab.client.post(reverse("submit"), _form(lab, "http://127.0.0.1:9/v1"), HTTP_ACCEPT="application/json")
    refused = lab.client.post(reverse("submit"), _form(lab, "http://127.0.0.1:9/v1"), HTTP_ACCEPT="application/json")

    check = EndpointCheck.objects.get()
    assert response.status_code == 202
    assert response.json()["poll"] == reverse("api-endpoint-check", args=[check.id])
    assert refused.status_code == 400 and "still running" in refused.json()["message"]


def test_the_button_shows_the_result_on_the_page_without_submitting(live_server, site_page, transactional_db,
                                                                     fixture_scenarios, celery_workers):
    user = get_user_model().objects.create_user("ada", password=PASSWORD)
    team_create(user=user, name="Lab")
    celery_workers("checks", concurrency=1)
    page, errors = site_page()
    _log_in(page, live_server, "ada")
    with ScriptedServer([(400, MAX_TOKENS_REFUSED, {})]) as server:
        page.goto(f"{live_server.url}/submit/")
        page.locator("select[name=env]").select_option("sokoban")
        page.locator("select[name=flow]").select_option("global")
        page.fill("input[name=endpoint_url]", server.url)
        page.fill("input[name=endpoint_model]", "o9")
        page.fill("input[name=api_key]", "sk-browser-key")
        page.get_by_role("button", name="Test the endpoint").click()
        page.locator("#endpoint-check[data-state=finished]").wait_for(timeout=60_000)
        shown = page.locator("#endpoint-check").inner_text()

    assert "invalid_request (HTTP 400)" in shown and "token_limit_parameter=max_completion_tokens" in shown
    assert page.url.rstrip("/").endswith("/submit")  # still the page, with what was typed
    assert page.locator("input[name=api_key]").input_value() == "sk-browser-key"
    assert not Submission.objects.exists() and EndpointCheck.objects.get().api_key_encrypted == ""
    assert not errors, errors
