"""A test call of an endpoint: one real request, the first an attempt would send, made by a worker.

These tests make the worker's call in the test's own process (``endpoint_check_run``), against
real HTTP servers speaking the OpenAI protocol; the command-line tests run it on Celery workers.
"""
from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from evaluators.tests.scripted_server import ScriptedServer
from submissions.endpoint_checks import endpoint_check_create, endpoint_check_run
from submissions.engine import attempt_run
from submissions.models import EndpointCheck, ModelEntry
from submissions.services import submission_create_endpoint
from submissions.tests.test_refusals_write_nothing import UNUSED_ENDPOINT

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

SECRET = "sk-check-secret-4471"
MAX_TOKENS_REFUSED = {"error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
               "instead.",
    "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}


def chat(reply: str, model: str = "scripted-1") -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912}}


def start_check(lab: Any, url: str, **fields: Any) -> int:
    body = {"endpoint_url": url, "env": "sokoban", "flow": "global", "suite": "fixture", **fields}
    response = lab.client.post(reverse("api-endpoint-check-create"), body, content_type="application/json",
                               **lab.auth())
    assert response.status_code == 202, response.content
    return int(response.json()["id"])


def checked(lab: Any, check_id: int) -> dict[str, Any]:
    """The check once a worker has made its call, as the API shows it."""
    endpoint_check_run(check_id=check_id)
    response = lab.client.get(reverse("api-endpoint-check", args=[check_id]), **lab.auth("read"))
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["status"] == "finished"
    return data


def test_a_reply_the_parser_reads_reports_its_actions_tokens_and_model(lab, fixture_scenarios, baseline_endpoint):
    server = baseline_endpoint("oracle")

    result = checked(lab, start_check(lab, server.url))["result"]

    assert result["ok"] is True and result["reachable"] is True and result["error"] is None
    assert result["listed_models"] and result["model"] == result["listed_models"][0]
    assert result["actions"] and result["parse_error"] is None
    assert result["prompt_tokens"] > 0 and result["latency_seconds"] >= 0 and result["reply"]


def test_an_unparsable_reply_is_shown_with_the_parse_error(lab, fixture_scenarios):
    with ScriptedServer([(200, chat("I would rather talk about the weather."), {})]) as server:
        result = checked(lab, start_check(lab, server.url, endpoint_model="scripted-1"))["result"]
        posts = [r for r in server.requests if r["method"] == "POST"]

    assert len(posts) == 1 and server.hits == 1
    assert result["ok"] is False and result["reachable"] is True and result["actions"] == []
    assert result["parse_error"] and result["reply"] == "I would rather talk about the weather."
    assert result["answer_model"] == "scripted-1" and result["finish_reason"] == "stop"
    assert (result["prompt_tokens"], result["completion_tokens"]) == (900, 12)


def test_a_refused_max_tokens_names_the_setting_that_fixes_it(lab, fixture_scenarios):
    with ScriptedServer([(400, MAX_TOKENS_REFUSED, {})]) as server:
        result = checked(lab, start_check(lab, server.url, endpoint_model="o9"))["result"]
        assert server.hits == 1  # a refusal is not asked again

    assert result["ok"] is False and result["reachable"] is True
    assert result["error"]["kind"] == "invalid_request" and result["error"]["status"] == 400
    assert result["fix"] == "token_limit_parameter=max_completion_tokens"
    assert "token_limit_parameter=max_completion_tokens" in result["error"]["message"]


def test_the_fixing_setting_is_sent_by_the_next_test_call(lab, fixture_scenarios):
    with ScriptedServer([(200, chat("no idea"), {})]) as server:
        checked(lab, start_check(lab, server.url, endpoint_model="o9",
                                 settings={"token_limit_parameter": "max_completion_tokens"}))
        body = server.requests[0]["json"]

    assert "max_completion_tokens" in body and "max_tokens" not in body


def test_an_unreachable_endpoint_is_reported_as_such(lab, fixture_scenarios):
    result = checked(lab, start_check(lab, UNUSED_ENDPOINT, endpoint_model="m"))["result"]

    assert result["ok"] is False and result["reachable"] is False
    assert result["error"]["kind"] == "endpoint_unreachable" and result["error"]["status"] is None


def test_the_test_call_sends_exactly_the_first_request_of_the_boards_first_attempt(lab, fixture_scenarios, settings,
                                                                                   tmp_path):
    settings.MEDIA_ROOT = tmp_path
    options = {"token_limit_parameter": "max_completion_tokens", "extra_body": {"reasoning_effort": "low"},
               "omit_parameters": "top_p", "repeats": 1}
    with ScriptedServer([(200, chat("no action here"), {})]) as server:
        check_id = start_check(lab, server.url, endpoint_model="scripted-1", api_key=SECRET, settings=options)
        endpoint_check_run(check_id=check_id)
        tested = list(server.requests)
        submission = submission_create_endpoint(
            model=ModelEntry.objects.create(team=lab.team, name="Recorded"), env="sokoban", flow="global",
            subset="mini", suite="fixture",
            endpoint_url=server.url, endpoint_model="scripted-1", api_key=SECRET, settings=options)
        first = submission.attempts.order_by("id").first()
        assert first is not None
        attempt_run(attempt_id=first.id)
        attempted = server.requests[len(tested):]

    assert EndpointCheck.objects.get(id=check_id).scenario_id == first.scenario_id
    assert len(tested) == 1 and attempted
    assert tested[0]["json"] == attempted[0]["json"]
    assert tested[0]["path"] == attempted[0]["path"]
    assert tested[0]["headers"]["Authorization"] == attempted[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert any(part.get("type") == "image_url" for message in tested[0]["json"]["messages"]
               for part in (message["content"] if isinstance(message["content"], list) else []))


def test_the_api_key_is_kept_only_until_the_check_finishes_and_never_shown(lab, fixture_scenarios):
    echo = b'{"choices": [{"message": {"role": "assistant", "content": "you sent {auth}"}}]}'
    with ScriptedServer([(200, echo, {"Content-Type": "application/json"})]) as server:
        check_id = start_check(lab, server.url, endpoint_model="m", api_key=SECRET)
        assert EndpointCheck.objects.get(id=check_id).api_key_encrypted
        data = checked(lab, check_id)

    assert EndpointCheck.objects.get(id=check_id).api_key_encrypted == ""
    assert SECRET not in str(data) and "[redacted]" in data["result"]["reply"]


def test_a_team_runs_one_check_at_a_time_and_a_limited_number_per_window(lab, fixture_scenarios, settings):
    settings.MAGEBENCH_ENDPOINT_CHECKS_PER_WINDOW = 2
    first = start_check(lab, UNUSED_ENDPOINT, endpoint_model="m")
    response = lab.client.post(reverse("api-endpoint-check-create"), {
        "endpoint_url": UNUSED_ENDPOINT, "env": "sokoban", "flow": "global", "suite": "fixture"},
        content_type="application/json", **lab.auth())
    assert response.status_code == 429 and "still running" in response.json()["message"]

    endpoint_check_run(check_id=first)
    start_check(lab, UNUSED_ENDPOINT, endpoint_model="m")
    EndpointCheck.objects.update(status=EndpointCheck.Status.FINISHED)
    before = EndpointCheck.objects.count()
    response = lab.client.post(reverse("api-endpoint-check-create"), {
        "endpoint_url": UNUSED_ENDPOINT, "env": "sokoban", "flow": "global", "suite": "fixture"},
        content_type="application/json", **lab.auth())

    assert response.status_code == 429 and "2 of 2 per 60 min" in response.json()["message"]
    assert EndpointCheck.objects.count() == before


@pytest.mark.parametrize(("url", "settings_given", "words"), [
    ("http://user:pw@example.com/v1", {}, "carries credentials"),
    ("ftp://example.com/v1", {}, "must start with http"),
    ("http://127.0.0.1:9/v1", {"no_such_setting": 1}, "no_such_setting"),
    ("http://127.0.0.1:9/v1", {"token_limit_parameter": "max_length"}, "token_limit_parameter must be one of"),
])
def test_urls_and_settings_are_refused_as_a_submission_refuses_them_and_nothing_is_written(
        lab, fixture_scenarios, url, settings_given, words):
    response = lab.client.post(reverse("api-endpoint-check-create"), {
        "endpoint_url": url, "env": "sokoban", "flow": "global", "suite": "fixture", "settings": settings_given},
        content_type="application/json", **lab.auth())
    submitted = lab.client.post(reverse("api-submission-create"), {
        "endpoint_url": url, "env": "sokoban", "flow": "global", "suite": "fixture", "subset": "mini",
        "model_name": "M", "settings": settings_given}, content_type="application/json", **lab.auth())

    assert response.status_code == 400 and words in response.json()["message"]
    assert response.json()["message"] == submitted.json()["message"]
    assert not EndpointCheck.objects.exists()


def test_private_addresses_are_refused_in_production(lab, fixture_scenarios, settings):
    settings.MAGEBENCH_ENDPOINT_ALLOW_PRIVATE = False
    response = lab.client.post(reverse("api-endpoint-check-create"), {
        "endpoint_url": "http://10.1.2.3/v1", "env": "sokoban", "flow": "global", "suite": "fixture"},
        content_type="application/json", **lab.auth())

    assert response.status_code == 400 and "private network address" in response.json()["message"]
    assert not EndpointCheck.objects.exists()


def test_a_read_only_token_cannot_start_a_check_and_other_teams_cannot_see_one(lab, fixture_scenarios, client):
    response = lab.client.post(reverse("api-endpoint-check-create"), {
        "endpoint_url": UNUSED_ENDPOINT, "env": "sokoban", "flow": "global", "suite": "fixture"},
        content_type="application/json", **lab.auth("read"))
    assert response.status_code == 403
    check = endpoint_check_create(team=lab.team, env="sokoban", flow="global", suite="fixture",
                                  endpoint_url=UNUSED_ENDPOINT)
    client.logout()

    assert client.get(reverse("api-endpoint-check", args=[check.id])).status_code in (401, 403, 404)


def test_a_refusal_quoting_the_key_as_openai_masks_it_keeps_none_of_the_key(lab, fixture_scenarios):
    refused = {"error": {"message": "Incorrect API key provided: sk-check" + "*" * 8 + "4471. You can find your API "
                                    "key at https://platform.openai.com/account/api-keys.",
                         "type": "invalid_request_error", "code": "invalid_api_key"}}
    with ScriptedServer([(401, refused, {})]) as server:
        data = checked(lab, start_check(lab, server.url, endpoint_model="m", api_key=SECRET))

    message = data["result"]["error"]["message"]
    assert "Incorrect API key provided: [redacted]" in message and "4471" not in str(data["result"])
