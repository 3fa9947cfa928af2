"""A submission's answer, and `magebench status` printed from it, read every count at one moment:
the counts add up to the total and agree with the attempts listed, even while a worker writes."""
from __future__ import annotations

import re
import threading
from typing import Any

import pytest
from django.db import connection
from django.utils.dateparse import parse_datetime

from accounts.services import team_get_or_create
from catalogue.models import Scenario
from magebench_client import commands
from magebench_client.output import status_lines
from submissions import apis
from submissions.models import Attempt, ModelEntry, Submission

S = Attempt.Status
#: One attempt per state, and the rest waiting.
STATES = [S.SCORED, S.SCORED, S.RUNNING, S.RETRYING, S.INFRA_FAILED, S.CANCELLED]


def _running_submission() -> Submission:
    team = team_get_or_create(name="Lab")
    submission = Submission.objects.create(team=team, model=ModelEntry.objects.create(team=team, name="Counted"),
                                           environment_id="sokoban", flow="global", subset="mini", suite="fixture",
                                           status=Submission.Status.RUNNING, is_public=True)
    scenarios = list(Scenario.objects.filter(environment_id="sokoban", suite="fixture").order_by("key"))
    states = STATES + [S.PENDING] * (len(scenarios) - len(STATES))
    Attempt.objects.bulk_create(Attempt(submission=submission, scenario=scenario, repeat=0, status=state,
                                        score=50.0 if state == S.SCORED else None)
                                for scenario, state in zip(scenarios, states, strict=True))
    return submission


class _Site:
    """The client's API as the Django test client answers it, counting the requests."""

    def __init__(self, client: Any) -> None:
        self.client, self.requests = client, 0

    def get(self, path: str, params: dict[str, str] | None = None) -> Any:
        self.requests += 1
        response = self.client.get(path, params or {})
        assert response.status_code == 200, response.content
        return response.json()


def _printed_counts(line: str) -> dict[str, int]:
    return {name: int(n) for name, n in re.findall(r"(scored|running|retrying|failed|waiting|cancelled) (\d+)", line)}


@pytest.mark.django_db
def test_status_prints_counts_that_add_up_to_the_total_from_one_response(client, fixture_scenarios, capsys):
    submission = _running_submission()
    site = _Site(client)
    assert commands.cmd_status(site, type("Args", (), {"id": submission.id})()) == 0  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert site.requests == 1
    progress = next(line for line in out.splitlines() if "/" in line and "scored" in line)
    counts = _printed_counts(progress)
    total = int(re.search(r"\] \d+/(\d+)", progress).group(1))
    assert total == submission.attempts.count() == sum(counts.values())
    assert counts == {"scored": 2, "running": 1, "retrying": 1, "failed": 1, "waiting": total - 6, "cancelled": 1}
    assert re.search(r"^as of \d{4}-\d\d-\d\d \d\d:\d\d UTC", out, re.M), out


@pytest.mark.django_db(transaction=True)
def test_the_answer_reads_one_snapshot_while_a_worker_scores_an_attempt_in_between(client, fixture_scenarios,
                                                                                   monkeypatch):
    submission = _running_submission()
    pending = submission.attempts.filter(status=S.PENDING).order_by("id").first()
    assert pending is not None
    counts = apis.submission_reply_counts

    def a_worker_scores_one_meanwhile(of: Submission) -> dict[str, Any]:
        # Between the progress counts and the attempts list, another connection commits a score.
        def score() -> None:
            Attempt.objects.filter(id=pending.id).update(status=S.SCORED, score=75.0)
            connection.close()

        writer = threading.Thread(target=score)
        writer.start()
        writer.join()
        return counts(of)

    monkeypatch.setattr(apis, "submission_reply_counts", a_worker_scores_one_meanwhile)
    data = client.get(f"/api/v1/submissions/{submission.id}/").json()
    assert Attempt.objects.get(id=pending.id).status == S.SCORED  # the write happened, during the read
    listed = [a["status"] for a in data["attempts"]]
    progress = data["progress"]
    assert listed.count(S.SCORED) == progress["scored"] == 2
    assert listed.count(S.PENDING) == progress["pending"]
    assert sum(progress[k] for k in ("scored", "running", "retrying", "pending", "infra_failed", "cancelled")) == \
        progress["total"] == len(listed)
    assert parse_datetime(data["as_of"]) is not None
    lines = status_lines(data)
    assert "mean score 50.00 over 2 scored attempt(s)" in lines
