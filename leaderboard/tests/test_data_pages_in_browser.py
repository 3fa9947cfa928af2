"""The data release's pages in headless Chromium at 1440 × 900 and on a phone (390 × 844): from a board to
its latest snapshot, the one-liners that load it, its files, every board's snapshots and the columns."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from accounts.models import Team
from leaderboard.columns import ATTEMPT_COLUMNS, board_columns
from leaderboard.snapshots import BoardRef, board_snapshot_make, snapshot_folder
from leaderboard.tests.board_entries import board_entries, finished_entry
from leaderboard.tests.site_pages import PHONE
from leaderboard.tests.test_every_page_in_browser import overflow
from magebench_client.output import size_text
from submissions.models import ModelEntry

pytestmark = pytest.mark.integration

SIZES = [{"width": 1440, "height": 900}, PHONE]


@pytest.fixture
def snapshot(transactional_db, fixture_scenarios, settings, tmp_path):
    settings.MAGEBENCH_SNAPSHOT_ROOT = tmp_path / "snapshots"
    board_entries(Team.objects.create(name="Lab", slug="lab"))
    made = board_snapshot_make(BoardRef("sokoban", "global", "mini", "fixture"),
                               now=datetime(2026, 11, 29, 9, 30, tzinfo=UTC))
    assert made is not None
    return made


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size['width']}x{size['height']}")
def test_a_researcher_goes_from_a_board_to_its_snapshot_and_loads_it_by_the_urls_shown(live_server, site_page,
                                                                                       snapshot, size):
    page, errors = site_page(viewport=size)
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/?suite=fixture")
    link = page.locator("a[data-latest-snapshot]")
    assert link.inner_text() == "citable snapshot 2026-11-29.1"
    link.click()
    page.wait_for_url("**/data/snapshots/sokoban/global/mini/fixture/2026-11-29.1/")
    assert page.locator("[data-content-hash]").inner_text() == snapshot.content_hash
    lines = page.locator("[data-one-liners]").inner_text().splitlines()
    board_url = f"{live_server.url}/data/snapshots/sokoban/global/mini/fixture/2026-11-29.1/data/board.parquet"
    assert f'pd.read_parquet("{board_url}")' in lines
    assert f'datasets.load_dataset("parquet", data_files="{board_url}")' in lines
    assert page.locator("[data-one-liners]").is_visible() and page.locator("[data-csv-note]").is_visible()
    # The URL shown serves the snapshot's very bytes, as pandas would fetch them.
    fetched = page.request.get(board_url)
    assert fetched.ok and fetched.body() == (snapshot_folder(snapshot) / "data/board.parquet").read_bytes()
    assert page.locator("table.data-files tbody tr").count() == 4
    assert page.locator("a[data-snapshot-zip]").is_visible()
    assert overflow(page, "snapshot") is None

    page.get_by_role("link", name="Every snapshot of this board").click()
    page.wait_for_url("**/data/snapshots/#sokoban-global-mini-fixture")
    row = page.locator("table.data-snapshots tbody#sokoban-global-mini-fixture tr")
    assert row.count() == 1 and "2026-11-29.1" in row.inner_text() and row.is_visible()
    assert overflow(page, "snapshots") is None

    page.get_by_role("link", name="What each column means").click()
    page.wait_for_url("**/data/columns/")
    assert page.locator("#board-columns tbody tr").count() == len(board_columns())
    assert page.locator("#attempt-columns tbody tr").count() == len(ATTEMPT_COLUMNS)
    page.locator("#board-tie_p_value").scroll_into_view_if_needed()
    assert page.locator("#board-tie_p_value").is_visible()
    assert overflow(page, "columns") is None
    assert errors == []


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size['width']}x{size['height']}")
def test_every_snapshot_is_one_row_of_one_table_grouped_by_board_with_sizes_written_as_on_the_boards(
        live_server, site_page, snapshot, size):
    # The board changes the next day: a second version of it.
    lab = Team.objects.get(slug="lab")
    finished_entry(lab, ModelEntry.objects.create(team=lab, name="Later-3B"), [70.0] * 10)
    newer = board_snapshot_make(BoardRef("sokoban", "global", "mini", "fixture"),
                                now=datetime(2026, 11, 30, 9, 30, tzinfo=UTC) + timedelta(minutes=1))
    assert newer is not None
    page, errors = site_page(viewport=size)
    page.goto(f"{live_server.url}/data/snapshots/")
    assert page.locator("table").count() == 1 and page.locator("table.data-snapshots thead tr").count() == 1
    heads = page.locator("table.data-snapshots thead th").all_inner_texts()
    assert [h.strip() for h in heads] == ["Board", "Version", "Made (UTC)", "Entries", "Attempts", "Size",
                                          "Content hash (sha256)"]
    rows = page.locator("table.data-snapshots tbody#sokoban-global-mini-fixture tr")
    assert rows.count() == 2
    first, second = (rows.nth(i).locator("td").all_inner_texts() for i in range(2))
    # The board is named once, on its newest version's row, in the table's own type (no heading).
    assert first[0].strip() == "Sokoban · Global · mini suite fixture" and second[0].strip() == ""
    assert page.locator("h2 a.data-board-link").count() == 0
    assert first[1].startswith("2026-11-30.1") and second[1].startswith("2026-11-29.1")
    assert [first[5], second[5]] == [size_text(newer.size), size_text(snapshot.size)]
    link = rows.first.locator("a.data-board-link")
    assert link.is_visible() and link.get_attribute("href") == "/boards/sokoban/global/mini/?suite=fixture"
    assert overflow(page, "snapshots") is None

    rows.nth(1).locator("td").nth(1).locator("a").click()
    page.wait_for_url("**/data/snapshots/sokoban/global/mini/fixture/2026-11-29.1/")
    assert page.locator("h1 small").inner_text() == "Sokoban · Global · mini · suite fixture"
    sizes = page.locator("table.data-files tbody tr td:nth-child(2)").all_inner_texts()
    assert sizes and all(text.endswith((" bytes", " kB", " MB")) for text in sizes)
    assert errors == []
