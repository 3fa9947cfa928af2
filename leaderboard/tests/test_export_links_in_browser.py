"""A board's per-attempt download links in headless Chromium at 1440 × 900 and on a phone (390 × 844): a file
not built yet opens the site's own page that loads itself again, never a raw API answer."""
from __future__ import annotations

import pytest

from accounts.models import Team
from leaderboard.tests.board_entries import board_entries
from leaderboard.tests.site_pages import PHONE
from submissions import export_files

pytestmark = pytest.mark.integration

SIZES = [{"width": 1440, "height": 900}, PHONE]


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size['width']}x{size['height']}")
def test_a_visitor_following_a_boards_attempts_link_sees_the_sites_page_saying_it_is_being_prepared(
        live_server, site_page, transactional_db, fixture_scenarios, settings, tmp_path, monkeypatch, size):
    settings.MAGEBENCH_EXPORT_ROOT = tmp_path / "exports"
    monkeypatch.setattr(export_files, "_send_build", lambda spec: None)  # no worker: the file stays unbuilt
    board_entries(Team.objects.create(name="Lab", slug="lab"))
    page, errors = site_page(viewport=size)
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/?suite=fixture")
    csv_link = page.locator("a[data-board-attempt-export]", has_text="CSV")
    assert "built on first download" in page.locator("p:has(a[data-board-attempt-export])").inner_text()
    csv_link.click()
    page.wait_for_selector("#export-preparing")
    assert page.locator("h1").inner_text().startswith("Preparing")
    assert page.locator("meta[http-equiv='refresh']").count() == 1
    assert errors == []
