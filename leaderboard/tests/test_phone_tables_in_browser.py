"""Every kind of table on a phone (390 × 844) and a wide screen (1440 × 900), in headless Chromium: each shows
its row's name whole (wrapped if it must, never cut down to a sliver) and its main number on screen without
scrolling sideways; a board comes before its long explanations on a phone; the paper's notes wrap.

The site is the runs the platform played once for the module (``played_site``), one model renamed long,
and the paper's reported rows on the official boards.
"""
from __future__ import annotations

from io import StringIO
from typing import Any, NamedTuple

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from leaderboard.tests.site_pages import PHONE
from leaderboard.tests.test_board_layout_in_browser import WIDE
from submissions.models import ModelEntry, Submission

pytestmark = pytest.mark.integration

LONG_NAME = "Qwen2-VL-72B-Instruct-AWQ-long-context-preview"
#: The narrowest a name's column may be when its name is longer (CSS pixels, padding included): 8rem.
NAME_MIN = 128


class Table(NamedTuple):
    """A kind of table: where it is, the columns (from 1) of the row's name and of its main number, and
    what else in the row must be on screen beside them (CSS selectors within the row)."""

    kind: str
    path: str
    selector: str
    name: int
    number: int
    also: tuple[str, ...] = ()


def tables(played: dict[str, Submission]) -> list[Table]:
    rambling = played["rambling"]
    return [
        Table("home overview", "/", "table.overview", 1, 2),
        Table("home across environments", "/", "#across-table", 1, 2, also=("td.across-mean",)),
        Table("home board card", "/", "section .card table.board[data-pin='rank-name']", 2, 3),
        Table("board", "/boards/sokoban/online/mini/?suite=fixture", "table.board[data-board]", 2, 3),
        Table("official board", "/boards/sokoban/global/mini/?suite=official", "table.board[data-board]", 2, 3),
        Table("cost", "/boards/sokoban/online/mini/cost/?suite=fixture", "table.cost-table", 1, 2),
        Table("analysis errors", "/boards/sokoban/online/mini/analysis/?suite=fixture", "table.analysis-errors", 1, 2),
        Table("analysis matrix", "/boards/sokoban/online/mini/analysis/?suite=fixture", "table.matrix", 1, 2),
        Table("official analysis", "/boards/sokoban/global/mini/analysis/?suite=official", "table.analysis-reported",
              1, 2),
        Table("compare", "/boards/sokoban/online/mini/compare/?suite=fixture", "table.deltas", 1, 2),
        Table("queue", "/queue/", "table.queue", 2, 3, also=(".status", "td.queue-board a")),
        Table("model entries", f"/models/{rambling.model_id}/", "table.model-entries", 1, 2),
        Table("submission attempts", f"/submissions/{rambling.id}/", "table.attempts", 1, 2, also=("a.replay-link",)),
        Table("submission scenarios", f"/submissions/{rambling.id}/", "table.scenarios", 1, 2),
        Table("team's submissions", f"/teams/{rambling.team.slug}/", "table.team-submissions", 1, 2),
    ]


# The first row's name and main number cells, the name's own width on one line, and the table's box.
CELLS_JS = """([selector, name, number, also]) => {
  const table = document.querySelector(selector);
  if (!table) return null;
  const row = Array.from(table.tBodies[0].rows).find((r) => r.cells.length > 1 && !r.hidden);
  if (!row) return null;
  table.parentElement.scrollLeft = 0;
  window.scrollTo(0, window.scrollY + row.getBoundingClientRect().top - 60);
  const box = (cell) => { const b = cell.getBoundingClientRect(); return [b.left, b.right, b.top, b.bottom]; };
  const nameCell = row.cells[name - 1];
  const probe = document.createElement("span");
  probe.style.cssText = "position:absolute;visibility:hidden;white-space:nowrap";
  // The name itself: the cell's first link (a model's page, a board), else its text; badges may wrap under it.
  probe.textContent = (nameCell.querySelector("[data-name]") || nameCell.querySelector("a") || nameCell)
    .textContent.trim();
  nameCell.appendChild(probe);
  const oneLine = probe.getBoundingClientRect().width;
  probe.remove();
  const style = getComputedStyle(nameCell);
  const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
  return { name: box(nameCell), number: box(row.cells[number - 1]), nameText: nameCell.innerText.trim(),
           numberText: row.cells[number - 1].innerText.trim(), oneLine: oneLine + padding,
           clipped: nameCell.scrollWidth > nameCell.clientWidth + 1,
           also: also.map((part) => { const node = row.querySelector(part); return [part, node && box(node)]; }),
           // A table wider than its box says so: the hint to swipe, shown just before the box or the table.
           scrolls: table.parentElement.scrollWidth > table.parentElement.clientWidth + 1,
           hinted: [table.parentElement.previousElementSibling, table.previousElementSibling].some(
             (hint) => hint && hint.matches(".board-scroll-hint") && hint.getClientRects().length > 0),
           width: window.innerWidth, height: window.innerHeight, page: document.documentElement.scrollWidth };
}"""


@pytest.fixture
def site(played_site: dict[str, Submission]) -> dict[str, Submission]:
    ModelEntry.objects.filter(id=played_site["rambling"].model_id).update(name=LONG_NAME)
    call_command("import_paper_results", stdout=StringIO())
    return played_site


def _problems(cells: dict[str, Any], table: Table) -> list[str]:
    def inside(box: list[float]) -> bool:
        return box[0] >= 0 and box[1] <= cells["width"] + 0.5 and box[2] >= 0 and box[3] <= cells["height"]

    problems = []
    if not cells["nameText"]:
        problems.append("the name cell is empty")
    column = cells["name"][1] - cells["name"][0]
    if column + 0.5 < min(cells["oneLine"], NAME_MIN):
        problems.append(f"the name's column is {column:.0f}px for a name of {cells['oneLine']:.0f}px")
    if cells["clipped"]:
        problems.append("the name is cut")
    if not inside(cells["name"]):
        problems.append(f"the name is off screen at {cells['name']}")
    if not inside(cells["number"]):
        problems.append(f"the main number {cells['numberText']!r} is off screen at {cells['number']}")
    for part, box in cells["also"]:
        if box is None or not inside(box):
            problems.append(f"{part} is off screen at {box}")
    if cells["scrolls"] and not cells["hinted"]:
        problems.append("the table scrolls sideways with no hint to swipe it")
    if cells["page"] > cells["width"]:
        problems.append(f"the page is {cells['page']}px wide")
    return [f"{table.kind} ({table.selector}): {problem}" for problem in problems]


@pytest.mark.parametrize("viewport", [PHONE, WIDE], ids=["390px", "1440px"])
def test_every_kind_of_table_shows_its_rows_name_and_main_number_without_scrolling_sideways(
        live_server, site_page, site, viewport):
    page, errors = site_page(viewport=viewport)
    problems: list[str] = []
    for table in tables(site):
        page.goto(live_server.url + table.path)
        cells = page.evaluate(CELLS_JS, [table.selector, table.name, table.number, list(table.also)])
        assert cells is not None, f"{table.kind}: no {table.selector} with a row at {table.path}"
        problems += _problems(cells, table)
    assert not problems, "\n".join(problems)
    assert not errors, errors


@pytest.mark.parametrize("viewport", [PHONE, WIDE], ids=["390px", "1440px"])
def test_a_boards_first_row_is_on_the_first_screen_before_the_explanations(live_server, site_page, site, viewport):
    page, errors = site_page(viewport=viewport)
    for path in ("/boards/sokoban/online/mini/?suite=fixture", "/boards/sokoban/global/mini/?suite=official"):
        page.goto(live_server.url + path)
        row = page.locator("table.board[data-board] tbody tr").first.bounding_box()
        assert row is not None and row["y"] + row["height"] <= viewport["height"], (path, row)
        footnote = page.locator("#rank-method").bounding_box()
        assert footnote is not None and footnote["y"] > row["y"], path
        if viewport is PHONE:  # the text explaining the board comes after it
            about = page.locator(".board-page > p", has_text="Mean over scenarios").bounding_box()
            assert about is not None and about["y"] > row["y"], (path, about, row)
    assert not errors, errors


def test_the_paper_rows_notes_wrap_within_a_wide_screen(live_server, site_page, site):
    page, errors = site_page(viewport=WIDE)
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/?suite=official")
    note = page.locator("table.board .reported-note").first
    box = note.bounding_box()
    assert box is not None and box["x"] + box["width"] <= WIDE["width"], box
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDE["width"]
    scroller = page.locator(".table-scroll").first.evaluate("(box) => box.scrollWidth - box.clientWidth")
    assert scroller == 0, "the board scrolls sideways on a wide screen"
    assert not errors, errors


@pytest.mark.parametrize("viewport", [PHONE, WIDE], ids=["390px", "1440px"])
def test_the_interval_charts_labels_name_each_entry_whole_with_no_placeholder_rank(
        live_server, site_page, site, viewport):
    page, errors = site_page(viewport=viewport)
    page.goto(f"{live_server.url}/boards/sokoban/online/mini/?suite=fixture")
    chart = page.locator("#board-intervals-chart")
    chart.scroll_into_view_if_needed()
    expect(chart.locator(".ytick text").first).to_be_visible()
    labels = chart.locator(".ytick text").all_text_contents()
    # The Oracle agent is an unranked baseline: its label is its name (and team, where there is room).
    oracle = [label for label in labels if label.startswith("Oracle agent")]
    assert len(oracle) == 1 and "…" not in oracle[0], labels
    assert not [label for label in labels if label.startswith("–")], labels
    assert not errors, errors


def test_the_official_boards_every_column_has_a_header(live_server, site_page, site):
    page, errors = site_page(viewport=WIDE)
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/?suite=official")
    headers = page.locator("table.board[data-board] thead th").all_inner_texts()
    assert headers and all(header.strip() for header in headers), headers
    expect(page.locator("table.board[data-board] tbody tr.reported").first).to_contain_text("not run here")
    assert not errors, errors


@pytest.mark.parametrize("viewport", [PHONE, WIDE], ids=["390px", "1440px"])
def test_a_submissions_attempts_fill_every_cell_and_its_progress_card_keeps_its_own_height(
        live_server, site_page, site, viewport):
    page, errors = site_page(viewport=viewport)
    page.goto(f"{live_server.url}/submissions/{site['oracle'].id}/")
    cells = page.locator("table.attempts tbody tr").first.locator("td").all_inner_texts()
    assert cells and all(cell.strip() for cell in cells), cells  # no invalid action reads "—", not a blank
    progress = page.locator(".card", has=page.get_by_role("heading", name="Progress")).bounding_box()
    settings = page.locator(".card", has=page.get_by_role("heading", name="Settings")).bounding_box()
    assert progress is not None and settings is not None
    if viewport is WIDE:  # side by side: the short card is not stretched to its neighbour's height
        assert progress["y"] == settings["y"] and progress["height"] < settings["height"], (progress, settings)
    assert not errors, errors


@pytest.mark.parametrize("viewport", [PHONE, WIDE], ids=["390px", "1440px"])
def test_a_replays_model_calls_read_as_text_with_latency_and_tokens_on_screen(live_server, site_page, site, viewport):
    touch = {"has_touch": True, "is_mobile": True} if viewport is PHONE else {}
    page, errors = site_page(viewport=viewport, **touch)
    attempt = site["oracle"].attempts.order_by("-model_calls", "id").first()
    assert attempt is not None
    page.goto(f"{live_server.url}/attempts/{attempt.id}/replay/")
    row = page.locator("#call-rows tr").first
    row.scroll_into_view_if_needed()
    # A call that parsed twenty actions, as a planning model's reply does: a few lines of text, not twenty.
    parsed = row.locator("td.parsed")
    lines = parsed.evaluate("""(cell) => {
      cell.textContent = Array(20).fill("Right").join(", ");
      return cell.getBoundingClientRect().height / parseFloat(getComputedStyle(cell).lineHeight);
    }""")
    assert lines < 6, lines
    for cell in row.locator("td.num").all():
        box = cell.bounding_box()
        assert box is not None and 0 <= box["x"] and box["x"] + box["width"] <= viewport["width"], box
    # The arrow keys step the replay only where there is a keyboard.
    hint = page.locator(".replay-steps", has_text="to step")
    if viewport is PHONE:
        expect(page.get_by_text("← / → to step")).to_be_hidden()
    else:
        expect(hint.get_by_text("← / → to step")).to_be_visible()
    assert not errors, errors
