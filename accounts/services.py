"""Sign-up, teams, members and API tokens."""
from __future__ import annotations

import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import ApiToken, Membership
from accounts.selectors import quota_status, token_digest, user_role
from submissions.models import Team
from submissions.services import SubmissionError, team_get_or_create


class AccountError(ValueError):
    """A request about teams or tokens that cannot be done, with a message for the user."""


def team_create(*, user: AbstractBaseUser, name: str) -> Team:
    name = name.strip()
    if not name:
        raise AccountError("a team needs a name")
    if Team.objects.filter(name__iexact=name).exists():
        raise AccountError(f"a team called {name!r} exists already; ask its owner to add you")
    with transaction.atomic():
        team = team_get_or_create(name=name)
        Membership.objects.create(team=team, user=user, role=Membership.Role.OWNER)
    return team


def member_add(*, team: Team, actor: AbstractBaseUser, username: str, role: str = Membership.Role.MEMBER) -> Membership:
    if user_role(actor, team.id) != Membership.Role.OWNER:
        raise AccountError("only the team's owner adds members")
    if role not in Membership.Role.values:
        raise AccountError(f"unknown role {role!r}")
    user = get_user_model().objects.filter(username=username.strip()).first()
    if user is None:
        raise AccountError(f"no user called {username!r}; they need to sign up first")
    try:
        with transaction.atomic():
            return Membership.objects.create(team=team, user=user, role=role)
    except IntegrityError:
        raise AccountError(f"{username} is in the team already") from None


def token_create(*, team: Team, user: AbstractBaseUser, name: str, scope: str) -> tuple[ApiToken, str]:
    """A new token and its full text, which is shown once and never stored."""
    if user_role(user, team.id) is None:
        raise AccountError("only members of the team create its tokens")
    if scope not in ApiToken.Scope.values:
        raise AccountError("scope must be read or write")
    secret = secrets.token_urlsafe(32)
    token = ApiToken.objects.create(team=team, created_by=user, name=name.strip()[:80] or "token", scope=scope,
                                    key_id=secrets.token_hex(6), digest=token_digest(secret))
    return token, f"{token.prefix}_{secret}"


def token_revoke(*, token: ApiToken, actor: AbstractBaseUser) -> ApiToken:
    if token.created_by_id != actor.pk and user_role(actor, token.team_id) != Membership.Role.OWNER:
        raise AccountError("only the token's creator or the team's owner revokes it")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def token_touch(*, token: ApiToken) -> None:
    ApiToken.objects.filter(id=token.id).update(last_used_at=timezone.now())




class QuotaExceeded(SubmissionError):
    """The team has no submission left right now; the message says which limit and until when."""


def quota_check(*, team: Team) -> None:
    refusal = quota_status(team).refusal()
    if refusal:
        raise QuotaExceeded(f"quota reached: {refusal}")
