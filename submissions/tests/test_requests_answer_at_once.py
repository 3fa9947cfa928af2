"""A request that queues work answers at once: a worker creates a run's attempts and sends their turns.

A full set is 483 scenarios × repeats: one row and one broker message per attempt. Sent from the
request, 50 submissions at once kept gunicorn's workers busy to the edge of their timeout.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from catalogue.models import Scenario
from submissions import services, watchdog
from submissions.models import Attempt, Submission
from submissions.services import PREPARE_SUBMISSION_TASK, RUN_ATTEMPT_TASK, submission_refresh_status
from submissions.tasks import prepare_submission_task

pytestmark = [pytest.mark.django_db, pytest.mark.prepare_in_worker]

FULL_SET = 483
REPEATS = 3


@dataclass
class Broker:
    """The messages the services send, by task name, instead of a broker's."""

    sent: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)

    def of(self, task: str) -> list[tuple[Any, ...]]:
        return [args for name, args in self.sent if name == task]

    def signature(self, name: str) -> Any:
        broker = self

        class _Signature:
            def apply_async(self, args: tuple[Any, ...], **options: Any) -> None:
                broker.sent.append((name, tuple(args)))

        return _Signature()


@pytest.fixture
def broker(monkeypatch) -> Broker:
    fake = Broker()
    monkeypatch.setattr(services, "current_app", fake)
    return fake


@pytest.fixture
def full_set(lab, fixture_scenarios) -> str:
    """A Sokoban suite of the official full set's size (its first 20 the mini set); its name."""
    lab.team.quota_per_day = lab.team.quota_total = lab.team.quota_concurrent = 100
    lab.team.save()
    like = Scenario.objects.filter(environment_id="sokoban", suite="fixture").order_by("key").first()
    assert like is not None
    Scenario.objects.bulk_create(
        Scenario(environment_id="sokoban", suite="large", key=f"level-{i:03d}", in_mini=i < 20, in_full=True,
                 data=like.data, tags=like.tags, resource_path=like.resource_path, content_hash=str(i))
        for i in range(FULL_SET))
    return "large"


def _submit(lab: Any, suite: str, subset: str) -> Any:
    return lab.client.post(reverse("api-submission-create"), {
        "model_name": "Vision-7B", "env": "sokoban", "flow": "global", "subset": subset, "suite": suite,
        "endpoint_url": "http://127.0.0.1:9/v1", "endpoint_model": "m", "settings": {"repeats": REPEATS}},
        content_type="application/json", **lab.auth())


#: The queries of one submit request, whatever the size of the set.
SUBMIT_QUERIES = 40


def test_a_submit_request_writes_and_sends_as_much_for_a_full_set_as_for_a_mini_one(
        lab, full_set, broker, django_assert_max_num_queries, django_capture_on_commit_callbacks):
    answers = {}
    for subset in ("mini", "full"):
        with django_assert_max_num_queries(SUBMIT_QUERIES), django_capture_on_commit_callbacks(execute=True):
            response = _submit(lab, full_set, subset)
        assert response.status_code == 201, response.content
        answers[subset] = response.json()
    # The team sees its submission queued at once, with the attempts it will have.
    assert answers["full"]["status"] == "queued" and answers["full"]["attempts"] == FULL_SET * REPEATS
    full = Submission.objects.get(id=answers["full"]["id"])
    # Nothing per attempt was written or sent in the request: one message, the preparation's.
    assert not full.attempts.exists()
    assert broker.of(PREPARE_SUBMISSION_TASK) == [(answers["mini"]["id"],), (full.id,)]
    assert broker.of(RUN_ATTEMPT_TASK) == []

    with django_capture_on_commit_callbacks(execute=True):
        prepare_submission_task(full.id)
    assert full.attempts.count() == FULL_SET * REPEATS
    assert len(broker.of(RUN_ATTEMPT_TASK)) == FULL_SET * REPEATS
    assert not full.attempts.filter(queued_at__isnull=True).exists()

    # Delivered twice (or after a worker took the job on its own): nothing more is created or sent.
    with django_capture_on_commit_callbacks(execute=True):
        prepare_submission_task(full.id)
    assert full.attempts.count() == FULL_SET * REPEATS
    assert len(broker.of(RUN_ATTEMPT_TASK)) == FULL_SET * REPEATS


def test_resuming_a_full_set_sends_its_turns_from_a_worker_not_from_the_request(
        lab, full_set, broker, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        submission_id = _submit(lab, full_set, "full").json()["id"]
        prepare_submission_task(submission_id)
    Attempt.objects.filter(submission_id=submission_id).update(status=Attempt.Status.INFRA_FAILED)
    Submission.objects.filter(id=submission_id).update(status=Submission.Status.INCOMPLETE)
    broker.sent.clear()

    with django_capture_on_commit_callbacks(execute=True):
        response = lab.client.post(reverse("api-submission-action", args=[submission_id, "resume"]), **lab.auth())
    assert response.status_code == 200 and response.json()["status"] == "queued"
    assert broker.sent == [(PREPARE_SUBMISSION_TASK, (submission_id,))]

    with django_capture_on_commit_callbacks(execute=True):
        prepare_submission_task(submission_id)
    assert len(broker.of(RUN_ATTEMPT_TASK)) == FULL_SET * REPEATS


def test_a_submission_whose_preparation_was_lost_is_prepared_by_the_watchdog(
        lab, full_set, broker, monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr(watchdog, "broker_lost_messages", lambda: False)
    response = _submit(lab, full_set, "mini")  # its message never leaves: the commit hook is not run
    submission = Submission.objects.get(id=response.json()["id"])
    # A submission waiting for its attempts is not finished by anything that looks at it meanwhile.
    assert submission_refresh_status(submission_id=submission.id).status == Submission.Status.QUEUED

    with django_capture_on_commit_callbacks(execute=True):
        watchdog.watchdog_run()
    assert not submission.attempts.exists()  # within the grace a worker still has

    Submission.objects.filter(id=submission.id).update(prepare_requested_at=timezone.now() - timedelta(minutes=5))
    with django_capture_on_commit_callbacks(execute=True):
        assert watchdog.watchdog_run()["prepared"] == 1
    assert submission.attempts.count() == 20 * REPEATS
    assert len(broker.of(RUN_ATTEMPT_TASK)) == 20 * REPEATS
    submission.refresh_from_db()
    assert submission.prepare_requested_at is None


def test_a_free_worker_prepares_a_queued_run_before_taking_its_next_turn(lab, full_set, broker, monkeypatch):
    from submissions import engine

    monkeypatch.setattr(engine, "_attempt_play", lambda attempt: None)  # the claim is the point, not the episode
    response = _submit(lab, full_set, "mini")
    submission = Submission.objects.get(id=response.json()["id"])
    assert not submission.attempts.exists()
    # The preparation's own message waits behind the turns sent before it; the next turn taken does it.
    engine.attempt_run_next(queue="light", worker="w", hint=None)
    assert submission.attempts.count() == 20 * REPEATS
    assert submission.attempts.filter(status=Attempt.Status.RUNNING).count() == 1


def test_the_queue_counts_the_attempts_of_a_run_not_prepared_yet_as_waiting(lab, full_set, broker):
    from submissions.models import LiveWorker, SubmissionResult
    from submissions.progress_selectors import queue_item

    LiveWorker.objects.create(hostname="w@host", queues=["browser", "engine", "light"], concurrency=1)
    earlier = Submission.objects.get(id=_submit(lab, full_set, "mini").json()["id"])
    prepare_submission_task(earlier.id)
    Submission.objects.filter(id=earlier.id).update(status=Submission.Status.COMPLETED)
    SubmissionResult.objects.create(submission=earlier, mean_seconds=2.0, computed_at=timezone.now())
    waiting = Submission.objects.get(id=_submit(lab, full_set, "mini").json()["id"])
    item = queue_item(waiting)
    # 20 scenarios × 3 repeats, 2 s each (the board's recent mean) on one slot.
    assert item is not None and (item.progress.total, item.progress.pending) == (20 * REPEATS, 20 * REPEATS)
    assert item.eta_seconds == pytest.approx(2.0 * 20 * REPEATS)


def test_the_submission_page_shows_every_attempt_of_a_run_not_prepared_yet_as_waiting(lab, full_set, broker):
    submission_id = _submit(lab, full_set, "full").json()["id"]
    page = lab.client.get(reverse("submission-detail", args=[submission_id])).content.decode()
    assert f"0/{FULL_SET * REPEATS}" in page
