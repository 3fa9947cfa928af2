"""/metrics: who may read it, and that what it says is what the database and the broker hold."""
from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
import redis
from django.conf import settings as django_settings
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from accounts.models import Team
from catalogue.models import Scenario
from monitoring.collectors import PLATFORM
from submissions.models import Attempt, LiveWorker, ModelEntry, Submission

pytestmark = pytest.mark.django_db

TOKEN = "a-long-random-metrics-token"
PROXIED = {"HTTP_X_FORWARDED_FOR": "203.0.113.9"}


@pytest.fixture(autouse=True)
def metrics_settings(settings) -> Iterator[None]:
    settings.MAGEBENCH_METRICS_TOKEN = TOKEN
    settings.MAGEBENCH_METRICS_CACHE_SECONDS = 0
    PLATFORM._counted_at = None
    yield
    PLATFORM._counted_at = None


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _samples(client, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics", **headers)
    assert response.status_code == 200
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(response.content.decode()) for sample in family.samples}


def _value(samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def test_it_refuses_metrics_from_outside_the_stack_without_the_token(client):
    for headers in ({}, {"HTTP_AUTHORIZATION": "Bearer wrong-token"}, {"HTTP_AUTHORIZATION": f"Basic {TOKEN}"},
                    {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}x"}):
        response = client.get("/metrics", **PROXIED, **headers)
        assert response.status_code == 403
        assert b"magebench" not in response.content and len(response.content) < 20


def test_it_refuses_metrics_through_the_proxy_when_no_token_is_set(client, settings):
    settings.MAGEBENCH_METRICS_TOKEN = ""
    assert client.get("/metrics", **PROXIED, HTTP_AUTHORIZATION="Bearer ").status_code == 403


def test_it_answers_metrics_through_the_proxy_with_the_token(client):
    response = client.get("/metrics", **PROXIED, HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    assert b"# HELP magebench_attempts " in response.content


def test_it_answers_metrics_to_a_scrape_from_inside_the_stack_without_a_token(client):
    for path in ("/metrics", "/metrics/"):
        response = client.get(path)
        assert response.status_code == 200
        assert b"# TYPE magebench_database_up gauge" in response.content


def test_a_site_served_without_a_proxy_in_production_needs_the_token_for_metrics(client, settings):
    settings.PRODUCTION = True
    settings.MAGEBENCH_BEHIND_PROXY = False
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200


def test_metrics_need_the_token_from_inside_too_when_the_setting_says_so(client, settings):
    settings.MAGEBENCH_METRICS_REQUIRE_TOKEN = True
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200


def _attempts(fixture_scenarios, rows: list[tuple[str, int, str]], *, status: str = Submission.Status.RUNNING):
    team, _ = Team.objects.get_or_create(name="Lab", defaults={"slug": "lab"})
    model = ModelEntry.objects.create(team=team, name=str(uuid.uuid4()))
    submission = Submission.objects.create(team=team, model=model, environment_id="sokoban", flow="global",
                                           subset="mini", suite="fixture", status=status)
    scenarios = list(Scenario.objects.filter(environment_id="sokoban", suite="fixture").order_by("key"))
    Attempt.objects.bulk_create(
        Attempt(submission=submission, scenario=scenarios[i], repeat=0, status=attempt_status, model_calls=calls,
                error_kind=kind, score=10.0 if attempt_status == Attempt.Status.SCORED else None)
        for i, (attempt_status, calls, kind) in enumerate(rows))
    return submission


def test_the_metrics_count_attempts_submissions_model_calls_and_failures_as_recorded(client, fixture_scenarios):
    scored, pending, failed, retrying = "scored", "pending", "infra_failed", "retrying"
    _attempts(fixture_scenarios, [(scored, 7, ""), (scored, 5, ""), (pending, 0, ""), (failed, 2, "rate_limit"),
                                  (retrying, 1, "rate_limit"), (retrying, 3, "server_error")])
    _attempts(fixture_scenarios, [(scored, 4, "")], status=Submission.Status.COMPLETED)
    samples = _samples(client)
    assert _value(samples, "magebench_attempts", env="sokoban", status="scored") == 3
    assert _value(samples, "magebench_attempts", env="sokoban", status="pending") == 1
    assert _value(samples, "magebench_attempts", env="sokoban", status="infra_failed") == 1
    assert _value(samples, "magebench_attempts", env="sokoban", status="retrying") == 2
    assert _value(samples, "magebench_attempts", env="sokoban", status="running") is None
    assert _value(samples, "magebench_submissions", status="running") == 1
    assert _value(samples, "magebench_submissions", status="completed") == 1
    assert _value(samples, "magebench_model_calls", env="sokoban") == 7 + 5 + 2 + 1 + 3 + 4
    assert _value(samples, "magebench_attempt_errors", env="sokoban", kind="rate_limit") == 2
    assert _value(samples, "magebench_attempt_errors", env="sokoban", kind="server_error") == 1
    assert _value(samples, "magebench_database_up") == 1


def test_the_database_counts_are_reused_for_a_few_seconds_whatever_the_scrapes(client, fixture_scenarios, settings):
    settings.MAGEBENCH_METRICS_CACHE_SECONDS = 60
    _attempts(fixture_scenarios, [("pending", 0, "")])
    assert _value(_samples(client), "magebench_attempts", env="sokoban", status="pending") == 1
    _attempts(fixture_scenarios, [("pending", 0, "")])
    assert _value(_samples(client), "magebench_attempts", env="sokoban", status="pending") == 1
    settings.MAGEBENCH_METRICS_CACHE_SECONDS = 0
    assert _value(_samples(client), "magebench_attempts", env="sokoban", status="pending") == 2


def test_the_metrics_show_each_workers_last_beat_and_the_live_workers_per_queue(client):
    now, stale_after = timezone.now(), django_settings.MAGEBENCH_WORKER_STALE_AFTER_SECONDS
    LiveWorker.objects.create(hostname="light@a", queues=["light"], concurrency=6,
                              last_seen=now - timedelta(seconds=40))
    LiveWorker.objects.create(hostname="engine@b", queues=["engine", "light"], concurrency=2,
                              last_seen=now - timedelta(seconds=stale_after + 60))
    samples = _samples(client)
    assert _value(samples, "magebench_worker_last_seen_seconds", hostname="light@a", queue="light") == \
        pytest.approx(40, abs=5)
    stale = _value(samples, "magebench_worker_last_seen_seconds", hostname="engine@b", queue="engine")
    assert stale == pytest.approx(stale_after + 60, abs=5)
    assert _value(samples, "magebench_worker_concurrency", hostname="light@a", queue="light") == 6
    assert _value(samples, "magebench_worker_concurrency", hostname="engine@b", queue="light") == 2
    # The stale worker is not live: light has one, engine none.
    assert _value(samples, "magebench_live_workers", queue="light") == 1
    assert _value(samples, "magebench_live_workers", queue="engine") == 0


def test_the_queue_depth_is_the_length_of_the_queues_lists_in_redis(client, settings):
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        pytest.skip("needs the Redis broker (CELERY_BROKER_URL)")
    queue = f"ops-test-{uuid.uuid4().hex[:8]}"
    settings.MAGEBENCH_QUEUE_ROUTES = {**settings.MAGEBENCH_QUEUE_ROUTES, "ops-test": queue}
    server = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    keys = [queue, f"{queue}\x06\x163", f"{queue}\x06\x169"]
    try:
        assert _value(_samples(client), "magebench_queue_messages", queue=queue) == 0
        server.lpush(keys[0], "m1", "m2", "m3")
        server.lpush(keys[1], "m4")
        server.lpush(keys[2], "m5")
        samples = _samples(client)
        assert _value(samples, "magebench_queue_messages", queue=queue) == 5
        assert _value(samples, "magebench_broker_up") == 1
        server.rpop(keys[0])
        assert _value(_samples(client), "magebench_queue_messages", queue=queue) == 4
    finally:
        server.delete(*keys)
        server.close()


def test_an_unreachable_broker_is_reported_down_without_failing_the_scrape(client, settings):
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{_closed_port()}/0"
    samples = _samples(client)
    assert _value(samples, "magebench_broker_up") == 0
    assert not [key for key in samples if key[0] == "magebench_queue_messages"]
    assert _value(samples, "magebench_database_up") == 1


def test_the_filesystem_broker_counts_each_queues_message_files(tmp_path):
    from monitoring.broker import filesystem_depths

    for name in ("1_a.light.msg", "2_b.light.msg", "3_c.browser.msg", "4_d.light.tmp", "5_e.other.msg"):
        (tmp_path / name).write_text("{}")
    assert filesystem_depths(tmp_path, ["light", "browser", "engine"]).queues == {"light": 2, "browser": 1,
                                                                                   "engine": 0}


def test_the_request_histogram_counts_a_request_by_method_and_route_name(client):
    before = _samples(client)
    assert client.get("/favicon.ico").status_code in (200, 301, 302)
    client.get(f"/no-such-page-{uuid.uuid4().hex}/")
    after = _samples(client)

    def grown(name: str, **labels: str) -> float:
        return (_value(after, name, **labels) or 0) - (_value(before, name, **labels) or 0)

    assert grown("magebench_http_request_duration_seconds_count", method="GET", route="favicon") == 1
    assert grown("magebench_http_request_duration_seconds_bucket", method="GET", route="favicon", le="+Inf") == 1
    assert grown("magebench_http_request_duration_seconds_sum", method="GET", route="favicon") > 0
    assert grown("magebench_http_request_duration_seconds_count", method="GET", route="unmatched") == 1
    assert grown("magebench_http_responses_total", method="GET", route="unmatched", status_class="4xx") == 1
    # The scrapes themselves are answered before the timing, and no label holds a raw path.
    assert not [key for key in after if "no-such-page" in str(key)]
    assert not [key for key in after if ("route", "metrics") in key[1]]
