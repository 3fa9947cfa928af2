"""A team's calls-at-once setting limits that team's calls only; a ceiling per URL across teams is the
operators' (MAGEBENCH_ENDPOINT_URL_MAX_CALLS); the time left follows the same rule."""
from __future__ import annotations

import pytest
from django.utils import timezone

from accounts.models import Team
from catalogue.models import Scenario
from submissions.engine import attempt_claim_next
from submissions.models import Attempt, LiveWorker, ModelEntry, Submission, SubmissionResult
from submissions.progress_selectors import queue_list

pytestmark = pytest.mark.django_db

SHARED_URL = "https://api.provider.example/v1"


def _submission(team: str, attempts: int, *, calls_at_once: int | None = None, url: str = SHARED_URL) -> Submission:
    owner, _ = Team.objects.get_or_create(name=team, defaults={"slug": team.lower().replace(" ", "-")})
    model = ModelEntry.objects.create(team=owner, name=f"{team} model")
    submission = Submission.objects.create(team=owner, model=model, environment_id="sokoban", flow="global",
                                           subset="mini", suite="fixture", endpoint_url=url, is_public=True,
                                           endpoint_concurrency=calls_at_once)
    scenario = Scenario.objects.filter(environment_id="sokoban", suite="fixture").order_by("key").first()
    Attempt.objects.bulk_create(Attempt(submission=submission, scenario=scenario, repeat=r) for r in range(attempts))
    return submission


def _claim_all() -> bool:
    """Claim attempts until none may start; whether the last look found an endpoint full."""
    while True:
        claim = attempt_claim_next(queues=["light"], worker="w")
        if claim.attempt is None:
            return claim.endpoint_busy


def _running(submission: Submission) -> int:
    return submission.attempts.filter(status=Attempt.Status.RUNNING).count()


def test_a_teams_one_call_at_once_on_a_url_does_not_hold_back_another_teams_calls_to_it(fixture_scenarios,
                                                                                         settings):
    settings.MAGEBENCH_ENDPOINT_CONCURRENCY = 8
    settings.MAGEBENCH_ENDPOINT_URL_MAX_CALLS = 0
    careful = _submission("Careful lab", 4, calls_at_once=1)
    other = _submission("Other lab", 5, calls_at_once=3)
    default = _submission("Default lab", 5)
    assert _claim_all()
    assert (_running(careful), _running(other), _running(default)) == (1, 3, 5)


def test_the_operators_ceiling_on_a_url_caps_every_teams_calls_to_it_together(fixture_scenarios, settings):
    settings.MAGEBENCH_ENDPOINT_CONCURRENCY = 8
    settings.MAGEBENCH_ENDPOINT_URL_MAX_CALLS = 3
    first, second = _submission("Lab A", 4), _submission("Lab B", 4)
    elsewhere = _submission("Lab C", 4, url="https://other.example/v1")
    assert _claim_all()
    assert _running(first) + _running(second) == 3
    assert _running(elsewhere) == 3  # a ceiling per URL: another URL has its own


def test_the_time_left_follows_each_teams_own_limit_on_a_shared_url(fixture_scenarios, settings):
    settings.MAGEBENCH_ENDPOINT_CONCURRENCY = 8
    settings.MAGEBENCH_ENDPOINT_URL_MAX_CALLS = 0
    LiveWorker.objects.create(hostname="w@host", queues=["browser", "engine", "light"], concurrency=4)
    careful = _submission("Careful lab", 4, calls_at_once=1)
    other = _submission("Other lab", 4)
    done = _submission("Earlier lab", 1)
    Submission.objects.filter(id=done.id).update(status=Submission.Status.COMPLETED)
    SubmissionResult.objects.create(submission=done, mean_seconds=10.0, computed_at=timezone.now())
    items = {item.submission.id: item for item in queue_list() if item.position is not None}
    # Four slots, 10 s an attempt. The careful team's attempts run one at a time (0-40 s); the other
    # team's take the three other slots at once, then its last one: done at 20 s. Were the careful
    # team's one call at once the URL's, the two would take turns on one slot: done at 80 s and 70 s.
    assert items[other.id].eta_seconds == pytest.approx(20.0)
    assert items[careful.id].eta_seconds == pytest.approx(40.0)
