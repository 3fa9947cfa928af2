"""Workers run several attempts at once: sized from their cores and memory, within each endpoint's
limit (the platform's, or the team's lower one), playing the same episodes as one at a time, and
losing none when killed with several in flight."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone
from PIL import Image

from accounts.services import team_get_or_create
from evaluators.baselines.agents import Message, last_image, make_agent
from evaluators.baselines.server import Latency, start_server
from submissions.engine import _endpoint_room
from submissions.models import Attempt, Submission
from submissions.selectors import endpoint_limit
from submissions.services import SubmissionError, model_entry_upsert, submission_create_endpoint
from submissions.tests.test_fault_tolerance import FAST_WATCHDOG, _assert_each_attempt_ended_once, _finished
from submissions.worker_sizing import worker_sizing


def test_a_worker_runs_several_attempts_per_core_within_its_memory_budget(db):
    engine = worker_sizing(["engine"], cores=2, memory_budget_mb=24_000)
    assert (engine.concurrency, engine.attempt_memory_mb, engine.attempts_per_core) == (8, 1000, 4)
    assert worker_sizing(["light"], cores=2, memory_budget_mb=24_000).concurrency == 16
    # A worker reading every queue takes the fewest per core and the most memory of its environments.
    every = worker_sizing(["light", "browser", "engine"], cores=2, memory_budget_mb=24_000)
    assert (every.concurrency, every.attempt_memory_mb) == (4, 1500)
    assert worker_sizing(["engine"], cores=2, memory_budget_mb=2_500).concurrency == 2  # 2,500 MiB hold two
    assert worker_sizing(["engine"], cores=2, memory_budget_mb=500).concurrency == 1  # never none
    assert worker_sizing(["engine"], cores=2, memory_budget_mb=24_000, in_flight=3).concurrency == 3
    assert engine.max_memory_per_child_kb == 1500 * 1024


def test_run_worker_starts_celery_with_its_sizing(db):
    out, err = StringIO(), StringIO()
    call_command("run_worker", "-Q", "engine", "--concurrency", "5", "--dry-run", stdout=out, stderr=err)
    assert "-Q engine" in out.getvalue() and "--concurrency=5" in out.getvalue()
    assert "--max-memory-per-child=1536000" in out.getvalue() and "5 attempts at once on engine" in err.getvalue()
    with pytest.raises(Exception, match="unknown queue"):
        call_command("run_worker", "-Q", "nowhere", "--dry-run", stdout=StringIO(), stderr=StringIO())


def _submission(url: str, *, limit: int | None = None, name: str = "Lab model", only: int | None = None) -> Submission:
    model = model_entry_upsert(team=team_get_or_create(name="Lab"), name=name)
    with transaction.atomic():  # the messages go out on commit, when only the kept attempts exist
        submission = submission_create_endpoint(
            model=model, env="sokoban", flow="online", subset="mini", suite="fixture", endpoint_url=url,
            settings={"repeats": 1, "resolution": 256}, endpoint_concurrency=limit)
        if only is not None:
            keep = list(submission.attempts.order_by("id").values_list("id", flat=True)[:only])
            submission.attempts.exclude(id__in=keep).delete()
    return submission


def test_a_teams_own_limit_caps_the_attempts_calling_its_endpoint(fixture_scenarios, settings):
    settings.MAGEBENCH_ENDPOINT_CONCURRENCY = 8
    url = "http://127.0.0.1:9/v1/chat/completions"
    submission = _submission(url, limit=2)
    assert endpoint_limit([(2, Submission.Status.QUEUED), (None, Submission.Status.QUEUED)]) == 2
    assert endpoint_limit([(2, Submission.Status.COMPLETED)]) == 8  # a finished submission's limit is gone
    running = list(submission.attempts.order_by("id")[:2])
    assert _endpoint_room(url, team_id=submission.team_id)
    Attempt.objects.filter(id__in=[a.id for a in running]).update(status=Attempt.Status.RUNNING,
                                                                   heartbeat_at=timezone.now())
    assert not _endpoint_room(url, team_id=submission.team_id)  # two running: the team's limit
    Submission.objects.filter(id=submission.id).update(endpoint_concurrency=None)
    assert _endpoint_room(url, team_id=submission.team_id)  # the platform's 8
    with pytest.raises(SubmissionError, match="between 1 and 8"):
        _submission(url, limit=9, name="Too many")


def _frames(attempt: Attempt) -> list[tuple[int, float | None, str]]:
    """Each step of the attempt's trajectory: its number, reward and frame's content hash."""
    folder = Path(django_settings.MEDIA_ROOT) / attempt.trajectory_path
    trajectory = json.loads((folder / "trajectory.json").read_text())
    return [(step["index"], step["reward"], _pixels(folder / step["frame"])) for step in trajectory["steps"]]


def _pixels(path: Path) -> str:
    with Image.open(path) as image:
        return f"{image.size}:{hashlib.sha256(image.convert('RGB').tobytes()).hexdigest()}"


class BoardHashAgent:
    """Moves by the frame it is shown, and by nothing else: the same board always gets the same move,
    so two plays of a level get the same replies whatever else their worker has played."""

    name = "board-hash"

    def reply(self, messages: Sequence[Message]) -> str:
        image = last_image(messages)
        digest = hashlib.sha256(image.convert("RGB").tobytes()).digest() if image is not None else b"\0"
        return "# analyze\nthe board decides\n# action\n" + ("Up", "Down", "Left", "Right")[digest[0] % 4]


@pytest.mark.integration
def test_attempts_played_together_are_the_episodes_played_one_at_a_time(fixture_scenarios, celery_workers,
                                                                         wait_for):
    with start_server(BoardHashAgent(), latency=Latency(0.1, spread=0.5, seed=3)) as server:
        # Workers first: starting the first one empties the broker of earlier runs' messages.
        worker = celery_workers("alone", concurrency=1)
        alone = _submission(server.url, name="One at a time", only=4)
        wait_for(lambda: _finished(alone), 300, "the attempts played one at a time")
        worker.stop()
        celery_workers("together", concurrency=6)
        together = _submission(server.url, name="Together", only=4)
        wait_for(lambda: _finished(together), 300, "the attempts played together")
    first = {a.scenario_id: a for a in alone.attempts.all()}
    second = {a.scenario_id: a for a in together.attempts.all()}
    assert {a.status for a in [*first.values(), *second.values()]} == {Attempt.Status.SCORED}, \
        [(a.status, a.error_message, a.trajectory_path) for a in second.values()]
    assert set(first) == set(second) and len(first) == 4
    for scenario_id, attempt in first.items():
        other = second[scenario_id]
        assert (attempt.status, attempt.score, attempt.steps) == (other.status, other.score, other.steps)
        assert _frames(attempt) == _frames(other) and len(_frames(attempt)) == attempt.steps > 0
    assert server.most_serving > 1  # the second worker really had several attempts calling at once


@pytest.mark.integration
def test_a_worker_killed_with_several_attempts_in_flight_loses_none(fixture_scenarios, celery_workers, wait_for):
    with start_server(make_agent("oracle"), latency=Latency(0.4, spread=0.0)) as server:
        doomed = celery_workers("doomed", concurrency=4, env=FAST_WATCHDOG)
        # The five smallest boards: enough for three in flight, and the rescue ends in seconds.
        submission = _submission(server.url, only=5)
        wait_for(lambda: Attempt.objects.filter(submission=submission, worker=doomed.name, model_calls__gte=1,
                                                status=Attempt.Status.RUNNING).count() >= 3, 120,
                 "the worker to be into three episodes at once")
        doomed.kill()
        celery_workers("rescuer", concurrency=4, beat=True, env=FAST_WATCHDOG)
        wait_for(lambda: _finished(submission), 300, "the other worker to finish every attempt")
        attempts = _assert_each_attempt_ended_once(submission, server)
    assert len(attempts) == 5 and sum(a.tries > 1 for a in attempts) >= 3
