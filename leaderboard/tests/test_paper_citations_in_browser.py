"""The paper's reported rows in headless Chromium, on a desktop and on a phone: the official board
says what they were measured on and links the paper's table from each row, its Cite block copies the
BibTeX, and the analysis page shows what the paper reports of each row."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from catalogue.citations import PAPER_URL
from catalogue.services import environment_ensure

pytestmark = pytest.mark.integration
VIEWPORTS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def paper_rows(transactional_db) -> None:
    for slug in ("webui", "sokoban", "football"):
        environment_ensure(slug)
    call_command("import_paper_results", stdout=StringIO())


@pytest.mark.parametrize("device", VIEWPORTS)
def test_an_official_board_links_the_paper_from_each_row_and_copies_its_bibtex(live_server, site_page, paper_rows,
                                                                               device) -> None:
    page, errors = site_page(viewport=VIEWPORTS[device], permissions=["clipboard-read", "clipboard-write"])
    page.goto(f"{live_server.url}/boards/sokoban/online/mini/?suite=official")
    expect(page.locator(".reported-scenarios").first).to_have_text(
        "No scenario of suite official is imported here yet: every row is a published number, measured by its "
        "publication on 20 scenarios (mini set).")
    row = page.locator("table.board tbody tr.reported", has_text="GPT-4o")
    link = row.locator("a.reported-table")
    expect(link).to_have_text("paper, Table 1")
    expect(link).to_have_attribute("href", PAPER_URL)
    expect(row).to_contain_text("20 scenarios × 3 repeats")
    row.scroll_into_view_if_needed()
    page.screenshot(path=f"/tmp/shots/paper-board-{device}.png")
    cite = page.locator("#cite")
    cite.scroll_into_view_if_needed()
    expect(cite.get_by_role("heading", name="Cite")).to_be_visible()
    entry = cite.locator("#bibtex-zhang2024magebench")
    expect(entry).to_be_visible()
    expect(entry).to_contain_text("eprint        = {2412.04531}")
    # The entry wraps inside the page: no sideways scrolling on a phone.
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    button = cite.locator("button.copy-bibtex[data-copy='bibtex-zhang2024magebench']")
    expect(button).to_be_visible()
    button.click()
    expect(button).to_have_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == entry.text_content()
    cite.screenshot(path=f"/tmp/shots/paper-cite-{device}.png")
    assert not errors, errors


@pytest.mark.parametrize("device", VIEWPORTS)
def test_the_analysis_page_shows_what_the_paper_reports_of_each_row(live_server, site_page, paper_rows,
                                                                     device) -> None:
    page, errors = site_page(viewport=VIEWPORTS[device])
    page.goto(f"{live_server.url}/boards/sokoban/online/mini/analysis/?suite=official")
    section = page.locator("#reported")
    section.scroll_into_view_if_needed()
    expect(section.get_by_role("heading", name="As reported")).to_be_visible()
    gpt = section.locator("tr[data-model='GPT-4o']")
    expect(gpt.locator("td")).to_have_text(["GPT-4o reported", "53.03", "—", "20 scenarios × 3 repeats", "0.0", "6.7",
                                            "paper, Table 1 · IA/RA: Table 2"])
    # The model's name and its score are on screen side by side, the name on one line, at both sizes.
    name, score = (gpt.locator("td").nth(index).bounding_box() for index in (0, 1))
    assert name is not None and score is not None
    assert name["width"] >= 100 and score["x"] + score["width"] <= VIEWPORTS[device]["width"], (name, score)
    assert gpt.locator(".reported-model").evaluate("name => name.getClientRects().length") == 1
    section.screenshot(path=f"/tmp/shots/paper-analysis-{device}.png")
    assert not errors, errors
