"""The queue's per-queue counts show a visitor only the work they may see: another team's private run
neither shows up in them nor gives its size away; the team's own members see theirs counted."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from accounts.models import Membership, Team
from catalogue.models import Scenario
from submissions.models import Attempt, ModelEntry, Submission

pytestmark = pytest.mark.django_db


def _private_run(waiting: int) -> Submission:
    team = Team.objects.create(name="Quiet lab", slug="quiet-lab")
    submission = Submission.objects.create(team=team, model=ModelEntry.objects.create(team=team, name="Secret"),
                                           environment_id="sokoban", flow="global", subset="mini", suite="fixture",
                                           status=Submission.Status.QUEUED, is_public=False)
    scenarios = list(Scenario.objects.filter(environment_id="sokoban", suite="fixture").order_by("key"))[:waiting]
    Attempt.objects.bulk_create(Attempt(submission=submission, scenario=scenario, repeat=0) for scenario in scenarios)
    return submission


def _waiting_on_light(client: Client) -> int:
    response = client.get(reverse("queue"))
    assert response.status_code == 200
    return {load.queue: load.waiting for load in response.context["loads"]}["light"]


def test_an_outsider_s_queue_counts_leave_out_another_team_s_private_run(fixture_scenarios):
    run = _private_run(waiting=4)
    assert _waiting_on_light(Client()) == 0
    stranger = get_user_model().objects.create_user("eve", password="a long passphrase 7")
    outsider = Client()
    outsider.force_login(stranger)
    assert _waiting_on_light(outsider) == 0
    member = get_user_model().objects.create_user("ada", password="a long passphrase 7")
    Membership.objects.create(team=run.team, user=member, role=Membership.Role.OWNER)
    insider = Client()
    insider.force_login(member)
    assert _waiting_on_light(insider) == 4


def test_published_work_is_counted_for_everyone(fixture_scenarios):
    run = _private_run(waiting=3)
    Submission.objects.filter(id=run.id).update(is_public=True)
    assert _waiting_on_light(Client()) == 3
