"""Password reset in headless Chromium: a link from the log-in page mails a one-time link, and the link
sets a new password that logs in; requests are counted like failed log-ins."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.integration

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("size", SIZES)
def test_a_forgotten_password_is_reset_through_the_mailed_link(live_server, site_page, transactional_db, mailoutbox,
                                                               size):
    get_user_model().objects.create_user("ada", email="ada@example.org", password="the old passphrase 1")
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/accounts/login/")
    page.locator("main").get_by_role("link", name="Reset it").click()
    page.wait_for_url("**/accounts/password/reset/")
    page.fill("input[name=email]", "ada@example.org")
    page.get_by_role("button", name="Send the link").click()
    page.wait_for_url("**/accounts/password/reset/sent/")
    assert "Check your mail" in page.locator("h1").inner_text()

    [mail] = mailoutbox
    assert mail.to == ["ada@example.org"] and "password" in mail.subject.lower()
    assert '"ada"' in mail.body
    link = re.search(r"https?://\S+/accounts/password/reset/\S+/\S+/", mail.body).group(0)
    page.goto(link)
    page.locator("input[name=new_password1]").wait_for()
    page.fill("input[name=new_password1]", "a brand new passphrase 9")
    page.fill("input[name=new_password2]", "a brand new passphrase 9")
    page.get_by_role("button", name="Set the password").click()
    page.wait_for_url("**/accounts/password/reset/done/")
    page.screenshot(path=f"/tmp/shots/password-reset-{size}.png", full_page=True)

    # The link worked once.
    page.goto(link)
    assert "does not work any more" in page.locator("main").inner_text()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "a brand new passphrase 9")
    page.locator("main").get_by_role("button", name="Log in").click()
    page.wait_for_url("**/accounts/")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= SIZES[size]["width"]
    assert errors == []


def test_an_unknown_address_gets_the_same_answer_and_no_mail(client, db, mailoutbox):
    response = client.post("/accounts/password/reset/", {"email": "nobody@example.org"}, follow=True)
    assert response.redirect_chain[-1][0] == "/accounts/password/reset/sent/"
    assert mailoutbox == []


def test_past_the_e_mail_s_cap_the_page_reads_the_same_and_sends_nothing_more(client, db, mailoutbox, settings):
    settings.MAGEBENCH_PASSWORD_RESET_MAX_PER_EMAIL = 2
    get_user_model().objects.create_user("ada", email="ada@example.org", password="the old passphrase 1")
    answers = [client.post("/accounts/password/reset/", {"email": address}, REMOTE_ADDR=f"198.51.100.{n}")
               for n, address in enumerate(["ADA@example.org", "ada@example.org", "ada@example.org"])]
    assert [(a.status_code, a["Location"]) for a in answers] == [(302, "/accounts/password/reset/sent/")] * 3
    assert len(mailoutbox) == 2


def test_reset_requests_past_the_limit_of_one_address_are_refused_and_send_nothing(client, db, mailoutbox,
                                                                                     settings):
    settings.MAGEBENCH_PASSWORD_RESET_MAX_PER_ADDRESS = 2
    for n in range(2):
        get_user_model().objects.create_user(f"user{n}", email=f"user{n}@example.org", password="a passphrase 1")
        assert client.post("/accounts/password/reset/", {"email": f"user{n}@example.org"}).status_code == 302
    refused = client.post("/accounts/password/reset/", {"email": "someone@example.org"})
    assert refused.status_code == 200 and "Too many password-reset requests" in refused.content.decode()
    assert len(mailoutbox) == 2


def test_a_new_account_may_give_an_address_for_resets(client, db):
    response = client.post("/accounts/signup/", {"username": "grace", "email": "grace@example.org",
                                                 "password1": "a long passphrase 7",
                                                 "password2": "a long passphrase 7"})
    assert response.status_code == 302
    assert get_user_model().objects.get(username="grace").email == "grace@example.org"


def test_a_signed_in_user_sets_the_address_resets_go_to_and_a_bad_one_is_refused(lab, mailoutbox):
    response = lab.client.post("/accounts/email/", {"email": "ada@example.org"}, follow=True)
    assert "E-mail address saved" in response.content.decode()
    lab.user.refresh_from_db()
    assert lab.user.email == "ada@example.org"
    assert 'value="ada@example.org"' in lab.client.get("/accounts/").content.decode()
    refused = lab.client.post("/accounts/email/", {"email": "not an address"}, follow=True)
    assert "Not saved" in refused.content.decode()
    lab.user.refresh_from_db()
    assert lab.user.email == "ada@example.org"
    lab.client.logout()
    lab.client.post("/accounts/password/reset/", {"email": "ada@example.org"})
    assert [mail.to for mail in mailoutbox] == [["ada@example.org"]]
