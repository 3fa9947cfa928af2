"""Sign-up, teams, tokens and who may see or do what with a submission."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import ApiToken, Membership
from accounts.selectors import token_authenticate
from accounts.services import AccountError, member_add, team_create, token_create, token_revoke
from catalogue.models import Scenario
from submissions.models import Attempt, ModelEntry, Submission
from submissions.quotas import quota_status

pytestmark = pytest.mark.django_db


def _user(name: str):
    return get_user_model().objects.create_user(name, password="a long passphrase 7")


def test_a_visitor_signs_up_creates_a_team_and_a_token_shown_once(client):
    response = client.post(reverse("signup"), {"username": "grace", "password1": "a long passphrase 7",
                                               "password2": "a long passphrase 7"})
    assert response.status_code == 302
    response = client.post(reverse("account"), {"name": "Hopper Lab"})
    assert response.status_code == 302 and response["Location"] == reverse("team", args=["hopper-lab"])
    assert Membership.objects.get(team__slug="hopper-lab").role == "owner"
    client.post(reverse("team-action", args=["hopper-lab", "create-token"]), {"name": "ci", "scope": "write"})
    first = client.get(reverse("team", args=["hopper-lab"])).content.decode()
    token = ApiToken.objects.get()
    shown = first.split('<pre id="new-token">')[1].split("</pre>")[0]
    assert shown.startswith(f"mbw_{token.key_id}_") and token_authenticate(shown) == token
    assert shown not in client.get(reverse("team", args=["hopper-lab"])).content.decode()  # shown once


def test_tokens_are_stored_as_digests_and_name_their_scope():
    owner = _user("ada")
    team = team_create(user=owner, name="Lab")
    token, text = token_create(team=team, user=owner, name="reader", scope="read")
    secret = text.split("_", 2)[2]
    assert text.startswith("mbr_") and len(secret) >= 40
    stored = ApiToken.objects.filter(id=token.id).values_list("key_id", "digest", "name").get()
    assert all(secret not in str(value) for value in stored)
    assert token_authenticate(text) == token
    assert token_authenticate(text[:-1] + ("A" if text[-1] != "A" else "B")) is None
    assert token_authenticate(text.replace("mbr_", "mbw_", 1)) is None  # the scope is part of the name


def test_a_revoked_token_or_one_whose_creator_left_stops_working():
    owner, member = _user("ada"), _user("bob")
    team = team_create(user=owner, name="Lab")
    member_add(team=team, actor=owner, username="bob")
    own, own_text = token_create(team=team, user=owner, name="a", scope="write")
    _, bob_text = token_create(team=team, user=member, name="b", scope="write")
    with pytest.raises(AccountError):
        token_revoke(token=own, actor=member)  # neither its creator nor the owner
    token_revoke(token=own, actor=owner)
    assert token_authenticate(own_text) is None
    assert token_authenticate(bob_text) is not None
    Membership.objects.filter(user=member).delete()
    assert token_authenticate(bob_text) is None


def test_only_the_owner_adds_members():
    owner, member, other = _user("ada"), _user("bob"), _user("eve")
    team = team_create(user=owner, name="Lab")
    member_add(team=team, actor=owner, username="bob")
    with pytest.raises(AccountError, match="owner"):
        member_add(team=team, actor=member, username="eve")
    with pytest.raises(AccountError, match="no user"):
        member_add(team=team, actor=owner, username="nobody")
    assert not Membership.objects.filter(user=other).exists()


# --- the permission matrix ----------------------------------------------------------------------

ROLES = ("owner", "member", "outsider", "anonymous")


@pytest.fixture
def world(fixture_scenarios):
    owner, member, outsider = _user("owner"), _user("member"), _user("outsider")
    team = team_create(user=owner, name="Lab")
    member_add(team=team, actor=owner, username="member")
    team_create(user=outsider, name="Elsewhere")
    scenario = Scenario.objects.filter(environment_id="sokoban", suite="fixture").first()
    model = ModelEntry.objects.create(team=team, name="M")
    subs = {}
    for visibility in ("private", "public"):
        sub = Submission.objects.create(team=team, model=model, environment_id="sokoban", flow="global",
                                        subset="mini", suite="fixture", status=Submission.Status.RUNNING,
                                        is_public=visibility == "public")
        attempt = Attempt.objects.create(submission=sub, scenario=scenario, repeat=0)
        subs[visibility] = (sub, attempt)
    clients = {"anonymous": Client()}
    tokens: dict[str, str | None] = {"anonymous": None}
    for role, user in (("owner", owner), ("member", member), ("outsider", outsider)):
        clients[role] = Client()
        clients[role].force_login(user)
        user_team = team if role != "outsider" else user.memberships.get().team
        tokens[role] = token_create(team=user_team, user=user, name="t", scope="write")[1]
    return subs, clients, tokens


def _api(token: str | None) -> dict[str, Any]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}


@pytest.mark.parametrize("visibility", ["private", "public"])
@pytest.mark.parametrize("role", ROLES)
def test_the_permission_matrix_holds_on_every_endpoint(world, role, visibility):
    subs, clients, tokens = world
    submission, attempt = subs[visibility]
    sees = visibility == "public" or role in ("owner", "member")
    manages = role in ("owner", "member")
    web, api, token = clients[role], Client(), tokens[role]

    reads = [web.get(reverse("submission-detail", args=[submission.id])),
             web.get(reverse("attempt-replay", args=[attempt.id])),
             api.get(reverse("api-submission-detail", args=[submission.id]), **_api(token))]
    assert [r.status_code for r in reads] == [200 if sees else 404] * 3, role
    trajectory = api.get(reverse("api-attempt-trajectory", args=[attempt.id]), **_api(token))
    assert trajectory.status_code == 404  # nothing stored yet, and for outsiders nothing to see either
    listed = {s["id"] for s in api.get(reverse("api-submission-create"), **_api(token)).json()}
    assert (submission.id in listed) == sees

    cancel = api.post(reverse("api-submission-action", args=[submission.id, "cancel"]), **_api(token))
    expected = 200 if manages else (404 if not sees else (401 if role == "anonymous" else 403))
    assert cancel.status_code in ((expected,) if expected != 401 else (401, 403)), (role, cancel.content)
    submission.refresh_from_db()
    assert (submission.status == Submission.Status.CANCELLED) == manages

    # The page's first press only asks; publishing takes the confirmation.
    asked = web.post(reverse("submission-action", args=[submission.id, "publish"]))
    if role == "owner":
        assert asked.status_code == 200 and "Yes, publish it" in asked.content.decode()
        assert Submission.objects.get(id=submission.id).is_public == (visibility == "public")
    else:
        assert asked.status_code == publish_refusal(role, sees)
    publish = web.post(reverse("submission-action", args=[submission.id, "publish"]), {"confirm": "yes"})
    if role == "owner":
        assert publish.status_code == 302 and Submission.objects.get(id=submission.id).is_public
    else:
        assert publish.status_code == publish_refusal(role, sees)
        assert Submission.objects.get(id=submission.id).is_public == (visibility == "public")


def publish_refusal(role: str, sees: bool) -> int:
    """Only the team's owner publishes: a member is refused, and an outsider who cannot see it finds nothing."""
    return 403 if role == "member" or sees else 404


def test_a_read_only_token_reads_private_submissions_but_cannot_write(world):
    subs, _, _ = world
    submission, _ = subs["private"]
    owner = get_user_model().objects.get(username="owner")
    _, read = token_create(team=submission.team, user=owner, name="r", scope="read")
    api = Client()
    assert api.get(reverse("api-submission-detail", args=[submission.id]), **_api(read)).status_code == 200
    assert api.post(reverse("api-submission-action", args=[submission.id, "cancel"]), **_api(read)).status_code == 403
    response = api.post(reverse("api-submission-create"), {"model_name": "X", "env": "sokoban", "flow": "global",
                        "subset": "mini", "endpoint_url": "http://127.0.0.1:9/v1"},
                        content_type="application/json", **_api(read))
    assert response.status_code == 403 and "read-only" in response.json()["message"]


def test_a_token_acts_for_its_own_team_only(world):
    subs, _, _ = world
    submission, _ = subs["private"]
    outsider = get_user_model().objects.get(username="outsider")
    # The outsider joins Lab as a member, but a token made for their own team still cannot touch Lab.
    Membership.objects.create(team=submission.team, user=outsider, role="member")
    other_token = token_create(team=outsider.memberships.exclude(team=submission.team).get().team, user=outsider,
                               name="x", scope="write")[1]
    assert Client().get(reverse("api-submission-detail", args=[submission.id]),
                        **_api(other_token)).status_code == 404


def test_an_unknown_token_is_refused_with_a_clear_message(client):
    response = client.get(reverse("api-me"), HTTP_AUTHORIZATION="Bearer mbw_nothing_here")
    assert response.status_code in (401, 403) and "unknown or revoked" in response.json()["message"]


# --- quotas -------------------------------------------------------------------------------------

def _finished(team, model, scored: bool, hours_ago: float = 1.0) -> Submission:
    scenario = Scenario.objects.filter(environment_id="sokoban", suite="fixture").first()
    sub = Submission.objects.create(team=team, model=model, environment_id="sokoban", flow="global", subset="mini",
                                    suite="fixture", status=Submission.Status.COMPLETED if scored
                                    else Submission.Status.INCOMPLETE)
    Submission.objects.filter(id=sub.id).update(created_at=timezone.now() - timedelta(hours=hours_ago))
    Attempt.objects.create(submission=sub, scenario=scenario, repeat=0,
                           status=Attempt.Status.SCORED if scored else Attempt.Status.INFRA_FAILED,
                           score=50.0 if scored else None)
    return sub


def test_the_quota_counts_the_last_24_hours_and_not_infrastructure_failures(lab, fixture_scenarios, settings):
    settings.MAGEBENCH_QUOTA_PER_DAY = 2
    model = ModelEntry.objects.create(team=lab.team, name="M")
    _finished(lab.team, model, scored=True, hours_ago=30)   # outside the window, counts in the total
    first = _finished(lab.team, model, scored=True, hours_ago=5)
    _finished(lab.team, model, scored=False, hours_ago=2)   # every attempt failed for the platform: free
    status = quota_status(lab.team)
    assert (status.per_day_used, status.per_day_left, status.total_used) == (1, 1, 2)
    first.refresh_from_db()
    assert status.per_day_resets_at == first.created_at + timedelta(days=1)
    _finished(lab.team, model, scored=True, hours_ago=1)
    response = lab.client.post(reverse("api-submission-create"), {
        "model_name": "M", "env": "sokoban", "flow": "global", "subset": "mini", "suite": "fixture",
        "endpoint_url": "http://127.0.0.1:9/v1"}, content_type="application/json", **lab.auth())
    assert response.status_code == 429 and "24 hours" in response.json()["message"]
    assert "next frees up" in response.json()["message"]
    me = lab.client.get(reverse("api-me"), **lab.auth()).json()
    assert me["teams"][0]["quota"]["per_day_left"] == 0 and me["token_scope"] == "write"


def test_the_concurrent_quota_counts_waiting_and_running_submissions(lab, fixture_scenarios, settings):
    settings.MAGEBENCH_QUOTA_CONCURRENT = 1
    model = ModelEntry.objects.create(team=lab.team, name="M")
    Submission.objects.create(team=lab.team, model=model, environment_id="sokoban", flow="global", subset="mini",
                              suite="fixture", status=Submission.Status.QUEUED)
    assert "waiting or running" in quota_status(lab.team).refusal()


def test_a_hidden_submission_leaves_the_boards_and_its_page_gives_the_reason(world, client):
    from django.core.exceptions import ValidationError

    from leaderboard.selectors import board_get
    from submissions.services import submission_result_rebuild

    subs, _, _ = world
    submission, _ = subs["public"]
    Submission.objects.filter(id=submission.id).update(status=Submission.Status.COMPLETED)
    submission_result_rebuild(submission_id=submission.id)
    assert [r.submission_id for r in board_get(env="sokoban", flow="global", subset="mini", suite="fixture").rows] == [
        submission.id]
    submission.refresh_from_db()
    submission.hidden = True
    with pytest.raises(ValidationError):
        submission.full_clean(exclude=["settings"])  # hiding needs a reason
    submission.hidden_reason = "scores could not be reproduced"
    submission.full_clean(exclude=["settings"])
    submission.save()
    assert board_get(env="sokoban", flow="global", subset="mini", suite="fixture").rows == []
    page = client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    assert "Hidden from the boards by the maintainers: scores could not be reproduced" in page


def test_models_are_registered_with_a_write_token_and_listed_to_their_team_until_a_submission_is_public(lab):
    response = Client().post(reverse("api-models"), {"name": "Vision-7B", "parameter_count": 7_000_000_000,
                                                     "open_weights": True}, content_type="application/json",
                             **lab.auth())
    assert response.status_code == 201 and response.json()["team"] == "Lab"
    assert [m["name"] for m in Client().get(reverse("api-models"), **lab.auth("read")).json()] == ["Vision-7B"]
    assert Client().get(reverse("api-models")).json() == []  # nothing public uses it yet
    assert Client().post(reverse("api-models"), {"name": "X"}, content_type="application/json",
                         **lab.auth("read")).status_code == 403
