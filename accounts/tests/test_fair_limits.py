"""Limits that hold a stranger without holding the people they target: refused sign-ups spend no
site-wide budget, an IPv6 client is counted per /64, many addresses guessing at one account make it
ask for a mailed link rather than lock its owner out, a guesser's wrong tokens do not refuse a right
one from the same address, and strangers' reset requests do not stop the owner's reset."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.throttling import AnonRateThrottle

from accounts.models import LoginProof
from accounts.selectors import address_key, token_digest
from accounts.services import SIGNUP_SITE_KEY

pytestmark = pytest.mark.django_db

PASSWORD = "a long passphrase 7"


def _user(name: str, **extra):
    return get_user_model().objects.create_user(name, password=PASSWORD, **extra)


def _log_in(username: str, password: str, ip: str, client: Client | None = None):
    return (client or Client()).post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip)


# --- sign-ups -------------------------------------------------------------------------------------

def _sign_up(name: str, ip: str, *, password2: str = PASSWORD):
    return Client().post(reverse("signup"), {"username": name, "password1": PASSWORD, "password2": password2},
                         REMOTE_ADDR=ip)


def test_refused_sign_ups_leave_the_site_wide_budget_unchanged(settings):
    settings.MAGEBENCH_SIGNUP_MAX_PER_ADDRESS = 2
    settings.MAGEBENCH_SIGNUP_MAX_PER_HOUR = 4
    flooder = [_sign_up(f"flood-{n}", "198.51.100.66") for n in range(30)]
    assert [r.status_code for r in flooder[:2]] == [302, 302] and {r.status_code for r in flooder[2:]} == {200}
    for n in range(5):
        _sign_up(f"typo-{n}", f"203.0.113.{n}", password2="not the same")
    assert cache.get(SIGNUP_SITE_KEY) == 2
    # The two places left are for others; past them the site-wide cap refuses, and gives its place back.
    assert [_sign_up(f"other-{n}", f"192.0.2.{n}").status_code for n in range(3)] == [302, 302, 200]
    assert cache.get(SIGNUP_SITE_KEY) == 4
    assert get_user_model().objects.count() == 4


# --- IPv6 per /64 ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("address", "key"), [
    ("198.51.100.7", "198.51.100.7"),
    ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
    ("2001:DB8:1:2::1", "2001:db8:1:2::/64"),
    ("::ffff:198.51.100.7", "198.51.100.7"),
    ("not an address", "not an address"),
])
def test_an_address_is_counted_as_itself_or_as_its_ipv6_64(address, key):
    assert address_key(address) == key


def test_two_ipv6_addresses_in_one_64_share_a_log_in_counter_and_two_in_different_64s_do_not(settings):
    settings.MAGEBENCH_LOGIN_MAX_FAILURES = 3
    settings.MAGEBENCH_LOGIN_MAX_FAILURES_PER_IP = 5
    _user("ada")
    for n in range(5):
        _log_in(f"guess-{n}", "not the password", ip=f"2001:db8:1:2::{n + 1:x}")
    held = _log_in("ada", PASSWORD, ip="2001:db8:1:2:ffff:ffff:ffff:ffff")
    assert held.status_code == 200 and "Too many failed log-ins" in held.content.decode()
    assert _log_in("ada", PASSWORD, ip="2001:db8:1:3::1").status_code == 302


def test_two_ipv6_addresses_in_one_64_share_a_sign_up_counter_and_two_in_different_64s_do_not(settings):
    settings.MAGEBENCH_SIGNUP_MAX_PER_ADDRESS = 2
    assert [_sign_up(f"v6-{n}", f"2001:db8:5:6::{n + 1}").status_code for n in range(3)] == [302, 302, 200]
    assert _sign_up("v6-elsewhere", "2001:db8:5:7::1").status_code == 302


def test_two_ipv6_addresses_in_one_64_share_an_api_throttle_and_two_in_different_64s_do_not(monkeypatch):
    # Set on DRF's class, which the site's throttle extends: its rate, the site's way of counting.
    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/minute", "user": "1000/minute"})
    board = "/api/v1/boards/sokoban/global/mini/"
    same = [Client().get(board, REMOTE_ADDR=f"2001:db8:9:9::{n + 1}").status_code for n in range(4)]
    assert 429 not in same[:3] and same[3] == 429
    assert Client().get(board, REMOTE_ADDR="2001:db8:9:a::1").status_code != 429


# --- log-in: the account's cap asks for proof, never locks its owner out --------------------------

@pytest.fixture
def account_cap(settings):
    settings.MAGEBENCH_LOGIN_MAX_FAILURES = 3
    settings.MAGEBENCH_LOGIN_MAX_FAILURES_PER_IP = 5
    settings.MAGEBENCH_LOGIN_MAX_FAILURES_PER_ACCOUNT = 6
    return settings


def _guess_from_many_addresses(username: str, guesses: int) -> None:
    # Two guesses per address: under every per-address limit.
    for n in range(guesses):
        _log_in(username, f"guess {n}", ip=f"198.51.100.{n // 2 + 1}")


def _logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_past_the_account_s_cap_a_right_password_needs_the_mailed_link_which_logs_in_once(account_cap,
                                                                                           mailoutbox):
    _user("ada", email="ada@example.org")
    _guess_from_many_addresses("ada", 6)
    owner = Client()
    asked = _log_in("ada", PASSWORD, ip="203.0.113.9", client=owner)
    assert asked.status_code == 200 and "e-mailed a one-time log-in link" in asked.content.decode()
    assert not _logged_in(owner)
    [mail] = mailoutbox
    assert mail.to == ["ada@example.org"]
    link = re.search(r"https?://\S+/accounts/login/link/\S+/", mail.body).group(0)
    secret = link.rstrip("/").rsplit("/", 1)[1]
    # Stored as a digest only.
    proof = LoginProof.objects.get()
    assert proof.digest == token_digest(secret) and secret not in str(LoginProof.objects.values().get())

    # Guesses beyond the cap hold nobody but the guessers.
    _guess_from_many_addresses("ada", 10)
    assert owner.get(link).status_code == 200 and not _logged_in(owner)  # a mail scanner's fetch uses nothing
    used = owner.post(link)
    assert used.status_code == 302 and _logged_in(owner)
    again = Client()
    assert again.post(link).status_code == 410 and not _logged_in(again)


def test_past_the_account_s_cap_a_guesser_gets_no_mail_and_an_expired_link_logs_nobody_in(account_cap,
                                                                                         mailoutbox):
    _user("ada", email="ada@example.org")
    _guess_from_many_addresses("ada", 12)
    assert mailoutbox == []
    _log_in("ada", PASSWORD, ip="203.0.113.9")
    link = re.search(r"https?://\S+/accounts/login/link/\S+/", mailoutbox[0].body).group(0)
    LoginProof.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    late = Client()
    assert late.post(link).status_code == 410 and not _logged_in(late)


def test_under_the_account_s_cap_a_right_password_logs_in_from_a_new_address(account_cap):
    _user("ada", email="ada@example.org")
    _guess_from_many_addresses("ada", 5)
    assert _log_in("ada", PASSWORD, ip="203.0.113.9").status_code == 302


# --- API tokens -----------------------------------------------------------------------------------

def test_an_address_s_bad_tokens_do_not_refuse_its_good_token(settings, lab):
    settings.MAGEBENCH_TOKEN_MAX_FAILURES_PER_IP = 4

    def me(token: str) -> int:
        return Client().get(reverse("api-me"), HTTP_AUTHORIZATION=f"Bearer {token}",
                            REMOTE_ADDR="198.51.100.66").status_code

    assert [me(f"mbw_wrong{n}") for n in range(6)][-1] == 429
    assert me(lab.write_token) == 200 and me(lab.read_token) == 200
    assert me("mbw_wrong-again") == 429


# --- password resets ------------------------------------------------------------------------------

def test_an_attacker_s_reset_requests_do_not_stop_the_owner_s_reset(settings, mailoutbox):
    settings.MAGEBENCH_PASSWORD_RESET_MAX_PER_EMAIL = 3
    settings.MAGEBENCH_PASSWORD_RESET_MAX_PER_ADDRESS = 5
    ada = _user("ada", email="ada@example.org")
    for n in range(12):
        Client().post(reverse("password_reset"), {"email": "ada@example.org"}, REMOTE_ADDR=f"198.51.100.{n % 4}")
    mails = len(mailoutbox)
    assert mails == 3

    asked = Client().post(reverse("password_reset"), {"email": "ada@example.org"}, REMOTE_ADDR="203.0.113.9")
    assert asked.status_code == 302 and asked["Location"] == reverse("password_reset_done")
    # The latest link in the owner's mailbox sets the new password.
    link = re.search(r"https?://[^/\s]+(/accounts/password/reset/\S+/\S+/)", mailoutbox[-1].body).group(1)
    owner = Client(REMOTE_ADDR="203.0.113.9")
    form = owner.get(link, follow=True)
    assert "new_password1" in form.content.decode()
    done = owner.post(form.redirect_chain[-1][0], {"new_password1": "a brand new passphrase 9",
                                                   "new_password2": "a brand new passphrase 9"})
    assert done.status_code == 302 and done["Location"] == reverse("password_reset_complete")
    ada.refresh_from_db()
    assert ada.check_password("a brand new passphrase 9")

    # Signed in, the owner asks for their own address and is always sent a mail.
    signed_in = Client()
    signed_in.force_login(ada)
    assert signed_in.post(reverse("password_reset"), {"email": "ADA@example.org"}).status_code == 302
    assert len(mailoutbox) == mails + 1
