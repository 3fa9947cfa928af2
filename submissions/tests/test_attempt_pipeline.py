"""Attempts run against real HTTP endpoints (the baseline agents), in-process and on Celery workers."""
from __future__ import annotations

import socket
from datetime import timedelta
from typing import Any

import pytest

from accounts.services import team_get_or_create
from submissions.engine import attempt_claim, attempt_run
from submissions.models import Attempt, Submission
from submissions.services import model_entry_upsert, submission_cancel, submission_create_endpoint, submission_resume

pytestmark = pytest.mark.integration


def _submit(url: str, *, flow: str = "global", subset: str = "mini", agent: str = "oracle", **settings: Any):
    team = team_get_or_create(name="Test team")
    model = model_entry_upsert(team=team, name=f"{agent} model")
    return submission_create_endpoint(model=model, env="sokoban", flow=flow, subset=subset, suite="fixture",
                                      endpoint_url=url, endpoint_model=agent,
                                      settings={"repeats": 1, "resolution": 256, **settings})


def _run_all(submission: Submission, limit: int = 10) -> None:
    """Run every attempt in this process, retrying infrastructure failures like the task does."""
    for attempt_id in submission.attempts.values_list("id", flat=True):
        for _ in range(limit):
            if attempt_run(attempt_id=attempt_id) is None:
                break


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.django_db
@pytest.mark.parametrize("flow", ["global", "online"])
def test_the_oracle_scores_100_on_every_fixture_level(fixture_scenarios, baseline_endpoint, flow):
    server = baseline_endpoint("oracle")
    # Global runs at the paper's resolution; Online sends a frame per step, which at 640 px costs the
    # suite half a minute of PNG encoding for the same moves and scores.
    submission = _submit(server.url, flow=flow, subset="full", resolution=640 if flow == "global" else 256)
    _run_all(submission)
    attempts = list(submission.attempts.select_related("scenario"))
    assert len(attempts) >= 30
    for attempt in attempts:
        assert attempt.status == Attempt.Status.SCORED, (attempt.scenario.key, attempt.error_message)
        assert attempt.score == pytest.approx(100.0), attempt.scenario.key
        assert attempt.outcome == "solved"
        assert not attempt.invalid_action and not attempt.repeating_action
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPLETED


@pytest.mark.django_db
@pytest.mark.parametrize("flow", ["global", "online"])
def test_the_idle_agent_scores_exactly_100_minus_5_rub_on_every_fixture_level(fixture_scenarios, baseline_endpoint,
                                                                             flow):
    server = baseline_endpoint("idle")
    settings: dict[str, Any] = {"max_loop": 3} if flow == "online" else {}
    submission = _submit(server.url, flow=flow, subset="full", **settings)
    _run_all(submission)
    for attempt in submission.attempts.select_related("scenario"):
        rub = attempt.scenario.data["upper_bound"]["reward"]
        assert attempt.status == Attempt.Status.SCORED
        assert attempt.score == pytest.approx(100 - 5 * rub), attempt.scenario.key
        assert attempt.steps == 0 and attempt.outcome == "no_action"
        assert attempt.invalid_action  # a reply with no action is an invalid action
        # the official protocol: one generation (Global), one reply per turn with no regeneration (Online)
        expected_calls = 1 if flow == "global" else 3
        assert attempt.model_calls == expected_calls and attempt.parse_errors == expected_calls


@pytest.mark.django_db
def test_the_random_agent_is_scored_between_idle_and_perfect(fixture_scenarios, baseline_endpoint):
    server = baseline_endpoint("random", seed=7)
    submission = _submit(server.url, flow="online", max_loop=10)
    _run_all(submission)
    for attempt in submission.attempts.select_related("scenario"):
        rub = attempt.scenario.data["upper_bound"]["reward"]
        assert attempt.status == Attempt.Status.SCORED
        assert 100 - 5 * rub <= attempt.score <= 100
        assert attempt.steps == 10 and attempt.model_calls == 10


@pytest.mark.django_db
@pytest.mark.parametrize("fault,kind", [
    ("500", "server_error"),
    ("garbage", "invalid_response"),
    ("empty_choices", "invalid_response"),
    ("timeout", "request_timeout"),
    ("drop", None),
])
def test_it_retries_endpoint_failures_and_never_scores_them(fixture_scenarios, baseline_endpoint, settings, fault,
                                                            kind):
    settings.MAGEBENCH_INFRA_MAX_TRIES = 2
    settings.MAGEBENCH_ENDPOINT_MAX_RETRIES = 1
    settings.MAGEBENCH_ENDPOINT_TIMEOUT = 0.5
    server = baseline_endpoint("oracle", fault=fault, delay=2.0)
    submission = _submit(server.url)
    attempt = submission.attempts.first()
    assert attempt_run(attempt_id=attempt.id) is not None  # first failure: try again later
    attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.RETRYING and attempt.score is None and attempt.next_try_at
    assert attempt_run(attempt_id=attempt.id) is None  # second failure: give up
    attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.INFRA_FAILED and attempt.score is None and attempt.tries == 2
    if kind:
        assert attempt.error_kind == kind
    else:
        assert attempt.error_kind in {"endpoint_unreachable", "invalid_response", "server_error"}
    assert attempt.error_message


@pytest.mark.django_db
def test_an_unreachable_endpoint_leaves_the_submission_incomplete_with_the_reason(fixture_scenarios, settings):
    settings.MAGEBENCH_INFRA_MAX_TRIES = 1
    settings.MAGEBENCH_ENDPOINT_MAX_RETRIES = 0
    settings.MAGEBENCH_BREAKER_ATTEMPTS = 1000  # every attempt runs out its tries; the breaker's own tests pause
    submission = _submit(f"http://127.0.0.1:{_closed_port()}/v1")
    _run_all(submission)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.INCOMPLETE
    assert "endpoint_unreachable" in submission.status_reason
    assert not submission.attempts.filter(score__isnull=False).exists()
    assert set(submission.attempts.values_list("status", flat=True)) == {Attempt.Status.INFRA_FAILED}


@pytest.mark.django_db
def test_it_does_not_retry_an_auth_error(fixture_scenarios, baseline_endpoint, settings):
    settings.MAGEBENCH_INFRA_MAX_TRIES = 5
    server = baseline_endpoint("oracle", api_key="right-key")
    submission = _submit(server.url)
    attempt = submission.attempts.first()
    assert attempt_run(attempt_id=attempt.id) is None
    attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.INFRA_FAILED and attempt.error_kind == "auth_error" and attempt.tries == 1


@pytest.mark.django_db
def test_a_transient_failure_is_absorbed_and_scored_normally(fixture_scenarios, baseline_endpoint, settings):
    settings.MAGEBENCH_ENDPOINT_MAX_RETRIES = 3
    server = baseline_endpoint("oracle", fault="500", first_n=2)
    submission = _submit(server.url)
    attempt = submission.attempts.first()
    attempt_run(attempt_id=attempt.id)
    attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.SCORED and attempt.score == pytest.approx(100.0) and attempt.tries == 1
    # The two failed requests are the endpoint's retries, not model calls.
    assert attempt.details["endpoint_retries"] == 2
    assert server.chat_requests == attempt.model_calls + 2


@pytest.mark.django_db
def test_an_attempt_is_claimed_once(fixture_scenarios, baseline_endpoint):
    server = baseline_endpoint("idle")
    submission = _submit(server.url)
    attempt = submission.attempts.first()
    assert attempt_claim(attempt_id=attempt.id) is not None
    assert attempt_claim(attempt_id=attempt.id) is None  # a re-delivered task finds it taken
    assert attempt_run(attempt_id=attempt.id) is None
    attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.RUNNING and attempt.tries == 1


@pytest.mark.django_db
def test_a_scored_attempt_is_never_run_twice(fixture_scenarios, baseline_endpoint):
    server = baseline_endpoint("oracle")
    submission = _submit(server.url)
    attempt = submission.attempts.first()
    attempt_run(attempt_id=attempt.id)
    calls = server.chat_requests
    attempt_run(attempt_id=attempt.id)
    attempt.refresh_from_db()
    assert server.chat_requests == calls and attempt.tries == 1 and attempt.status == Attempt.Status.SCORED


@pytest.mark.django_db
def test_cancel_stops_waiting_attempts_and_resume_queues_them_again(fixture_scenarios, baseline_endpoint):
    server = baseline_endpoint("oracle")
    submission = _submit(server.url)
    first = submission.attempts.first()
    attempt_run(attempt_id=first.id)
    submission_cancel(submission=submission)
    assert submission.status == Submission.Status.CANCELLED
    assert submission.attempts.filter(status=Attempt.Status.CANCELLED).count() == submission.attempts.count() - 1
    submission_resume(submission=submission)
    assert submission.status == Submission.Status.QUEUED
    _run_all(submission)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPLETED
    assert submission.attempts.filter(status=Attempt.Status.SCORED).count() == submission.attempts.count()


@pytest.mark.django_db(transaction=True)
def test_a_celery_worker_on_redis_runs_every_attempt_and_retries_infrastructure_failures(
        fixture_scenarios, baseline_endpoint, celery_worker_process, wait_for):
    # The worker's client makes at most 4 requests per try (3 retries in the test settings). Eight
    # failing requests shared by two worker processes therefore fail at least one try, which the
    # task re-queues; a later try succeeds.
    server = baseline_endpoint("oracle", fault="500", first_n=8)
    submission = _submit(server.url, flow="online")
    wait_for(lambda: not Submission.objects.get(id=submission.id).is_active, 300, "the submission to finish")
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPLETED, submission.status_reason
    attempts = list(submission.attempts.all())
    assert all(a.status == Attempt.Status.SCORED and a.score == pytest.approx(100.0) for a in attempts)
    assert max(a.tries for a in attempts) >= 2  # at least one attempt needed another try
    assert all(a.trajectory_path.endswith(f"try-{a.tries}") for a in attempts)


@pytest.mark.django_db
def test_attempts_left_running_by_a_dead_worker_are_queued_again_and_finish_once(fixture_scenarios,
                                                                                 baseline_endpoint):
    from django.utils import timezone

    from submissions.watchdog import attempts_requeue_stalled

    server = baseline_endpoint("oracle")
    submission = _submit(server.url)
    lost = submission.attempts.first()
    attempt_claim(attempt_id=lost.id)  # claimed, then the worker died without a heartbeat
    Attempt.objects.filter(id=lost.id).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert attempts_requeue_stalled(stalled_after_seconds=600) == {"stalled": 1, "failed": 0, "queued": 10}
    lost.refresh_from_db()
    assert lost.status == Attempt.Status.RETRYING and lost.error_kind == "worker_lost"
    _run_all(submission)
    lost.refresh_from_db()
    assert lost.status == Attempt.Status.SCORED and lost.tries == 2 and lost.score == pytest.approx(100.0)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPLETED


@pytest.mark.django_db
def test_the_watchdog_fails_an_attempt_whose_worker_died_on_every_try_with_the_reason(fixture_scenarios, settings):
    import redis
    from django.utils import timezone

    from submissions.tasks import watchdog_task
    from submissions.watchdog import BROKER_MARKER_KEY

    redis.Redis.from_url(settings.CELERY_BROKER_URL).set(BROKER_MARKER_KEY, "up")  # the broker kept its messages

    settings.MAGEBENCH_INFRA_MAX_TRIES = 2
    submission = _submit("http://127.0.0.1:9/v1")
    doomed, stalled, *_ = submission.attempts.order_by("id")
    Attempt.objects.filter(id=doomed.id).update(status=Attempt.Status.RUNNING, tries=2,
                                                heartbeat_at=timezone.now() - timedelta(hours=1))
    Attempt.objects.filter(id=stalled.id).update(status=Attempt.Status.RUNNING, tries=1,
                                                 heartbeat_at=timezone.now() - timedelta(hours=1))
    # The beat task queues only what it released: the other waiting attempts keep their messages.
    assert watchdog_task() == {"stalled": 1, "failed": 1, "queued": 1, "broker_emptied": 0, "idle_resent": 0,
                               "prepared": 0}
    doomed.refresh_from_db()
    stalled.refresh_from_db()
    assert doomed.status == Attempt.Status.INFRA_FAILED and "each of its 2 tries" in doomed.error_message
    assert doomed.score is None and stalled.status == Attempt.Status.RETRYING


@pytest.mark.django_db(transaction=True)
def test_each_environment_is_queued_on_its_own_queue(fixture_scenarios, settings):
    import redis

    from accounts.services import team_get_or_create
    from config.celery import app
    from submissions.services import model_entry_upsert, submission_create_endpoint

    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    app.control.purge()
    model = model_entry_upsert(team=team_get_or_create(name="Queues"), name="M")
    counts = {}
    for env, flow in (("sokoban", "global"), ("webui", "global"), ("football", "online")):
        submission = submission_create_endpoint(model=model, env=env, flow=flow, subset="mini", suite="fixture",
                                                endpoint_url="http://127.0.0.1:9/v1", settings={"repeats": 1})
        counts[env] = submission.attempts.count()
    assert {queue: client.llen(queue) for queue in ("light", "browser", "engine")} == {
        "light": counts["sokoban"], "browser": counts["webui"], "engine": counts["football"]}
    app.control.purge()


@pytest.mark.django_db
def test_an_endpoint_at_its_concurrency_limit_makes_attempts_wait_without_using_a_try(fixture_scenarios,
                                                                                      baseline_endpoint, settings):
    from django.utils import timezone

    settings.MAGEBENCH_ENDPOINT_CONCURRENCY = 1
    settings.MAGEBENCH_ENDPOINT_BUSY_RETRY_SECONDS = 7.0
    url = baseline_endpoint("oracle").url
    first, second = _submit(url), _submit(url, agent="other")  # two submissions, one team server
    busy = first.attempts.order_by("id").first()
    assert attempt_claim(attempt_id=busy.id) is not None  # another worker is running this one
    waiting = second.attempts.order_by("id").first()
    assert attempt_run(attempt_id=waiting.id) == 7.0
    waiting.refresh_from_db()
    assert waiting.status == Attempt.Status.PENDING and waiting.tries == 0
    # A place held by a dead worker (no heartbeat for longer than the stall limit) is free again.
    Attempt.objects.filter(id=busy.id).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert attempt_run(attempt_id=waiting.id) is None
    waiting.refresh_from_db()
    assert waiting.status == Attempt.Status.SCORED and waiting.tries == 1


@pytest.mark.django_db
def test_a_submission_is_marked_finished_only_together_with_its_stored_result(fixture_scenarios, baseline_endpoint,
                                                                               monkeypatch):
    import submissions.services as services
    from submissions.models import SubmissionResult

    server = baseline_endpoint("oracle")
    submission = _submit(server.url)
    real_rebuild = services.submission_result_rebuild

    def failing_rebuild(*, submission_id: int) -> Any:
        raise RuntimeError("the summary could not be written")

    monkeypatch.setattr(services, "submission_result_rebuild", failing_rebuild)
    with pytest.raises(RuntimeError):
        _run_all(submission)
    submission.refresh_from_db()
    assert submission.is_active and submission.finished_at is None
    assert not SubmissionResult.objects.filter(submission=submission).exists()

    monkeypatch.setattr(services, "submission_result_rebuild", real_rebuild)
    services.submission_refresh_status(submission_id=submission.id)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPLETED
    assert SubmissionResult.objects.get(submission=submission).n_scored == submission.attempts.count()
