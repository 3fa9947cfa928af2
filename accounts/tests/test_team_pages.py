"""The team page lists the team's submissions by who is looking; the account page lists the user's teams."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from accounts.services import member_add, team_create
from catalogue.models import Scenario
from catalogue.services import environment_ensure
from submissions.models import Attempt, ModelEntry, Submission

pytestmark = pytest.mark.django_db


def _user(name: str):
    return get_user_model().objects.create_user(name, password="a long passphrase 7")


@pytest.fixture
def team_with_submissions():
    owner, member = _user("ada"), _user("bob")
    team = team_create(user=owner, name="Hopper Lab")
    member_add(team=team, actor=owner, username="bob")
    scenario = Scenario.objects.create(environment=environment_ensure("sokoban"), suite="handmade",
                                       key="1-Sokoban-small-v0", in_mini=True, in_full=True, content_hash="k")
    made = {}
    for name, public, hidden in (("Published-7B", True, False), ("Secret-7B", False, False),
                                 ("Withdrawn-7B", True, True)):
        model = ModelEntry.objects.create(team=team, name=name)
        made[name] = Submission.objects.create(
            team=team, model=model, environment_id="sokoban", flow="online", subset="mini", suite="handmade",
            status=Submission.Status.COMPLETED, is_public=public, hidden=hidden,
            hidden_reason="copied outputs" if hidden else "")
        Attempt.objects.create(submission=made[name], scenario=scenario, repeat=0, status=Attempt.Status.SCORED,
                               score=42.5)
    return team, owner, member, made


def _page(client: Client, team) -> str:
    response = client.get(reverse("team", args=[team.slug]))
    assert response.status_code == 200
    return response.content.decode()


def test_outsiders_see_only_the_published_submissions_and_no_members_tools(team_with_submissions):
    team, _, _, made = team_with_submissions
    outsider = Client()
    outsider.force_login(_user("eve"))
    for client in (Client(), outsider):
        page = _page(client, team)
        assert "Published-7B" in page
        assert "Secret-7B" not in page and "Withdrawn-7B" not in page
        assert reverse("submission-detail", args=[made["Secret-7B"].id]) not in page
        assert "API tokens" not in page and "Quota" not in page and "you are" not in page


def test_members_see_every_submission_with_its_board_status_date_and_score(team_with_submissions):
    team, _, member, made = team_with_submissions
    client = Client()
    client.force_login(member)
    page = _page(client, team)
    for name in ("Published-7B", "Secret-7B", "Withdrawn-7B"):
        assert name in page and reverse("submission-detail", args=[made[name].id]) in page
    assert "Sokoban · Online · mini" in page and "completed" in page and "42.50" in page
    assert made["Secret-7B"].created_at.strftime("%Y-%m-%d") in page
    assert "private" in page and "hidden" in page and "you are member" in page


def test_an_unknown_team_is_not_found(client):
    assert client.get(reverse("team", args=["nobody"])).status_code == 404


def test_the_account_page_lists_each_team_with_the_role_and_links(team_with_submissions):
    team, owner, member, _ = team_with_submissions
    team_create(user=member, name="Side Project")
    client = Client()
    client.force_login(member)
    page = client.get(reverse("account")).content.decode()
    rows = page[page.index("<tbody>"):page.index("</tbody>")]
    assert rows.index("Hopper Lab") < rows.index("Side Project")
    hopper = rows[rows.index("Hopper Lab"):rows.index("Side Project")]
    assert "Member" in hopper and f'href="{reverse("team", args=[team.slug])}"' in hopper
    assert reverse("submit") in hopper and reverse("upload") in hopper
    side = rows[rows.index("Side Project"):]
    assert "Owner" in side and f'href="{reverse("team", args=["side-project"])}"' in side
    # Members and submissions are counted per team: two members and three submissions in Hopper Lab.
    assert '<td class="num">2</td><td class="num">3</td>' in hopper
