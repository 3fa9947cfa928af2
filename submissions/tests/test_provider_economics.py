"""What a provider's failures cost a team, on real workers: Celery on Redis, PostgreSQL, and endpoints
that answer as OpenAI documents (status, headers, JSON body).

A reasoning model runs the Sokoban mini set once its request profile is set; a spent quota or an
endpoint that is always down pauses the submission within a bounded number of requests, with the
cause in the provider's words; resuming it continues where it stopped.
"""
from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from accounts.services import team_get_or_create
from catalogue.models import Scenario
from evaluators.baselines.agents import make_agent
from evaluators.tests import provider_doubles as doubles
from evaluators.tests.scripted_server import ScriptedServer
from submissions.models import Attempt, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint, submission_resume

pytestmark = pytest.mark.integration

REASONING_SETTINGS = {"token_limit_parameter": "max_completion_tokens",
                      "omit_parameters": "temperature,top_p,frequency_penalty",
                      "extra_body": {"reasoning_effort": "low"}}


def _submit(url: str, settings: dict[str, Any] | None = None, *, flow: str = "online") -> Submission:
    model = model_entry_upsert(team=team_get_or_create(name="Paying team"), name="o-double")
    with transaction.atomic():  # the messages go out on commit
        return submission_create_endpoint(model=model, env="sokoban", flow=flow, subset="mini", suite="fixture",
                                          endpoint_url=url, endpoint_model="o-double",
                                          settings={"repeats": 1, "resolution": 256, **(settings or {})})


def _status(submission: Submission) -> str:
    return Submission.objects.values_list("status", flat=True).get(id=submission.id)


def test_a_reasoning_model_scores_the_sokoban_mini_set_with_its_request_profile(
        fixture_scenarios, celery_workers, wait_for):
    celery_workers("w1", concurrency=2)
    with ScriptedServer(doubles.reasoning_model(make_agent("oracle"))) as server:
        submission = _submit(server.url, REASONING_SETTINGS)
        wait_for(lambda: _status(submission) not in ("queued", "running"), 300, "the reasoning model's mini set")
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPLETED, submission.status_reason
    attempts = list(submission.attempts.all())
    assert len(attempts) == _mini_levels()
    assert all(a.status == Attempt.Status.SCORED and a.score == pytest.approx(100.0) for a in attempts)
    sent = [request["json"] for request in server.requests if request["path"].endswith("/chat/completions")]
    keys = {"model", "messages", "max_completion_tokens", "reasoning_effort"}
    assert sent and all(set(body) == keys for body in sent)
    assert submission.evaluation_settings.variant_names() == ["extra_body", "omit_parameters", "token_limit_parameter"]


def test_without_its_profile_a_reasoning_model_fails_fast_and_says_which_setting_fixes_it(
        fixture_scenarios, celery_workers, wait_for):
    celery_workers("w1", concurrency=2)
    with ScriptedServer(doubles.reasoning_model(make_agent("oracle"))) as server:
        submission = _submit(server.url)
        wait_for(lambda: _status(submission) == "paused", 120, "the breaker to pause the submission")
        requests = server.hits
    submission.refresh_from_db()
    # Three attempts end the same way, plus at most the two that were already asking.
    assert requests <= 5
    assert "set token_limit_parameter=max_completion_tokens" in submission.status_reason
    assert not submission.attempts.filter(status=Attempt.Status.SCORED).exists()


def test_a_spent_quota_pauses_the_submission_within_twenty_requests_and_resuming_continues_it(
        fixture_scenarios, celery_workers, wait_for):
    celery_workers("w1", concurrency=2)
    with ScriptedServer(doubles.always(429, doubles.OPENAI_QUOTA, doubles.OPENAI_HEADERS)) as server:
        submission = _submit(server.url, flow="global")
        wait_for(lambda: _status(submission) == "paused", 120, "the breaker to pause the submission")
        paused_at = server.hits
        submission.refresh_from_db()
        assert paused_at <= 20
        assert "OpenAI: insufficient_quota — You exceeded your current quota" in submission.status_reason
        # Paused means silent: the attempts still waiting send nothing.
        waiting = submission.attempts.filter(status__in=Attempt.ACTIVE).count()
        assert waiting > 0
        wait_for(lambda: not submission.attempts.filter(status=Attempt.Status.RUNNING).exists(), 60,
                 "the attempts in flight to stop")
        assert server.hits <= paused_at + 2
        # The team tops up its credit and resumes: every attempt runs, none is lost.
        server.answers = _official_oracle()
        submission_resume(submission=submission)
        wait_for(lambda: _status(submission) not in ("queued", "running"), 300, "the resumed submission")
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPLETED, submission.status_reason
    assert submission.attempts.filter(status=Attempt.Status.SCORED).count() == _mini_levels()


def test_an_endpoint_that_always_answers_503_pauses_within_fifty_requests(
        fixture_scenarios, celery_workers, wait_for):
    # Three retries a request and a try again later, as in production but sooner: the count of
    # requests does not depend on the waits (bench/provider_failures.py measures them at production's).
    celery_workers("w1", concurrency=2,
                   env={"MAGEBENCH_ENDPOINT_BACKOFF": "0.5", "MAGEBENCH_INFRA_RETRY_BASE_SECONDS": "5"})
    with ScriptedServer(doubles.always(503, doubles.NGINX_503, {"Content-Type": "text/html"})) as server:
        submission = _submit(server.url, flow="global")
        wait_for(lambda: _status(submission) == "paused", 300, "the breaker to pause the submission")
        wait_for(lambda: not submission.attempts.filter(status=Attempt.Status.RUNNING).exists(), 120,
                 "the attempts in flight to stop")
        requests = server.hits
    submission.refresh_from_db()
    assert requests <= 50
    assert "server_error" in submission.status_reason and "Service Unavailable" in submission.status_reason
    assert not submission.attempts.filter(score__isnull=False).exists()


def test_submit_endpoint_wait_returns_an_error_when_the_submission_pauses(fixture_scenarios, celery_workers):
    celery_workers("w1", concurrency=1, env={"MAGEBENCH_BREAKER_ATTEMPTS": "1"})
    refusal = {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                         "code": "invalid_api_key"}}
    with ScriptedServer(doubles.always(401, refusal, doubles.OPENAI_HEADERS)) as server, \
            pytest.raises(CommandError, match="paused: .*invalid_api_key"):
        call_command("submit_endpoint", "--team", "Ops", "--url", server.url, "--model", "m", "--env", "sokoban",
                     "--flow", "global", "--subset", "mini", "--suite", "fixture", "--setting", "repeats=1",
                     "--wait", stdout=io.StringIO())


def _mini_levels() -> int:
    return Scenario.objects.filter(environment_id="sokoban", suite="fixture", **Scenario.subset_filter("mini")).count()


def _official_oracle() -> Any:
    """The oracle behind an endpoint that takes the official requests."""
    agent = make_agent("oracle")

    def answer(request: dict[str, Any]) -> Any:
        body = request.get("json") or {}
        return 200, doubles.chat_completion(agent.reply(body["messages"])), dict(doubles.OPENAI_HEADERS)

    return answer
