"""What one stranger can do to others' accounts and to the site's shared resources: log-in guesses
slow the guesser without locking the real user out, password-change and token guesses are counted
like log-in failures, sign-ups and teams per user are limited, and production refuses to start
behind a proxy it cannot see through."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from accounts.services import AccountError, team_create

pytestmark = pytest.mark.django_db

PASSWORD = "a long passphrase 7"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fresh_counters():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def small_limits(settings):
    settings.MAGEBENCH_LOGIN_MAX_FAILURES = 3
    settings.MAGEBENCH_LOGIN_MAX_FAILURES_PER_IP = 5
    settings.MAGEBENCH_LOGIN_WINDOW_SECONDS = 60
    settings.MAGEBENCH_LOGIN_LOCKOUT_SECONDS = 900
    return settings


def _user(name: str, **extra):
    return get_user_model().objects.create_user(name, password=PASSWORD, **extra)


def _log_in(page: str, username: str, password: str, ip: str):
    return Client().post(reverse(page), {"username": username, "password": password}, REMOTE_ADDR=ip)


# --- log-in: per (account, address), growing delays ---------------------------------------------

@pytest.mark.parametrize("page", ["login", "admin:login"])
def test_a_stranger_s_wrong_passwords_do_not_keep_the_real_user_out(page, small_limits):
    _user("ada", is_staff=True)
    for _ in range(10):
        _log_in(page, "ada", "not the password", ip="198.51.100.66")
    assert _log_in(page, "ada", PASSWORD, ip="198.51.100.66").status_code == 200  # the guesser is held
    assert _log_in(page, "ada", PASSWORD, ip="203.0.113.9").status_code == 302  # the user is not


def test_each_lock_of_the_same_guesser_lasts_longer_than_the_one_before(small_limits, monkeypatch):
    _user("ada")
    now = [time.time()]
    monkeypatch.setattr(time, "time", lambda: now[0])
    for expected in (900, 1800, 3600):
        for _ in range(3):
            _log_in("login", "ada", "not the password", ip="198.51.100.66")
        now[0] += expected - 5
        assert _log_in("login", "ada", PASSWORD, ip="198.51.100.66").status_code == 200, expected
        now[0] += 10


def test_production_behind_a_proxy_refuses_to_start_without_the_proxy_count(tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith(("MAGEBENCH_", "DJANGO_"))}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings.base", "MAGEBENCH_ENV": "production",
                "DJANGO_SECRET_KEY": "k" * 12 + "-production-secret-of-sufficient-length-and-variety-3f9a2c",
                "FIELD_ENCRYPTION_KEY": "kEqL4pO2mUq7PuqjQ3mnIjqg0b6MnR9Tm5Kc0hXvCUE=",
                "DJANGO_ALLOWED_HOSTS": "bench.example.org", "MAGEBENCH_DATA_DIR": str(tmp_path),
                "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/magebench_unused"})
    check = [sys.executable, "manage.py", "check", "--deploy"]
    missing = subprocess.run(check, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert missing.returncode != 0 and "MAGEBENCH_NUM_PROXIES" in missing.stderr
    counted = subprocess.run(check, cwd=ROOT, env={**env, "MAGEBENCH_NUM_PROXIES": "1"}, capture_output=True,
                             text=True, timeout=120)
    assert "MAGEBENCH_NUM_PROXIES" not in counted.stderr, counted.stderr[-2000:]
    direct = subprocess.run(check, cwd=ROOT, env={**env, "MAGEBENCH_BEHIND_PROXY": "false"}, capture_output=True,
                            text=True, timeout=120)
    assert "MAGEBENCH_NUM_PROXIES" not in direct.stderr, direct.stderr[-2000:]


# --- password change and API tokens -------------------------------------------------------------

def test_guesses_of_the_old_password_on_the_change_form_are_limited(small_limits):
    user = _user("ada")
    web = Client()
    web.force_login(user)
    new = {"new_password1": "another long passphrase 8", "new_password2": "another long passphrase 8"}
    for _ in range(3):
        response = web.post(reverse("password_change"), {"old_password": "a guess", **new}, REMOTE_ADDR="198.51.100.66")
        assert response.status_code == 200
    held = web.post(reverse("password_change"), {"old_password": PASSWORD, **new}, REMOTE_ADDR="198.51.100.66")
    assert held.status_code == 200 and "Too many failed" in held.content.decode()
    user.refresh_from_db()
    assert user.check_password(PASSWORD)


def test_repeated_wrong_api_tokens_from_one_address_get_a_429_with_retry_after(settings):
    settings.MAGEBENCH_TOKEN_MAX_FAILURES_PER_IP = 4
    statuses = [Client().get(reverse("api-me"), HTTP_AUTHORIZATION=f"Bearer mbw_wrong{n}",
                             REMOTE_ADDR="198.51.100.66") for n in range(6)]
    assert [r.status_code for r in statuses[:4]] == [401] * 4
    assert statuses[5].status_code == 429 and int(statuses[5]["Retry-After"]) > 0
    other = Client().get(reverse("api-me"), HTTP_AUTHORIZATION="Bearer mbw_wrong", REMOTE_ADDR="203.0.113.9")
    assert other.status_code == 401


# --- sign-ups and teams -------------------------------------------------------------------------

def _sign_up(n: int, ip: str):
    return Client().post(reverse("signup"), {"username": f"user-{ip}-{n}", "password1": PASSWORD,
                                             "password2": PASSWORD}, REMOTE_ADDR=ip)


def test_sign_ups_from_one_address_are_limited_with_a_clear_message(settings):
    settings.MAGEBENCH_SIGNUP_MAX_PER_ADDRESS = 3
    assert [_sign_up(n, "198.51.100.66").status_code for n in range(3)] == [302] * 3
    refused = _sign_up(3, "198.51.100.66")
    assert refused.status_code == 200 and "Too many sign-ups" in refused.content.decode()
    assert _sign_up(4, "203.0.113.9").status_code == 302


def test_sign_ups_site_wide_are_capped_per_hour(settings):
    settings.MAGEBENCH_SIGNUP_MAX_PER_HOUR = 2
    assert [_sign_up(0, f"198.51.100.{n}").status_code for n in range(2)] == [302, 302]
    refused = _sign_up(0, "198.51.100.9")
    assert refused.status_code == 200 and "Too many sign-ups" in refused.content.decode()


def test_one_user_creates_at_most_the_allowed_number_of_teams(settings):
    settings.MAGEBENCH_MAX_TEAMS_PER_USER = 2
    user = _user("ada")
    team_create(user=user, name="One")
    team_create(user=user, name="Two")
    with pytest.raises(AccountError, match="at most 2 teams"):
        team_create(user=user, name="Three")
