"""Who may see and do what, and how much of its quota a team has left."""
from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as AuthUser
from django.core.cache import cache
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from accounts.models import ApiToken, Membership
from submissions.models import Attempt, Submission, Team

User = AuthUser | AnonymousUser


def token_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_authenticate(raw: str) -> ApiToken | None:
    """The active token ``raw`` stands for, or None. ``raw`` is ``mb<r|w>_<key_id>_<secret>``."""
    parts = raw.strip().split("_", 2)
    if len(parts) != 3 or parts[0] not in ("mbr", "mbw"):
        return None
    token = (ApiToken.objects.select_related("team", "created_by")
             .filter(key_id=parts[1], revoked_at__isnull=True).first())
    if token is None or token.prefix != f"{parts[0]}_{parts[1]}":
        return None
    if not hmac.compare_digest(token.digest, token_digest(parts[2])):
        return None
    # A token acts for its creator inside the team: it stops working when they leave the team.
    if not Membership.objects.filter(team_id=token.team_id, user_id=token.created_by_id).exists():
        return None
    return token


def user_role(user: User, team_id: int) -> str | None:
    """"owner", "member" or None for ``user`` in the team."""
    if isinstance(user, AnonymousUser) or not getattr(user, "is_authenticated", False):
        return None
    return Membership.objects.filter(user=user, team_id=team_id).values_list("role", flat=True).first()


def user_teams(user: User) -> list[Team]:
    if isinstance(user, AnonymousUser) or not getattr(user, "is_authenticated", False):
        return []
    return list(Team.objects.filter(memberships__user=user).order_by("name"))


@dataclass(frozen=True)
class Access:
    """What one request may see and do: a logged-in member acts for all their teams; an API token
    acts for its own team only, and writes only when its scope is read-write."""

    team_ids: frozenset[int] = frozenset()
    owner_team_ids: frozenset[int] = frozenset()
    can_write: bool = False
    is_staff: bool = False
    token: ApiToken | None = None


ANONYMOUS = Access()


def request_access(request: Any) -> Access:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return ANONYMOUS
    token = getattr(request, "auth", None)
    roles = dict(Membership.objects.filter(user=user).values_list("team_id", "role"))
    if isinstance(token, ApiToken):
        roles = {team_id: role for team_id, role in roles.items() if team_id == token.team_id}
        return Access(team_ids=frozenset(roles), owner_team_ids=frozenset(t for t, r in roles.items() if r == "owner"),
                      can_write=token.scope == ApiToken.Scope.WRITE, token=token)
    return Access(team_ids=frozenset(roles), owner_team_ids=frozenset(t for t, r in roles.items() if r == "owner"),
                  can_write=True, is_staff=user.is_staff)


def can_view_submission(access: Access, submission: Submission) -> bool:
    """Public (or baseline) submissions are for everyone; a private one for its team and staff."""
    return submission.is_public or submission.is_baseline or access.is_staff or submission.team_id in access.team_ids


def can_manage_submission(access: Access, submission: Submission) -> bool:
    """Cancel, resume and re-run: any member of the team with write access (and staff)."""
    return access.is_staff or (access.can_write and submission.team_id in access.team_ids)


def can_publish_submission(access: Access, submission: Submission) -> bool:
    return access.is_staff or (access.can_write and submission.team_id in access.owner_team_ids)


@dataclass(frozen=True)
class QuotaStatus:
    per_day_limit: int
    per_day_used: int
    #: When the oldest submission of the last 24 hours leaves the window (None: nothing counted).
    per_day_resets_at: datetime | None
    total_limit: int
    total_used: int
    concurrent_limit: int
    concurrent_used: int

    @property
    def per_day_left(self) -> int:
        return max(0, self.per_day_limit - self.per_day_used)

    @property
    def total_left(self) -> int:
        return max(0, self.total_limit - self.total_used)

    @property
    def concurrent_left(self) -> int:
        return max(0, self.concurrent_limit - self.concurrent_used)

    def refusal(self) -> str:
        """Why a new submission is refused now, or "" if it is allowed."""
        if self.total_left == 0:
            return f"the team has used its {self.total_limit} submissions in total"
        if self.per_day_left == 0:
            when = (timezone.localtime(self.per_day_resets_at).strftime("%Y-%m-%d %H:%M %Z")
                    if self.per_day_resets_at else "later")
            return (f"the team has used its {self.per_day_limit} submissions of the last 24 hours; "
                    f"the next frees up at {when}")
        if self.concurrent_left == 0:
            return (f"the team already has {self.concurrent_limit} submissions waiting or running; "
                    "wait for one to finish")
        return ""


def counted_submissions(team: Team) -> QuerySet[Submission]:
    """The team's submissions that count against its quota.

    A submission that finished with no scored attempt (every attempt failed for infrastructure
    reasons, or it was cancelled before any was scored) does not count: only the platform's or the
    endpoint's failure, or a withdrawal, left it empty. Baselines are the platform's own runs.
    """
    scored = Attempt.objects.filter(submission=OuterRef("pk"), status=Attempt.Status.SCORED)
    return (Submission.objects.filter(team=team, is_baseline=False)
            .annotate(has_score=Exists(scored))
            .filter(Q(has_score=True) | Q(status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING])))


def quota_status(team: Team, *, now: datetime | None = None, excluding: Submission | None = None) -> QuotaStatus:
    """The team's quota use, leaving out ``excluding`` (a submission about to be counted again)."""
    now = now or timezone.now()
    counted = counted_submissions(team)
    if excluding is not None:
        counted = counted.exclude(id=excluding.id)
    window = counted.filter(created_at__gt=now - timedelta(days=1))
    oldest = window.order_by("created_at").values_list("created_at", flat=True).first()
    return QuotaStatus(
        per_day_limit=team.quota_per_day if team.quota_per_day is not None else settings.MAGEBENCH_QUOTA_PER_DAY,
        per_day_used=window.count(),
        per_day_resets_at=oldest + timedelta(days=1) if oldest else None,
        total_limit=team.quota_total if team.quota_total is not None else settings.MAGEBENCH_QUOTA_TOTAL,
        total_used=counted.count(),
        concurrent_limit=(team.quota_concurrent if team.quota_concurrent is not None
                          else settings.MAGEBENCH_QUOTA_CONCURRENT),
        concurrent_used=Submission.objects.filter(team=team, is_baseline=False, status__in=[
            Submission.Status.QUEUED, Submission.Status.RUNNING]).count(),
    )


# --- log-in throttling ----------------------------------------------------------------------------

def client_ip(request: Any) -> str:
    """The client's address: the connection's own, or behind MAGEBENCH_NUM_PROXIES reverse proxies
    the one the outermost of them saw (the entries before it in X-Forwarded-For are the client's say)."""
    remote = request.META.get("REMOTE_ADDR", "") if request is not None else ""
    proxies = settings.MAGEBENCH_NUM_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "") if request is not None else ""
    if proxies <= 0 or not forwarded:
        return remote
    addresses = [address.strip() for address in forwarded.split(",") if address.strip()]
    return addresses[-min(proxies, len(addresses))] if addresses else remote


def login_key(kind: str, scope: str, value: str) -> str:
    """The cache key of a failure counter ("fail") or a lock ("lock") of one user name or address."""
    return f"login:{kind}:{scope}:{hashlib.sha256(value.encode()).hexdigest()[:40]}"


def login_scopes(*, username: str, ip: str) -> list[tuple[str, str, int]]:
    """(scope, value, failures allowed) of each counter a log-in attempt falls under."""
    # Case-folded: "Ada" and "ada" share one counter, so changing case buys no extra guesses.
    scopes = [("user", username.strip().casefold(), settings.MAGEBENCH_LOGIN_MAX_FAILURES)]
    if ip:
        scopes.append(("ip", ip, settings.MAGEBENCH_LOGIN_MAX_FAILURES_PER_IP))
    return scopes


def login_locked_until(*, username: str, ip: str) -> datetime | None:
    """When log-ins for this user name or from this address are allowed again, or None if they are."""
    now = time.time()
    untils = [cache.get(login_key("lock", scope, value)) for scope, value, _ in login_scopes(username=username, ip=ip)]
    locked = [until for until in untils if isinstance(until, (int, float)) and until > now]
    return datetime.fromtimestamp(max(locked), tz=UTC) if locked else None
