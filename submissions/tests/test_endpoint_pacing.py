"""An endpoint's Retry-After is kept for every attempt of the team on it: none asks early."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts.services import team_get_or_create
from evaluators.endpoints import ChatClient, text_part
from evaluators.tests import provider_doubles as doubles
from evaluators.tests.scripted_server import ScriptedServer
from submissions.engine import Paused
from submissions.models import Submission
from submissions.pacing import EndpointPacer, endpoint_hold
from submissions.services import model_entry_upsert, submission_create_endpoint

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": [text_part("# action\nwhere next?")]}]


class RecordingPacer:
    def __init__(self) -> None:
        self.waits = 0
        self.holds: list[float] = []

    def wait(self) -> float:
        self.waits += 1
        return 0.0

    def hold(self, seconds: float) -> None:
        self.holds.append(seconds)


def _create(lab: Any, url: str, name: str, team: Any = None) -> Submission:
    model = model_entry_upsert(team=team or lab.team, name=name)
    return submission_create_endpoint(model=model, env="sokoban", flow="global", subset="mini", suite="fixture",
                                      endpoint_url=url, endpoint_model="m", settings={"repeats": 1})


def test_the_client_asks_the_pacer_before_each_request_and_passes_on_a_retry_after() -> None:
    answers = [(429, doubles.AZURE_RATE, {**doubles.AZURE_HEADERS, "Retry-After": "2"}),
               (200, doubles.chat_completion("# action\nUp"), doubles.JSON)]
    pacer = RecordingPacer()
    slept: list[float] = []
    with ScriptedServer(answers) as server:
        completion = ChatClient(server.url, "m", pacer=pacer, sleep=slept.append, backoff=0.01).complete(
            MESSAGES, temperature=0.1, max_tokens=10)
    assert completion.attempts == 2 and pacer.waits == 2 and pacer.holds == [2.0] and slept == [2.0]


def test_a_retry_after_holds_the_team_s_other_submissions_on_the_endpoint_but_no_one_else_s(lab, fixture_scenarios):
    url = "http://127.0.0.1:9/v1"
    first, second = _create(lab, url, "one"), _create(lab, url, "two")
    elsewhere = _create(lab, "http://127.0.0.1:10/v1", "three")
    other_team = _create(lab, url, "four", team=team_get_or_create(name="Other team"))
    endpoint_hold(submission_id=first.id, seconds=30)
    held = dict(Submission.objects.values_list("id", "calls_resume_at"))
    assert held[first.id] is not None and held[second.id] == held[first.id]
    assert held[elsewhere.id] is None and held[other_team.id] is None
    # A shorter hold never shortens a longer one.
    endpoint_hold(submission_id=second.id, seconds=5)
    assert Submission.objects.get(id=first.id).calls_resume_at == held[first.id]


def test_an_attempt_in_flight_waits_out_the_hold_before_its_next_request_and_stays_alive(lab, fixture_scenarios):
    submission = _create(lab, "http://127.0.0.1:9/v1", "one")
    Submission.objects.filter(id=submission.id).update(calls_resume_at=timezone.now() + timedelta(seconds=5))
    slept: list[float] = []
    beats: list[int] = []
    pacer = EndpointPacer(submission_id=submission.id, keep_alive=lambda: beats.append(1), longest=600,
                          sleep=slept.append)
    waited = pacer.wait()
    assert 4.5 < waited <= 5 and sum(slept) == pytest.approx(waited) and max(slept) <= 2.0 and len(beats) == 3
    Submission.objects.filter(id=submission.id).update(calls_resume_at=timezone.now() - timedelta(seconds=1))
    assert pacer.wait() == 0.0


def test_a_wait_is_bounded_by_the_longest_retry_after_honoured(lab, fixture_scenarios):
    submission = _create(lab, "http://127.0.0.1:9/v1", "one")
    Submission.objects.filter(id=submission.id).update(calls_resume_at=timezone.now() + timedelta(hours=5))
    slept: list[float] = []
    assert EndpointPacer(submission_id=submission.id, keep_alive=lambda: None, longest=60,
                         sleep=slept.append).wait() == pytest.approx(60)


def test_a_waiting_attempt_stops_when_its_submission_is_paused(lab, fixture_scenarios):
    submission = _create(lab, "http://127.0.0.1:9/v1", "one")
    Submission.objects.filter(id=submission.id).update(calls_resume_at=timezone.now() + timedelta(seconds=60))

    def paused() -> None:
        raise Paused()

    with pytest.raises(Paused):
        EndpointPacer(submission_id=submission.id, keep_alive=paused, longest=600, sleep=lambda _: None).wait()
