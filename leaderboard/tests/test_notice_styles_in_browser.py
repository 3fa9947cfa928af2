"""Notices on a board in headless Chromium at 1440 × 900 and on a phone (390 × 844): good news (every checked
page can be evaluated as intended) reads as information, in a style of its own, not in the warning colours
of a flagged page."""
from __future__ import annotations

import pytest

from catalogue.models import Scenario
from leaderboard.tests.site_pages import PHONE

pytestmark = pytest.mark.integration

SIZES = [{"width": 1440, "height": 900}, PHONE]
STYLE_JS = """(selector) => { const s = getComputedStyle(document.querySelector(selector));
  return [s.backgroundColor, s.borderLeftColor]; }"""


@pytest.fixture
def checked_pages(transactional_db, fixture_scenarios) -> str:
    """Every WebUI page checked at import; one page of the full set only is flagged. Its key."""
    pages = Scenario.objects.filter(environment_id="webui", suite="fixture")
    flagged = pages.filter(in_mini=False).order_by("key").first()
    assert flagged is not None
    for page in pages:
        page.tags = {**page.tags, "page_check": "flagged" if page.id == flagged.id else "ok"}
        page.save(update_fields=["tags"])
    return flagged.key


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size['width']}x{size['height']}")
def test_good_news_about_the_checked_pages_is_not_shown_in_the_warning_style(live_server, site_page, checked_pages,
                                                                            size):
    page, errors = site_page(viewport=size)
    page.goto(f"{live_server.url}/boards/webui/global/full/?suite=fixture")
    notice = page.locator("#page-check-notice")
    assert checked_pages in notice.inner_text()
    warning = page.evaluate(STYLE_JS, "#page-check-notice")

    page.goto(f"{live_server.url}/boards/webui/global/mini/?suite=fixture")
    notice = page.locator("#page-check-notice")
    assert notice.inner_text().startswith("All 3 checked pages can be evaluated as intended.")
    assert notice.is_visible()
    good = page.evaluate(STYLE_JS, "#page-check-notice")
    # Neither its background nor its edge is the warning's.
    assert good[0] != warning[0] and good[1] != warning[1]
    assert errors == []
