"""Load: fifty teams' submissions (three levels each) arrive at once through the API; real workers on
the local Redis and PostgreSQL run them against five local baseline endpoints.

What must hold under load: every request is answered (no 5xx, no lost submission), every attempt
ends exactly once (one try, one score, one trajectory), no team server is sent more requests at once
than the per-endpoint limit, and every submission gets its stored board result.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from django.conf import settings as django_settings

from catalogue.models import Scenario
from submissions.models import Attempt, Submission, SubmissionResult

pytestmark = pytest.mark.integration

SUBMISSIONS = 50
ENDPOINTS = 5
PER_ENDPOINT_LIMIT = 2
#: Levels per submission: 150 attempts keep four pool processes and every endpoint's limit contended,
#: at less than a third of the 500 that the ten mini levels would give (the load is the submissions).
LEVELS = 3


def test_fifty_concurrent_submissions_each_end_every_attempt_exactly_once(
        live_server, lab, fixture_scenarios, baseline_endpoint, celery_workers, wait_for):
    lab.team.quota_per_day = lab.team.quota_total = lab.team.quota_concurrent = 10 * SUBMISSIONS
    lab.team.save()
    mini = Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True)
    mini.exclude(id__in=list(mini.order_by("key").values_list("id", flat=True)[:LEVELS])).update(in_mini=False)
    # Each request stalls a little, so attempts overlap and the endpoint limit is really contended.
    servers = [baseline_endpoint("oracle", fault="timeout", delay=0.05) for _ in range(ENDPOINTS)]
    worker_env = {"MAGEBENCH_ENDPOINT_CONCURRENCY": str(PER_ENDPOINT_LIMIT),
                  "MAGEBENCH_ENDPOINT_BUSY_RETRY_SECONDS": "0.2"}
    celery_workers("a", concurrency=2, env=worker_env)
    celery_workers("b", concurrency=2, env=worker_env)

    def submit(number: int) -> requests.Response:
        return requests.post(
            f"{live_server.url}/api/v1/submissions/", timeout=60,
            headers={"Authorization": f"Bearer {lab.write_token}"},
            json={"model_name": f"Load model {number:02d}", "env": "sokoban", "flow": "global", "subset": "mini",
                  "suite": "fixture", "public": True, "endpoint_url": servers[number % ENDPOINTS].url,
                  "endpoint_model": "oracle", "settings": {"repeats": 1, "resolution": 256}})

    # Like gunicorn in production, the test server queues every connection that arrives at once
    # (conftest.py), so a refused or reset connection here would be the platform's, not the test's.
    assert live_server.thread.httpd.request_queue_size >= SUBMISSIONS
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=SUBMISSIONS) as pool:
        responses = list(pool.map(submit, range(SUBMISSIONS)))
    refused = [r.text for r in responses if r.status_code != 201]
    assert [r.status_code for r in responses] == [201] * SUBMISSIONS, refused
    ids = [r.json()["id"] for r in responses]
    assert len(set(ids)) == SUBMISSIONS
    per_submission = responses[0].json()["attempts"]
    assert per_submission == LEVELS

    wait_for(lambda: not Submission.objects.filter(id__in=ids, status__in=[Submission.Status.QUEUED,
                                                                           Submission.Status.RUNNING]).exists(),
             600, "all fifty submissions to finish")
    elapsed = time.monotonic() - started

    submissions = Submission.objects.filter(id__in=ids)
    assert sorted(submissions.values_list("status", flat=True)) == [Submission.Status.COMPLETED] * SUBMISSIONS
    attempts = list(Attempt.objects.filter(submission_id__in=ids))
    assert len(attempts) == SUBMISSIONS * per_submission
    assert {a.status for a in attempts} == {Attempt.Status.SCORED}
    assert {a.tries for a in attempts} == {1}  # waiting for a busy endpoint never used up a try
    assert all(a.score == pytest.approx(100.0) for a in attempts)
    # One trajectory per attempt: nothing was played twice.
    media = Path(django_settings.MEDIA_ROOT)
    for attempt in attempts:
        assert [p.name for p in (media / attempt.trajectory_path).parent.iterdir()] == ["try-1"]
    # Each endpoint answered exactly the calls that were recorded plus the requests the client sent
    # again (a request slower than the client's timeout on a loaded machine is abandoned and resent),
    # and never more than the limit at once, but for an abandoned request still being answered.
    retries = sum(a.details["endpoint_retries"] for a in attempts)
    assert sum(s.chat_requests for s in servers) == sum(a.model_calls for a in attempts) + retries
    assert max(s.most_in_flight for s in servers) <= PER_ENDPOINT_LIMIT + retries
    results = SubmissionResult.objects.filter(submission_id__in=ids)
    assert results.count() == SUBMISSIONS and {r.n_scored for r in results} == {per_submission}
    board = requests.get(f"{live_server.url}/api/v1/boards/sokoban/global/mini/?suite=fixture", timeout=60).json()
    assert sum(1 for row in board["rows"] if row["model"].startswith("Load model")) == SUBMISSIONS
    print(f"\n{SUBMISSIONS} submissions × {per_submission} attempts on 2 workers × 2 processes: {elapsed:.1f} s, "
          f"{retries} endpoint retries")
