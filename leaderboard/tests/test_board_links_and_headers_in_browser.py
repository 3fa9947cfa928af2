"""In headless Chromium: a board's model cell links to the entry's submission, and the analysis
matrix's vertical scenario headers draw Chinese and Japanese names upright, not upside-down."""
from __future__ import annotations

import pytest

from leaderboard.tests.test_submission_page_in_browser import SIZES, _finished, _webui_details
from submissions.models import Submission

pytestmark = pytest.mark.integration


@pytest.fixture
def webui_entry(transactional_db, fixture_scenarios) -> Submission:
    return _finished("webui", "Writer", lambda i, r: 40.0 + 10.0 * i + r, details=_webui_details)


@pytest.mark.parametrize("size", SIZES)
def test_a_boards_model_cell_links_to_the_entrys_submission(live_server, site_page, webui_entry, size):
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/boards/webui/global/mini/?suite=fixture")
    heads = page.locator("table.board[data-board] thead th").evaluate_all("(ths) => ths.map((th) => th.dataset.col)")
    model_cell = page.locator("table.board[data-board] tbody tr").first.locator("td").nth(heads.index("model"))
    link = model_cell.locator(f"a[href='/submissions/{webui_entry.id}/']")
    assert link.inner_text() == f"#{webui_entry.id}" and link.is_visible()
    link.click()
    page.wait_for_url(f"**/submissions/{webui_entry.id}/")
    assert "Writer" in page.locator("h1").inner_text()
    assert errors == []


@pytest.mark.parametrize("size", SIZES)
def test_chinese_and_japanese_scenario_headers_are_drawn_upright(live_server, site_page, webui_entry, size):
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/boards/webui/global/mini/analysis/?suite=fixture#matrix")
    header = page.locator("table.matrix th.scenario[title='任务清单'] span")
    header.wait_for()
    style = header.evaluate("(span) => { const s = getComputedStyle(span);"
                            " return [s.writingMode, s.textOrientation, s.transform]; }")
    assert style[0] == "vertical-rl" and style[1] in ("mixed", "upright") and style[2] == "none"
    # Upright CJK in a vertical line: the glyphs stack, so the header is taller than it is wide, and
    # no ancestor turns it round either.
    box = header.bounding_box()
    assert box is not None and box["height"] > box["width"]
    turned = header.evaluate("(span) => { const out = []; for (let e = span; e; e = e.parentElement) {"
                             " const t = getComputedStyle(e).transform; if (t !== 'none') out.push(t); } return out; }")
    assert turned == []
    assert errors == []
