"""With DEBUG on (development, the demo) a missing page is the site's own 404, as in production: never
Django's technical page, which lists every URL pattern of the site."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("debug", [True, False], ids=["debug", "production"])
def test_an_address_no_pattern_matches_shows_the_sites_404_and_no_url_pattern(client, settings, debug):
    settings.DEBUG = debug
    response = client.get("/no/such/page/")
    body = response.content.decode()
    assert response.status_code == 404
    assert "<h1>Nothing here</h1>" in body and 'class="brand"' in body
    assert "URLconf" not in body and "api/v1/" not in body


@pytest.mark.parametrize("debug", [True, False], ids=["debug", "production"])
def test_a_page_whose_view_finds_nothing_shows_the_sites_404(client, settings, debug):
    settings.DEBUG = debug
    response = client.get("/models/987654/")
    body = response.content.decode()
    assert response.status_code == 404
    assert "<h1>Nothing here</h1>" in body and "Raised by" not in body and "URLconf" not in body


def test_an_address_without_its_trailing_slash_is_still_sent_to_the_one_with_it(client, settings):
    settings.DEBUG = True
    response = client.get("/queue")
    assert response.status_code == 301 and response["Location"] == "/queue/"


def test_the_api_still_answers_a_missing_submission_with_json(client, settings):
    settings.DEBUG = True
    response = client.get("/api/v1/submissions/987654/")
    assert response.status_code == 404
    assert response.json() == {"message": "no such submission", "extra": {}}
