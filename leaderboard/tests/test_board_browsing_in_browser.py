"""Browsing boards and model pages in headless Chromium: search, permalinks, the column picker,
unranked incomplete entries, a model's page and the home page's cards at 1440 px."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from leaderboard.tests.board_entries import Entries, board_entries

pytestmark = pytest.mark.integration
BOARD = "/boards/sokoban/global/mini/?suite=fixture"


@pytest.fixture
def entries(transactional_db, fixture_scenarios, lab) -> Entries:
    return board_entries(lab.team)


def _query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def _models(page) -> list[str]:
    """The models of the rows shown, in order."""
    names = page.locator("table.board tbody tr:visible td:nth-child(2) > a:first-of-type")  # not the entry's #id
    return [name.strip() for name in names.all_inner_texts()]


def test_a_visitor_types_a_search_the_rows_narrow_and_the_url_keeps_it(live_server, site_page, entries):
    page, errors = site_page(viewport={"width": 1400, "height": 900})
    page.goto(live_server.url + BOARD)
    assert _models(page) == ["Vision-7B", "Tiny", "Partial"]
    page.locator("input[data-board-search]").fill("small co")  # no match: organisation is not searched
    expect(page.locator("tr.search-empty")).to_be_visible()
    page.locator("input[data-board-search]").fill("tin")
    expect(page.locator("table.board tbody tr:visible")).to_have_count(1)
    assert _models(page) == ["Tiny"]
    page.wait_for_url("**q=tin**")
    assert "q=tin" in page.locator("a[data-board-export]", has_text="CSV").get_attribute("href")
    # The URL is a permalink: opened again, the server shows the same rows and the box the same text.
    page.goto(page.url)
    assert _models(page) == ["Tiny"] and page.locator("table.board tbody tr").count() == 2  # and the hidden notice
    expect(page.locator("input[data-board-search]")).to_have_value("tin")
    # Widening a search the server applied asks the server again.
    page.locator("input[data-board-search]").fill("")
    expect(page.locator("table.board tbody tr:visible")).to_have_count(3)
    assert "q" not in _query(page)
    assert not errors, errors


def test_opening_a_permalink_restores_its_sort_search_and_columns(live_server, site_page, entries):
    page, errors = site_page(viewport={"width": 1400, "height": 900})
    page.goto(live_server.url + BOARD + "&sort=model&dir=asc&q=other&hide=date,ci")
    assert _models(page) == ["Partial", "Tiny"]
    model = page.locator("table.board th[data-col=model]")
    expect(model).to_have_attribute("aria-sort", "ascending")
    expect(page.locator("table.board th[data-col=date]")).to_be_hidden()
    expect(page.locator("table.board th[data-col=ci]")).to_be_hidden()
    expect(page.locator("table.board tbody tr:visible td.date").first).to_be_hidden()
    expect(page.locator("table.board th[data-col=score]")).to_be_visible()
    expect(page.locator(".column-picker input[value=date]")).not_to_be_checked()
    expect(page.locator(".column-picker input[value=team]")).to_be_checked()
    # Reversing the sort keeps the rest of the view in the URL.
    model.click()
    expect(model).to_have_attribute("aria-sort", "descending")
    assert _models(page) == ["Tiny", "Partial"]
    query = _query(page)
    # The hidden columns in the table's order (the interval before the date).
    assert (query["sort"], query["dir"], query["q"], query["hide"]) == (["model"], ["desc"], ["other"], ["ci,date"])
    assert not errors, errors


def test_the_column_picker_hides_a_column_and_a_filter_keeps_the_view(live_server, site_page, entries):
    page, errors = site_page(viewport={"width": 1400, "height": 900})
    page.goto(live_server.url + BOARD)
    se = page.locator("table.board th[data-col=se]")
    expect(se).to_be_visible()
    page.locator(".column-picker summary").click()
    page.locator(".column-picker input[value=se]").uncheck()
    expect(se).to_be_hidden()
    assert page.locator("table.board tbody td.col-hidden").count() == 3
    page.wait_for_url("**hide=se**")
    team = page.locator("table.board th[data-col=team]")
    team.click()
    expect(team).to_have_attribute("aria-sort", "ascending")
    team.click()
    page.wait_for_url("**dir=desc**")
    assert _models(page) == ["Tiny", "Partial", "Vision-7B"]  # Other before Lab; ties keep the ranking's order
    # Submitting a filter reloads the page with the sort and the hidden columns carried along.
    page.locator("form.filters input[name=open]").check()
    page.locator("form.filters button").click()
    page.wait_for_url("**open=1**")
    query = _query(page)
    assert (query["sort"], query["dir"], query["hide"]) == (["team"], ["desc"], ["se"])
    assert _models(page) == ["Vision-7B"]
    expect(se).to_be_hidden()
    picker = page.locator(".column-picker input[value=se]")
    expect(picker).not_to_be_checked()
    page.locator(".column-picker summary").click()
    picker.check()
    expect(se).to_be_visible()
    assert "hide" not in _query(page)
    assert not errors, errors


def test_an_incomplete_entry_is_marked_and_unranked_until_a_visitor_ranks_it(live_server, site_page, entries):
    page, errors = site_page(viewport={"width": 1400, "height": 900})
    page.goto(live_server.url + BOARD)
    expect(page.locator("table.board th[data-col=score]")).to_have_attribute("aria-sort", "descending")
    expect(page.locator("table.board th[data-col=score] .arrow")).to_have_text(" ↓")
    last = page.locator("table.board tbody tr:visible").last
    expect(last).to_contain_text("Partial")
    expect(last).to_contain_text("incomplete (2 of 10 scenarios)")
    expect(last.locator("td").first).to_have_text("–")
    assert page.locator("table.board tbody tr:visible td:first-child").all_inner_texts() == ["1", "2", "–"]
    page.locator("form.filters input[name=incomplete]").check()
    page.locator("form.filters button").click()
    page.wait_for_url("**incomplete=1**")
    assert _models(page) == ["Partial", "Vision-7B", "Tiny"]
    assert page.locator("table.board tbody tr:visible td:first-child").all_inner_texts() == ["1", "2", "3"]
    assert not errors, errors


def test_a_visitor_opens_a_models_page_from_the_board_and_sees_its_public_entries_only(live_server, site_page,
                                                                                        entries):
    page, errors = site_page(viewport={"width": 1400, "height": 900})
    outside: list[str] = []
    site = urlsplit(live_server.url).netloc
    page.on("request", lambda r: outside.append(r.url)
            if urlsplit(r.url).scheme in ("http", "https") and urlsplit(r.url).netloc != site else None)
    page.goto(live_server.url + BOARD)
    page.locator("table.board tbody td:nth-child(2) > a:first-of-type", has_text="Vision-7B").click()
    page.wait_for_url(f"**/models/{entries.vision.id}/")
    meta = page.locator("#model-meta")
    for text in ("Acme", "7B", "yes", "apache-2.0", "https://example.org/vision-7b", "Lab"):
        expect(meta).to_contain_text(text)
    rows = page.locator("#model-entries tbody tr")
    expect(rows).to_have_count(1)  # the private Online entry and the hidden one are the team's own business
    expect(rows.first).to_have_attribute("data-submission", str(entries.full.id))
    expect(rows.first).to_contain_text("60.00")
    expect(page.locator("#model-chart .main-svg").first).to_be_attached()
    rows.first.locator("a", has_text="Global · mini · fixture").click()
    page.wait_for_url("**/boards/sokoban/global/mini/?suite=fixture")
    assert not errors, errors
    assert not outside, outside


def test_the_home_pages_cards_show_every_column_at_1440_pixels(live_server, site_page, entries, tmp_path):
    page, errors = site_page(viewport={"width": 1440, "height": 900})
    page.goto(live_server.url + "/")
    cards = page.locator(".grid .card")
    assert cards.count() >= 4
    clipped = page.evaluate("""() => Array.from(document.querySelectorAll('.grid .card'))
        .filter((card) => card.scrollWidth > card.clientWidth + 1)
        .map((card) => card.querySelector('h3').textContent.trim())""")
    page.screenshot(path=str(tmp_path / "home-1440.png"), full_page=True)  # to look at when it fails
    assert clipped == [], clipped
    assert not errors, errors
