"""Passwords, log-in throttling and leaving teams, as a public site needs them."""
from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from accounts.models import ApiToken, Membership
from accounts.services import AccountError, member_add, member_remove, team_create, token_create

pytestmark = pytest.mark.django_db

PASSWORD = "a long passphrase 7"


@pytest.fixture(autouse=True)
def _fresh_counters():
    # Failure counters live in the cache, which outlives a test in the same process.
    cache.clear()
    yield
    cache.clear()


def _user(name: str, **extra):
    return get_user_model().objects.create_user(name, password=PASSWORD, **extra)


# --- passwords ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("password", "reason"), [
    ("Sh0rt!", "too short"),
    ("password123", "too common"),
    ("8402759316482", "entirely numeric"),
    ("margaret-hamilton", "too similar"),
])
def test_sign_up_refuses_a_weak_password_and_says_why(client, password, reason):
    response = client.post(reverse("signup"), {"username": "margaret-hamilton", "password1": password,
                                               "password2": password})
    assert response.status_code == 200 and reason in response.content.decode()
    assert not get_user_model().objects.filter(username="margaret-hamilton").exists()


def test_sign_up_accepts_a_long_passphrase(client):
    response = client.post(reverse("signup"), {"username": "grace", "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 302 and get_user_model().objects.filter(username="grace").exists()


def test_a_member_changes_their_password_but_not_to_a_weak_one(client):
    user = _user("ada")
    client.force_login(user)
    page = client.get(reverse("password_change"))
    assert page.status_code == 200 and "new_password1" in page.content.decode()
    weak = client.post(reverse("password_change"), {"old_password": PASSWORD, "new_password1": "12345678",
                                                    "new_password2": "12345678"})
    assert weak.status_code == 200 and "entirely numeric" in weak.content.decode()
    user.refresh_from_db()
    assert user.check_password(PASSWORD)
    strong = client.post(reverse("password_change"), {"old_password": PASSWORD,
                                                      "new_password1": "another long passphrase 8",
                                                      "new_password2": "another long passphrase 8"})
    assert strong.status_code == 302
    user.refresh_from_db()
    assert user.check_password("another long passphrase 8")


# --- log-in throttling --------------------------------------------------------------------------

LOGIN_PAGES = {"site": "login", "admin": "admin:login"}


def _log_in(client: Client, page: str, username: str, password: str, ip: str = "198.51.100.7"):
    return client.post(reverse(LOGIN_PAGES[page]), {"username": username, "password": password},
                       REMOTE_ADDR=ip)


def _logged_in(response) -> bool:
    return response.status_code == 302


@pytest.fixture
def small_limits(settings):
    settings.MAGEBENCH_LOGIN_MAX_FAILURES = 3
    settings.MAGEBENCH_LOGIN_MAX_FAILURES_PER_IP = 5
    settings.MAGEBENCH_LOGIN_WINDOW_SECONDS = 60
    settings.MAGEBENCH_LOGIN_LOCKOUT_SECONDS = 1
    return settings


@pytest.mark.parametrize("page", ["site", "admin"])
def test_after_n_failed_logins_even_the_right_password_is_refused_until_the_lockout_passes(
        page, small_limits, monkeypatch):
    # A lockout long enough that no load on the machine ends it during the checks; its end is then
    # reached by moving the clock the lock and the cache read (time.time) past it, not by waiting.
    small_limits.MAGEBENCH_LOGIN_LOCKOUT_SECONDS = 900
    _user("ada", is_staff=True)
    client = Client()
    for _ in range(3):
        refused = _log_in(client, page, "ada", "not the password")
        assert not _logged_in(refused) and "Too many failed log-ins" not in refused.content.decode()
    locked = _log_in(client, page, "ada", PASSWORD)
    assert not _logged_in(locked)
    assert "Too many failed log-ins" in locked.content.decode() and "try again" in locked.content.decode()
    # The counter is the user name's from this address: the guesser stays held.
    assert not _logged_in(_log_in(Client(), page, "ada", PASSWORD))
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 901)
    assert _logged_in(_log_in(Client(), page, "ada", PASSWORD))


@pytest.mark.parametrize("page", ["site", "admin"])
def test_one_address_trying_many_user_names_is_refused_for_all_of_them(page, small_limits):
    _user("ada", is_staff=True)
    client = Client()
    for index in range(5):
        assert not _logged_in(_log_in(client, page, f"guess-{index}", "not the password"))
    refused = _log_in(client, page, "ada", PASSWORD)
    assert not _logged_in(refused) and "Too many failed log-ins" in refused.content.decode()
    assert _logged_in(_log_in(Client(), page, "ada", PASSWORD, ip="203.0.113.9"))


def test_a_successful_login_clears_the_user_name_s_failures(small_limits):
    _user("ada")
    for _ in range(2):
        _log_in(Client(), "site", "ada", "not the password")
    assert _logged_in(_log_in(Client(), "site", "ada", PASSWORD))
    for _ in range(2):
        _log_in(Client(), "site", "ada", "not the password")
    assert _logged_in(_log_in(Client(), "site", "ada", PASSWORD))


def test_behind_a_proxy_the_forwarded_address_is_the_one_counted(small_limits):
    small_limits.MAGEBENCH_NUM_PROXIES = 1
    _user("ada")
    proxy = "10.0.0.2"
    for index in range(5):
        Client().post(reverse("login"), {"username": f"guess-{index}", "password": "x"}, REMOTE_ADDR=proxy,
                      HTTP_X_FORWARDED_FOR="198.51.100.7")
    # Everyone arrives from the proxy's address: only the attacker's forwarded one is refused.
    assert _logged_in(Client().post(reverse("login"), {"username": "ada", "password": PASSWORD},
                                    REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="203.0.113.9"))


# --- leaving teams ------------------------------------------------------------------------------

def _api_me(token: str) -> int:
    return Client().get(reverse("api-me"), HTTP_AUTHORIZATION=f"Bearer {token}").status_code


@pytest.fixture
def team_of_two():
    owner, member = _user("ada"), _user("bob")
    team = team_create(user=owner, name="Lab")
    member_add(team=team, actor=owner, username="bob")
    _, token = token_create(team=team, user=member, name="bob's", scope="write")
    return team, owner, member, token


def test_an_owner_removes_a_member_from_the_team_page_and_the_member_s_token_stops_working(team_of_two):
    team, owner, member, token = team_of_two
    assert _api_me(token) == 200
    web = Client()
    web.force_login(owner)
    page = web.get(reverse("team", args=[team.slug])).content.decode()
    assert reverse("team-action", args=[team.slug, "remove-member"]) in page
    response = web.post(reverse("team-action", args=[team.slug, "remove-member"]), {"member": member.id})
    assert response.status_code == 302
    assert not Membership.objects.filter(team=team, user=member).exists()
    assert _api_me(token) in (401, 403)
    assert ApiToken.objects.get(created_by=member).revoked_at is not None
    # Added back later, the old token stays dead: it was revoked, not just orphaned.
    member_add(team=team, actor=owner, username="bob")
    assert _api_me(token) in (401, 403)


def test_a_member_leaves_a_team_from_its_page_and_their_token_stops_working(team_of_two):
    team, _, member, token = team_of_two
    web = Client()
    web.force_login(member)
    team_page = web.get(reverse("team", args=[team.slug])).content.decode()
    assert reverse("team-action", args=[team.slug, "leave"]) in team_page
    response = web.post(reverse("team-action", args=[team.slug, "leave"]))
    assert response.status_code == 302 and response["Location"] == reverse("account")
    assert not Membership.objects.filter(team=team, user=member).exists()
    assert _api_me(token) in (401, 403)
    # Now an outsider: the team's page shows its published submissions only, with no member's actions.
    outside = web.get(reverse("team", args=[team.slug]))
    assert outside.status_code == 200
    assert reverse("team-action", args=[team.slug, "leave"]) not in outside.content.decode()
    assert reverse("team-action", args=[team.slug, "create-token"]) not in outside.content.decode()
    assert web.post(reverse("team-action", args=[team.slug, "create-token"])).status_code == 404


def test_only_an_owner_removes_other_members(team_of_two):
    team, owner, member, _ = team_of_two
    with pytest.raises(AccountError, match="owner"):
        member_remove(team=team, actor=member, user=owner)
    outsider = _user("eve")
    with pytest.raises(AccountError):
        member_remove(team=team, actor=outsider, user=member)
    assert Membership.objects.filter(team=team).count() == 2


def test_the_team_s_last_owner_cannot_leave_it_ownerless_but_can_once_another_owner_exists(team_of_two):
    team, owner, member, _ = team_of_two
    with pytest.raises(AccountError, match="no owner"):
        member_remove(team=team, actor=owner, user=owner)
    web = Client()
    web.force_login(owner)
    web.post(reverse("team-action", args=[team.slug, "leave"]))
    assert Membership.objects.filter(team=team, user=owner, role="owner").exists()
    assert "no owner" in web.get(reverse("team", args=[team.slug])).content.decode()
    _user("carol")
    member_add(team=team, actor=owner, username="carol", role=Membership.Role.OWNER)
    member_remove(team=team, actor=owner, user=owner)
    assert list(team.memberships.values_list("user__username", "role").order_by("user__username")) == [
        ("bob", "member"), ("carol", "owner")]
