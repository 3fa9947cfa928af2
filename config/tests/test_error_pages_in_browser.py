"""The site's own 404 and 500 pages: in its layout, with its navigation, at desktop and phone sizes."""
from __future__ import annotations

import pytest
from django.test import RequestFactory
from django.views.defaults import server_error

pytestmark = pytest.mark.integration

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("size", SIZES)
def test_an_unknown_address_answers_404_with_the_sites_page(live_server, site_page, transactional_db, size):
    page, errors = site_page(viewport=SIZES[size])
    response = page.goto(f"{live_server.url}/no-such-page")
    assert response is not None and response.status == 404
    assert page.locator("header.top a.brand").inner_text() == "MageBench Leaderboard"
    assert page.locator("h1").inner_text() == "Nothing here"
    assert page.evaluate("() => getComputedStyle(document.body).fontFamily") != "Times New Roman"
    page.locator("main").get_by_role("link", name="The boards").click()
    page.wait_for_url(f"{live_server.url}/")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= SIZES[size]["width"]
    # The missing page is the only error on the way.
    assert [e for e in errors if "404" not in e] == []


def test_a_server_error_answers_500_with_the_sites_page(db):
    response = server_error(RequestFactory().get("/boards/"))
    body = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong on our side" in body and 'class="brand"' in body and "css/site.css" in body
