"""A team's page: its submissions beside its members, quota and API tokens."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from accounts.forms import MemberForm, TokenForm
from accounts.models import Team
from accounts.selectors import user_role
from submissions.quotas import quota_status
from submissions.selectors import team_submissions


def team(request: HttpRequest, slug: str) -> HttpResponse:
    """A team's page: to anyone, its published submissions; to its members, also the private and
    hidden ones, its members, quota and API tokens."""
    team = get_object_or_404(Team, slug=slug)
    role = user_role(request.user, team.id)
    submissions = team_submissions(team, member=role is not None)
    if role is None:
        return render(request, "accounts/team.html", {"team": team, "role": None, "submissions": submissions})
    new_token = request.session.pop("new_token", None)
    return render(request, "accounts/team.html", {
        "team": team, "role": role, "members": team.memberships.select_related("user"), "submissions": submissions,
        "tokens": team.api_tokens.select_related("created_by"), "quota": quota_status(team),
        "member_form": MemberForm(), "token_form": TokenForm(), "new_token": new_token,
    })
