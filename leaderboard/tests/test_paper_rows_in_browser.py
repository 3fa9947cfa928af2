"""The paper's reported rows and a board's per-attempt downloads, as a visitor sees them in headless
Chromium on a phone (390 × 844) and a wide screen (1440 × 900)."""
from __future__ import annotations

import csv
import io
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from accounts.models import Team
from leaderboard.tests.site_pages import PHONE
from leaderboard.tests.test_board_layout_in_browser import WIDE, _finished

pytestmark = pytest.mark.integration


@pytest.fixture
def paper_and_entries(transactional_db, fixture_scenarios) -> None:
    team = Team.objects.create(name="Vision Research Lab", slug="vision")
    _finished(team, "Vision-7B", "sokoban", "global", "mini", [80.0, 40.0])
    call_command("import_paper_results", stdout=StringIO())  # the shipped copy of the paper's tables


@pytest.mark.parametrize("viewport", [PHONE, WIDE], ids=["390px", "1440px"])
def test_a_visitor_finds_the_papers_rows_on_the_official_board_marked_reported_and_unranked(
        live_server, site_page, paper_and_entries, viewport):
    page, errors = site_page(viewport=viewport)
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/")
    # The fixture suite is the default; the official one is offered beside it.
    page.get_by_role("link", name="official", exact=True).click()
    page.wait_for_url("**suite=official**")
    row = page.locator("table.board tbody tr", has_text="GPT-4o").first
    expect(row).to_be_visible()
    expect(row).to_contain_text("reported")
    expect(row).to_contain_text("46.09")  # Table 1, Sokoban Global, mini
    rank = row.locator("td").first.inner_text().strip()
    assert rank in ("", "–", "—"), rank  # never ranked
    box = row.locator("td").nth(2).bounding_box()
    assert box is not None and box["x"] + box["width"] <= viewport["width"], box  # its score is on screen
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert not errors, errors


@pytest.mark.parametrize("viewport", [PHONE, WIDE], ids=["390px", "1440px"])
def test_a_visitor_downloads_a_boards_attempts_one_row_each_from_its_links(
        live_server, site_page, paper_and_entries, exports_built_when_sent, viewport):
    page, errors = site_page(viewport=viewport)
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/?suite=fixture")
    link = page.get_by_role("link", name="attempts as CSV")
    link.scroll_into_view_if_needed()
    expect(link).to_be_visible()
    for name in ("attempts as Parquet", "attempts' trajectories as a zip",
                 "attempts' trajectories with frames as a zip"):
        expect(page.get_by_role("link", name=name)).to_be_visible()
    # A file not built yet answers a page that comes back for it: the download follows on its own.
    with page.expect_download() as download:
        link.click()
    rows = list(csv.DictReader(io.StringIO(download.value.path().read_text(encoding="utf-8"))))
    assert rows and {row["model"] for row in rows} == {"Vision-7B"}
    assert sorted(float(row["score"]) for row in rows)[-1] == 80.0
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert not errors, errors
