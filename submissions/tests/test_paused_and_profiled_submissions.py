"""What a team sees of its request profile and of a paused submission: the form, the page, the API,
the replay and the commands; and how a long Retry-After holds every attempt on the endpoint."""
from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from evaluators.baselines.agents import make_agent
from evaluators.endpoints.errors import SERVER_ERROR, InfraError
from evaluators.tests import provider_doubles as doubles
from evaluators.tests.scripted_server import ScriptedServer
from submissions.breaker import breaker_record_failure
from submissions.engine import _attempt_play, attempt_run
from submissions.models import Attempt, Submission
from submissions.selectors import queue_contenders, queue_for
from submissions.services import submission_prepare, submission_resume

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


def _form(url: str, team_id: int, **extra: Any) -> dict[str, Any]:
    return {"team": str(team_id), "model_name": "o-double", "env": "sokoban", "flow": "global", "subset": "mini",
            "endpoint_url": url, "repeats": 1, **extra}


def _create(lab: Any, url: str, **settings: Any) -> Submission:
    response = lab.client.post(reverse("api-submission-create"), {
        "model_name": "o-double", "env": "sokoban", "flow": "global", "subset": "mini", "suite": "fixture",
        "endpoint_url": url, "endpoint_model": "o-double", "settings": {"repeats": 1, **settings}},
        content_type="application/json", **lab.auth())
    assert response.status_code == 201, response.content
    submission_prepare(submission_id=response.json()["id"])  # as a worker does after the request
    return Submission.objects.get(id=response.json()["id"])


def test_the_form_freezes_a_reasoning_profile_and_the_page_labels_the_run_a_variant(lab, fixture_scenarios):
    response = lab.client.post(reverse("submit"), _form(
        "http://127.0.0.1:9/v1", lab.team.id, token_limit_parameter="max_completion_tokens",
        omit_parameters=["temperature", "top_p", "frequency_penalty"], extra_body='{"reasoning_effort": "low"}'))
    assert response.status_code == 302
    submission = Submission.objects.get()
    assert submission.settings["token_limit_parameter"] == "max_completion_tokens"
    assert submission.settings["omit_parameters"] == "temperature,top_p,frequency_penalty"
    assert submission.settings["extra_body"] == {"reasoning_effort": "low"}
    page = lab.client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    assert "max_completion_tokens" in page and "reasoning_effort" in page


def test_the_form_refuses_an_extra_body_naming_the_model_and_stores_nothing(lab, fixture_scenarios):
    response = lab.client.post(reverse("submit"), _form("http://127.0.0.1:9/v1", lab.team.id,
                                                        extra_body='{"model": "gpt-other"}'))
    assert response.status_code == 200
    assert "extra_body cannot set model" in response.content.decode()
    assert not Submission.objects.exists()


def test_the_api_refuses_an_unknown_token_limit_parameter_and_stores_nothing(lab, fixture_scenarios):
    response = lab.client.post(reverse("api-submission-create"), {
        "model_name": "M", "env": "sokoban", "flow": "global", "subset": "mini", "suite": "fixture",
        "endpoint_url": "http://127.0.0.1:9/v1", "settings": {"token_limit_parameter": "max_new_tokens"}},
        content_type="application/json", **lab.auth())
    assert response.status_code == 400 and "token_limit_parameter must be one of" in response.json()["message"]
    assert not Submission.objects.exists()


def test_a_paused_submission_names_its_cause_everywhere_and_resumes(lab, fixture_scenarios, settings):
    settings.MAGEBENCH_BREAKER_ATTEMPTS = 2
    with ScriptedServer(doubles.always(429, doubles.OPENAI_QUOTA, doubles.OPENAI_HEADERS)) as server:
        submission = _create(lab, server.url)
        first, second, *rest = submission.attempts.order_by("id")
        attempt_run(attempt_id=first.id)
        attempt_run(attempt_id=second.id)
        submission.refresh_from_db()
        assert submission.status == Submission.Status.PAUSED and server.hits == 2
        # A paused submission is claimed by no worker: its waiting attempts send nothing.
        assert attempt_run(attempt_id=rest[0].id) is None and server.hits == 2
    assert "OpenAI: insufficient_quota" in submission.status_reason and "resume" in submission.status_reason
    page = lab.client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    assert 'class="status paused"' in page and "insufficient_quota" in page
    resume_button = page.split("Resume unscored attempts</button>")[0].rsplit("<button", 1)[1]
    assert "disabled" not in resume_button
    api = lab.client.get(reverse("api-submission-detail", args=[submission.id]), **lab.auth("read")).json()
    assert api["status"] == "paused" and "insufficient_quota" in api["status_reason"]
    resumed = submission_resume(submission=submission)
    assert resumed.status == Submission.Status.QUEUED and resumed.breaker_cause == ""
    assert not resumed.attempts.filter(status=Attempt.Status.INFRA_FAILED).exists()


def test_a_submission_paused_with_nothing_left_running_stays_paused_until_resumed(lab, fixture_scenarios):
    with ScriptedServer(doubles.always(429, doubles.OPENAI_QUOTA, doubles.OPENAI_HEADERS)) as server:
        submission = _create(lab, server.url)
        for attempt in submission.attempts.order_by("id"):
            # Claimed before the pause, as attempts already in flight are: each ends on the spent quota.
            Attempt.objects.filter(id=attempt.id).update(status=Attempt.Status.RUNNING, tries=1)
        for attempt in submission.attempts.order_by("id"):
            _attempt_play(Attempt.objects.select_related("submission", "scenario").get(id=attempt.id))
    submission.refresh_from_db()
    assert not submission.attempts.filter(status__in=Attempt.ACTIVE).exists()
    assert submission.status == Submission.Status.PAUSED and "insufficient_quota" in submission.status_reason


def test_a_long_retry_after_holds_every_attempt_on_the_endpoint_until_it_ends(lab, fixture_scenarios):
    answers = doubles.always(429, doubles.AZURE_RATE, {**doubles.AZURE_HEADERS, "Retry-After": "120"})
    with ScriptedServer(answers) as server:
        submission = _create(lab, server.url)
        first = submission.attempts.order_by("id").first()
        assert first is not None
        delay = attempt_run(attempt_id=first.id)
        assert server.hits == 1
    assert delay is not None and delay >= 120
    submission.refresh_from_db()
    assert submission.calls_resume_at is not None
    assert 100 < (submission.calls_resume_at - timezone.now()).total_seconds() <= 120
    # None of its attempts is due before then, so no worker asks early.
    assert queue_contenders(queues=[queue_for("sokoban")]).contenders == []


def test_a_scored_attempt_starts_the_breaker_s_count_again(lab, fixture_scenarios, settings):
    settings.MAGEBENCH_BREAKER_ATTEMPTS = 2
    with ScriptedServer(doubles.reasoning_model(make_agent("oracle"))) as server:
        submission = _create(lab, server.url, token_limit_parameter="max_completion_tokens",
                             omit_parameters="temperature,top_p,frequency_penalty")
        first, second, third = list(submission.attempts.order_by("id"))[:3]
        breaker_record_failure(submission_id=submission.id, attempt_id=first.id,
                               error=InfraError(SERVER_ERROR, "Service Unavailable", 503))
        attempt_run(attempt_id=second.id)
        breaker_record_failure(submission_id=submission.id, attempt_id=third.id,
                               error=InfraError(SERVER_ERROR, "Service Unavailable", 503))
    submission.refresh_from_db()
    assert submission.status != Submission.Status.PAUSED and submission.breaker_attempts == [third.id]


def test_the_replay_and_the_api_show_replies_cut_at_the_token_limit_and_refusals(lab, fixture_scenarios):
    answers = [(200, doubles.chat_completion("### Actions\nRight", finish_reason="length", reasoning_tokens=12),
                doubles.JSON),
               (200, doubles.chat_completion("", refusal="I can't help with that."), doubles.JSON)]
    with ScriptedServer(answers) as server:
        submission = _create(lab, server.url)
        first, second = list(submission.attempts.order_by("id"))[:2]
        attempt_run(attempt_id=first.id)
        attempt_run(attempt_id=second.id)
    api = lab.client.get(reverse("api-submission-detail", args=[submission.id]), **lab.auth("read")).json()
    assert api["progress"]["replies"] == 2
    assert api["progress"]["replies_cut"] == 1 and api["progress"]["refusals"] == 1
    page = lab.client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    assert "1 of 2" in page
    replay = lab.client.get(reverse("attempt-replay", args=[second.id])).content.decode()
    assert "refused: I can&#x27;t help with that." in replay
    replay = lab.client.get(reverse("attempt-replay", args=[first.id])).content.decode()
    assert "length · 12 reasoning tokens" in replay
