"""Fair scheduling on real processes: a Celery worker on Redis, PostgreSQL and a baseline agent
served over the OpenAI protocol, each reply held back a fixed time so that attempt times are steady."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from accounts.services import team_get_or_create
from catalogue.models import Scenario
from submissions.models import Attempt, LiveWorker, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint

pytestmark = pytest.mark.integration

#: Seconds the agent waits before each reply: most of an attempt's time, whatever else the machine does.
REPLY_DELAY = 2.0


def _submit(url: str, team: str, *, repeats: int = 1, only: int | None = None) -> Submission:
    model = model_entry_upsert(team=team_get_or_create(name=team), name=f"{team} oracle")
    with transaction.atomic():  # the messages go out on commit, when only the kept attempts exist
        submission = submission_create_endpoint(model=model, env="sokoban", flow="global", subset="mini",
                                                suite="fixture", endpoint_url=url, endpoint_model="oracle",
                                                settings={"repeats": repeats, "resolution": 256}, is_public=True)
        if only is not None:
            keep = list(submission.attempts.order_by("id").values_list("id", flat=True)[:only])
            submission.attempts.exclude(id__in=keep).delete()
    return submission


def _finished(submission: Submission) -> bool:
    return not Submission.objects.get(id=submission.id).is_active


def test_a_short_submission_created_after_a_long_one_finishes_first_as_its_eta_said(
        fixture_scenarios, baseline_endpoint, celery_workers, wait_for, client):
    server = baseline_endpoint("oracle", fault="timeout", delay=REPLY_DELAY)
    worker = celery_workers("fair", concurrency=1)
    # The worker says which queues it reads and how many attempts it runs at once.
    wait_for(lambda: LiveWorker.objects.filter(hostname=worker.name).exists(), 60, "the worker to register")
    assert LiveWorker.objects.values_list("queues", "concurrency").get(hostname=worker.name) == (
        ["browser", "engine", "light"], 1)

    # A finished run of the board gives its time per attempt.
    warmup = _submit(server.url, "Warm-up lab", only=2)
    wait_for(lambda: _finished(warmup), 300, "the warm-up run to finish")

    # Eight attempts: the fair order lets the short run's two go between them, long before the last.
    long = _submit(server.url, "Long lab", repeats=2, only=8)
    wait_for(lambda: long.attempts.filter(status=Attempt.Status.RUNNING).exists(), 120, "the long run to start")
    short = _submit(server.url, "Short lab", only=2)
    read_at = timezone.now()
    progress = client.get(reverse("api-submission-detail", args=[short.id])).json()["progress"]
    assert progress["eta_seconds"] is not None and not progress["eta_is_lower_bound"], progress
    assert progress["eta_basis"] == "recent runs of this board"

    # Work waits on the browser queue while the only worker is busy on the light one: the worker
    # reads that queue too, so it is not reported down. (Its attempts are not due for an hour.)
    waiting = _submit(server.url, "Waiting lab", only=1)
    Submission.objects.filter(id=waiting.id).update(environment_id="webui")
    Attempt.objects.filter(submission=waiting).update(
        status=Attempt.Status.RETRYING, tries=1, next_try_at=timezone.now() + timedelta(hours=1),
        scenario=Scenario.objects.filter(environment_id="webui", suite="fixture").first())
    page = client.get(reverse("queue")).content.decode()
    assert "Attempts waiting" in page and "may be down" not in page

    wait_for(lambda: _finished(short), 600, "the short run to finish")
    short.refresh_from_db()
    assert short.status == Submission.Status.COMPLETED, short.status_reason
    assert Submission.objects.get(id=long.id).is_active  # created first, still running
    actual = (short.finished_at - read_at).total_seconds()
    assert 0.5 * actual <= progress["eta_seconds"] <= 1.5 * actual, (progress["eta_seconds"], actual)

    wait_for(lambda: _finished(long), 900, "the long run to finish")
    long.refresh_from_db()
    assert long.status == Submission.Status.COMPLETED and long.finished_at > short.finished_at
    worker.stop()
    assert not LiveWorker.objects.filter(hostname=worker.name).exists()  # a stopped worker says it has gone
    print(f"ETA {progress['eta_seconds']:.1f} s, actual wait {actual:.1f} s")
