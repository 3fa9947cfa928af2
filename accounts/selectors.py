"""Who may see and do what, and who is locked out of logging in."""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as AuthUser
from django.core.cache import cache
from django.db.models import Count
from django.http import Http404

from accounts.models import ApiToken, Membership, Team

if TYPE_CHECKING:  # only named in annotations: submissions builds on accounts, not the reverse
    from submissions.models import Submission

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


def user_memberships(user: AuthUser) -> list[Membership]:
    """The user's teams with their role, each with its number of members and submissions."""
    return list(Membership.objects.filter(user=user).select_related("team")
                .annotate(member_count=Count("team__memberships", distinct=True),
                          submission_count=Count("team__submissions", distinct=True))
                .order_by("team__name"))


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


def viewable_or_404(access: Access, submission: Submission) -> Submission:
    """The submission if the visitor may see it; a private one is a 404 to outsiders, as if absent."""
    if not can_view_submission(access, submission):
        raise Http404("no such submission")
    return submission


def can_manage_submission(access: Access, submission: Submission) -> bool:
    """Cancel, resume and re-run: any member of the team with write access (and staff)."""
    return access.is_staff or (access.can_write and submission.team_id in access.team_ids)


def can_publish_submission(access: Access, submission: Submission) -> bool:
    return access.is_staff or (access.can_write and submission.team_id in access.owner_team_ids)


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


def address_key(ip: str) -> str:
    """The key an address is counted under: an IPv4 address as is, an IPv6 one as its /64 network.

    One IPv6 host is usually given a whole /64, so counting its single addresses would hand it
    2**64 fresh counters. An IPv4 address written in IPv6 (::ffff:a.b.c.d) counts as the IPv4 one.
    """
    try:
        address = ipaddress.ip_address(ip.strip())
    except ValueError:
        return ip
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def login_key(kind: str, scope: str, value: str) -> str:
    """The cache key of a failure counter ("fail") or a lock ("lock") of one user name or address."""
    return f"login:{kind}:{scope}:{hashlib.sha256(value.encode()).hexdigest()[:40]}"


def login_scopes(*, username: str, ip: str) -> list[tuple[str, str, int]]:
    """(scope, value, failures allowed) of each counter a log-in attempt falls under.

    The user name is counted together with the address, never alone: a per-account lock would let
    anyone keep any user (an admin too) out with a few wrong passwords. The address alone has its own,
    higher counter, which holds one client guessing at many user names.
    """
    # Case-folded: "Ada" and "ada" share one counter, so changing case buys no extra guesses.
    name = username.strip().casefold()
    ip = address_key(ip) if ip else ""
    if not ip:
        return [("user", name, settings.MAGEBENCH_LOGIN_MAX_FAILURES)]
    return [("user-ip", f"{name}\n{ip}", settings.MAGEBENCH_LOGIN_MAX_FAILURES),
            ("ip", ip, settings.MAGEBENCH_LOGIN_MAX_FAILURES_PER_IP)]


def token_scopes(*, ip: str) -> list[tuple[str, str, int]]:
    """The counter wrong API tokens from one address fall under."""
    return [("token-ip", address_key(ip), settings.MAGEBENCH_TOKEN_MAX_FAILURES_PER_IP)] if ip else []


def account_failures_key(username: str) -> str:
    """The counter of failed log-ins of one user name from every address together."""
    return login_key("fail", "account", username.strip().casefold())


def login_needs_proof(*, username: str) -> bool:
    """Whether the account has had MAGEBENCH_LOGIN_MAX_FAILURES_PER_ACCOUNT failed log-ins within
    MAGEBENCH_LOGIN_ACCOUNT_WINDOW_SECONDS, from any addresses: then a right password alone does not
    log in, and the owner proves themselves with a link mailed to the account's address."""
    failures = cache.get(account_failures_key(username))
    return isinstance(failures, int) and failures >= settings.MAGEBENCH_LOGIN_MAX_FAILURES_PER_ACCOUNT


def locked_until(scopes: list[tuple[str, str, int]]) -> datetime | None:
    """When the latest lock of these counters ends, or None if none is locked."""
    now = time.time()
    untils = [cache.get(login_key("lock", scope, value)) for scope, value, _ in scopes]
    locked = [until for until in untils if isinstance(until, (int, float)) and until > now]
    return datetime.fromtimestamp(max(locked), tz=UTC) if locked else None


def login_locked_until(*, username: str, ip: str) -> datetime | None:
    """When log-ins for this user name from this address (or from it at all) are allowed again, or None."""
    return locked_until(login_scopes(username=username, ip=ip))
