"""Football submissions end to end: the random baseline over HTTP, run by a real Celery worker on
Redis, with its replay file, board row and IA/RA stored."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from accounts.services import team_get_or_create
from leaderboard.selectors import board_get
from submissions.models import Attempt, Submission
from submissions.selectors import trajectory_dir
from submissions.services import model_entry_upsert, submission_create_endpoint

pytestmark = pytest.mark.integration


@pytest.mark.django_db(transaction=True)
def test_a_celery_worker_plays_a_text_only_football_submission_and_fills_its_board_row(
        fixture_scenarios, baseline_endpoint, celery_worker_process, wait_for):
    server = baseline_endpoint("random", seed=4)
    model = model_entry_upsert(team=team_get_or_create(name="Football lab"), name="random football")
    submission = submission_create_endpoint(
        model=model, env="football", flow="online", subset="mini", suite="fixture", endpoint_url=server.url,
        endpoint_model="random", settings={"repeats": 2, "observation_images": False, "max_loop": 60})
    wait_for(lambda: not Submission.objects.get(id=submission.id).is_active, 300, "the submission to finish")
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPLETED, submission.status_reason
    attempts = list(submission.attempts.all())
    assert len(attempts) == 6 and all(a.status == Attempt.Status.SCORED for a in attempts)
    for attempt in attempts:
        replay = json.loads((Path(trajectory_dir(attempt)) / "football.json").read_text())
        assert attempt.score == pytest.approx(replay["steps"][-1]["cumulative"], abs=1e-4)
        assert attempt.details["renders"] == 0 and attempt.details["seed"] >= 0
        assert attempt.model_calls <= 60
    row = next(r for r in board_get(env="football", flow="online", subset="mini", suite="fixture").rows
               if r.submission_id == submission.id)
    assert row.n_attempts == row.n_scored == 6
    assert row.mean == pytest.approx(sum(a.score for a in attempts) / 6, abs=1e-4)
