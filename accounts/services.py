"""Teams, members, API tokens and log-in throttling."""
from __future__ import annotations

import contextlib
import enum
import secrets
import time
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from accounts.models import ApiToken, LoginProof, Membership, Team
from accounts.selectors import (
    account_failures_key,
    address_key,
    login_key,
    login_scopes,
    token_digest,
    token_scopes,
    user_role,
)


class AccountError(ValueError):
    """A request about teams or tokens that cannot be done, with a message for the user."""


def team_get_or_create(*, name: str) -> Team:
    name = name.strip()
    if not name:
        raise AccountError("a team name is required")
    team, _ = Team.objects.get_or_create(name=name, defaults={"slug": _unique_team_slug(name)})
    return team


def _unique_team_slug(name: str) -> str:
    base = slugify(name) or "team"
    slug, n = base, 1
    while Team.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def team_create(*, user: User, name: str) -> Team:
    name = name.strip()
    if not name:
        raise AccountError("a team needs a name")
    if Team.objects.filter(name__iexact=name).exists():
        raise AccountError(f"a team called {name!r} exists already; ask its owner to add you")
    most = settings.MAGEBENCH_MAX_TEAMS_PER_USER
    if Membership.objects.filter(user=user, role=Membership.Role.OWNER).count() >= most:
        # Each team has its own quota and its own turn in the fair order: teams made in bulk would
        # multiply both.
        raise AccountError(f"one user may own at most {most} teams; ask the site's operators for more")
    with transaction.atomic():
        team = team_get_or_create(name=name)
        Membership.objects.create(team=team, user=user, role=Membership.Role.OWNER)
    return team


def member_add(*, team: Team, actor: User, username: str, role: str = Membership.Role.MEMBER) -> Membership:
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


def member_remove(*, team: Team, actor: User, user: User) -> None:
    """Take ``user`` out of the team: an owner removes anyone, a member only themselves (leaving).

    The tokens they made for the team are revoked with it, so that adding them back later does not
    bring old, possibly leaked, tokens back to life. A team always keeps an owner.
    """
    if actor.pk != user.pk and user_role(actor, team.id) != Membership.Role.OWNER:
        raise AccountError("only the team's owner removes other members")
    with transaction.atomic():
        # Locked together, so that two owners leaving at the same time cannot both go.
        memberships = list(Membership.objects.select_for_update().filter(team=team))
        target = next((m for m in memberships if m.user_id == user.pk), None)
        if target is None:
            raise AccountError(f"{user.get_username()} is not in the team")
        owners = [m for m in memberships if m.role == Membership.Role.OWNER]
        if target.role == Membership.Role.OWNER and len(owners) == 1:
            raise AccountError("the team would be left with no owner: add another member as owner first")
        target.delete()
        ApiToken.objects.filter(team=team, created_by=user, revoked_at__isnull=True).update(revoked_at=timezone.now())


def token_create(*, team: Team, user: User, name: str, scope: str) -> tuple[ApiToken, str]:
    """A new token and its full text, which is shown once and never stored."""
    if user_role(user, team.id) is None:
        raise AccountError("only members of the team create its tokens")
    if scope not in ApiToken.Scope.values:
        raise AccountError("scope must be read or write")
    secret = secrets.token_urlsafe(32)
    token = ApiToken.objects.create(team=team, created_by=user, name=name.strip()[:80] or "token", scope=scope,
                                    key_id=secrets.token_hex(6), digest=token_digest(secret))
    return token, f"{token.prefix}_{secret}"


def token_revoke(*, token: ApiToken, actor: User) -> ApiToken:
    if token.created_by_id != actor.pk and user_role(actor, token.team_id) != Membership.Role.OWNER:
        raise AccountError("only the token's creator or the team's owner revokes it")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def token_touch(*, token: ApiToken) -> None:
    ApiToken.objects.filter(id=token.id).update(last_used_at=timezone.now())


def failures_record(scopes: list[tuple[str, str, int]]) -> None:
    """Count a failure against each counter; one that reaches its limit within MAGEBENCH_LOGIN_WINDOW_SECONDS
    is locked for MAGEBENCH_LOGIN_LOCKOUT_SECONDS, doubled for each lock before it in the last
    MAGEBENCH_LOGIN_LOCKOUT_MAX_SECONDS (and never longer than that): a patient guesser gets ever
    fewer guesses a day, someone who mistyped a few times waits only the first delay."""
    window = settings.MAGEBENCH_LOGIN_WINDOW_SECONDS
    longest = settings.MAGEBENCH_LOGIN_LOCKOUT_MAX_SECONDS
    for scope, value, limit in scopes:
        if _counter_incr(login_key("fail", scope, value), window) < limit:
            continue
        strikes = _counter_incr(login_key("strikes", scope, value), longest)
        lockout = min(longest, settings.MAGEBENCH_LOGIN_LOCKOUT_SECONDS * 2 ** min(strikes - 1, 30))
        cache.set(login_key("lock", scope, value), time.time() + lockout, timeout=lockout)
        # The lock runs its course; afterwards the full number of tries is back.
        cache.delete(login_key("fail", scope, value))


def _counter_incr(key: str, timeout: int) -> int:
    cache.add(key, 0, timeout=timeout)
    try:
        return int(cache.incr(key))
    except ValueError:  # the counter expired between add() and incr()
        cache.set(key, 1, timeout=timeout)
        return 1


def login_failure_record(*, username: str, ip: str) -> None:
    """Count a failed log-in (or a wrong old password) against the user name from this address,
    against the address, and against the account from every address (``login_needs_proof``)."""
    failures_record(login_scopes(username=username, ip=ip))
    _counter_incr(account_failures_key(username), settings.MAGEBENCH_LOGIN_ACCOUNT_WINDOW_SECONDS)


def token_failure_record(*, ip: str) -> None:
    """Count a wrong API token against the address it came from."""
    failures_record(token_scopes(ip=ip))


def login_success_record(*, username: str, ip: str = "") -> None:
    """A correct password clears the failures of the user name from this address (not the address's
    own: anyone could log in to an account of their own between guesses at others)."""
    for scope, value, _ in login_scopes(username=username, ip=ip)[:1]:
        cache.delete(login_key("fail", scope, value))
        cache.delete(login_key("strikes", scope, value))


def login_proof_send(*, user: User, link: Callable[[str], str]) -> bool:
    """Mail the account a one-time log-in link (``link`` makes its address from the secret); False
    when the account has no e-mail address to send it to.

    At most MAGEBENCH_LOGIN_PROOF_MAX_MAILS go out per account within MAGEBENCH_LOGIN_PROOF_SECONDS;
    past that nothing more is sent, and the links already sent, each valid that long, still work.
    Only a right password asks for a link, so a guesser cannot fill the owner's mailbox.
    """
    if not user.email:
        return False
    lifetime = settings.MAGEBENCH_LOGIN_PROOF_SECONDS
    mails = _counter_incr(login_key("fail", "proof-mail", str(user.pk)), lifetime)
    if mails > settings.MAGEBENCH_LOGIN_PROOF_MAX_MAILS:
        return True
    secret = secrets.token_urlsafe(32)
    LoginProof.objects.create(user=user, digest=token_digest(secret),
                              expires_at=timezone.now() + timedelta(seconds=lifetime))
    minutes = max(1, lifetime // 60)
    send_mail(
        "MageBench log-in link",
        f"Someone, we hope you, gave the right password for the account {user.get_username()}, which has had "
        f"many failed log-ins lately. To log in, open this link within {minutes} minutes; it works once:\n\n"
        f"{link(secret)}\n\nIf it was not you, log in with this link and change your password.\n",
        None, [user.email])
    return True


def login_proof_use(*, secret: str) -> User | None:
    """The user a one-time log-in link stands for, once: None for an unknown, used or expired link.
    Using it clears the account's failed log-ins, so that its owner's next password log-in goes through."""
    now = timezone.now()
    with transaction.atomic():
        proof = (LoginProof.objects.select_for_update().select_related("user")
                 .filter(digest=token_digest(secret), used_at__isnull=True, expires_at__gt=now).first())
        if proof is None:
            return None
        proof.used_at = now
        proof.save(update_fields=["used_at"])
    cache.delete(account_failures_key(proof.user.get_username()))
    return proof.user


#: The site-wide sign-up counter of the current hour.
SIGNUP_SITE_KEY = login_key("fail", "signup", "all")


def signup_reserve(*, ip: str) -> bool:
    """Count a sign-up that is about to create an account against its address and the whole site,
    and say whether it may go ahead: at most MAGEBENCH_SIGNUP_MAX_PER_ADDRESS from one address and
    MAGEBENCH_SIGNUP_MAX_PER_HOUR in all per hour, so that nobody mints accounts (and their teams'
    quotas) in bulk.

    Only accounts created spend the site-wide budget: a sign-up refused for its address never
    touches it, one refused by the site-wide cap gives its place back, and so does one whose account
    could not be created (``signup_release``). Otherwise one address posting forms would close
    sign-up for everyone.
    """
    hour = 3600
    from_address = _counter_incr(login_key("fail", "signup-ip", address_key(ip)), hour) if ip else 0
    if from_address > settings.MAGEBENCH_SIGNUP_MAX_PER_ADDRESS:
        return False
    if _counter_incr(SIGNUP_SITE_KEY, hour) > settings.MAGEBENCH_SIGNUP_MAX_PER_HOUR:
        signup_release()
        return False
    return True


def signup_release() -> None:
    """Give back a place in the site-wide sign-up budget that created no account."""
    with contextlib.suppress(ValueError):  # the hour ended meanwhile: nothing to give back
        cache.decr(SIGNUP_SITE_KEY)


class ResetVerdict(enum.Enum):
    SEND = "send"
    #: The e-mail address had its mails for the window: the page answers as if sent, and the links
    #: already sent work.
    QUIET = "quiet"
    #: Too many requests from the requester's own address.
    REFUSED = "refused"


def password_reset_request_record(*, email: str, ip: str, own_address: bool = False) -> ResetVerdict:
    """Count a password-reset request and say what to do with it.

    Requests are refused per requesting address (MAGEBENCH_PASSWORD_RESET_MAX_PER_ADDRESS within the
    log-in window), so one client can neither flood a mailbox nor probe many addresses quickly. The
    e-mail address's own cap (MAGEBENCH_PASSWORD_RESET_MAX_PER_EMAIL) only limits the mails sent:
    past it the request is answered as usual without a new mail, since the links already sent
    keep working, so requests from strangers' addresses never stop the owner resetting. A signed-in
    user asking for their own address (``own_address``) is never refused nor capped.
    """
    if own_address:
        return ResetVerdict.SEND
    window = settings.MAGEBENCH_LOGIN_WINDOW_SECONDS
    if ip and _counter_incr(login_key("fail", "reset-ip", address_key(ip)), window) > \
            settings.MAGEBENCH_PASSWORD_RESET_MAX_PER_ADDRESS:
        return ResetVerdict.REFUSED
    value = email.strip().casefold()
    if value and _counter_incr(login_key("fail", "reset-email", value), window) > \
            settings.MAGEBENCH_PASSWORD_RESET_MAX_PER_EMAIL:
        return ResetVerdict.QUIET
    return ResetVerdict.SEND


def user_email_set(*, user: User, email: str) -> None:
    """The address password-reset links go to ("" removes it)."""
    user.email = get_user_model().objects.normalize_email(email.strip())
    user.save(update_fields=["email"])
