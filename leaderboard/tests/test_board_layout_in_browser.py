"""Boards in headless Chromium: on a phone (390 × 844) and a wide screen (1440 × 900) every board
shows its first row's model and score on screen without scrolling sideways, the rank and model stay
put while the other columns scroll, the interval chart fits the screen, and the search box of a
permalinked search keeps its focus and every key typed."""
from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.models import Team
from catalogue.models import Scenario
from evaluators.base import all_plugins
from leaderboard.tests.board_entries import Entries, board_entries
from leaderboard.tests.site_pages import PHONE
from submissions.models import Attempt, ModelEntry, Submission
from submissions.services import submission_result_rebuild

pytestmark = pytest.mark.integration

WIDE = {"width": 1440, "height": 900}
#: Every board the demo fills: each environment's flows, mini and full, on the fixture suite.
BOARDS = [(plugin.slug, flow, subset) for plugin in all_plugins() for flow in plugin.flows
          for subset in ("mini", "full")]
LONG_NAME = "Qwen2-VL-72B-Instruct-AWQ-long-context-preview"

# Where the first row's model and score cells are, and how wide the page is against the window.
CELLS_JS = """() => {
  const table = document.querySelector("table.board[data-board]");
  const headers = Array.from(table.tHead.rows[0].cells);
  const score = headers.findIndex((th) => th.dataset.col === "score");
  const model = headers.findIndex((th) => th.dataset.col === "model");
  const se = headers.findIndex((th) => th.dataset.col === "se");
  const row = Array.from(table.tBodies[0].rows).find((r) => r.cells.length > 1 && !r.hidden);
  // Down the page to the row (the filters come first), never sideways.
  window.scrollTo(0, window.scrollY + row.getBoundingClientRect().top - 40);
  const box = (cell) => { const b = cell.getBoundingClientRect(); return [b.left, b.right, b.top, b.bottom]; };
  return { score: box(row.cells[score]), model: box(row.cells[model]), se: box(row.cells[se]),
           text: row.cells[score].textContent.trim(),
           width: window.innerWidth, height: window.innerHeight,
           page: document.documentElement.scrollWidth,
           scroller: table.parentElement.scrollWidth - table.parentElement.clientWidth };
}"""


def _finished(team: Team, name: str, env: str, flow: str, subset: str, scores: list[float]) -> None:
    model, _ = ModelEntry.objects.get_or_create(team=team, name=name)
    submission = Submission.objects.create(team=team, model=model, environment_id=env, flow=flow, subset=subset,
                                           suite="fixture", status=Submission.Status.COMPLETED, is_public=True,
                                           settings={"repeats": 1})
    scenarios = Scenario.objects.filter(environment_id=env, suite="fixture", **Scenario.subset_filter(subset))
    for index, scenario in enumerate(scenarios.order_by("key")):
        Attempt.objects.create(submission=submission, scenario=scenario, repeat=0, status=Attempt.Status.SCORED,
                               score=scores[index % len(scores)])
    submission_result_rebuild(submission_id=submission.id)


@pytest.fixture
def every_board(transactional_db, fixture_scenarios) -> list[tuple[str, str, str]]:
    """Two entries on every board, the leader with a long model name."""
    team = Team.objects.create(name="Vision Research Lab", slug="vision")
    for env, flow, subset in BOARDS:
        assert Scenario.objects.filter(environment_id=env, suite="fixture", **Scenario.subset_filter(subset)).exists()
        _finished(team, LONG_NAME, env, flow, subset, [80.0])
        _finished(team, "Tiny", env, flow, subset, [10.0, 30.0])
    return BOARDS


def _inside(box: list[float], cells: dict[str, Any]) -> bool:
    left, right, top, bottom = box
    return left >= 0 and right <= cells["width"] and top >= 0 and bottom <= cells["height"]


@pytest.mark.parametrize("viewport", [PHONE, WIDE], ids=["390px", "1440px"])
def test_every_board_shows_its_first_models_score_on_screen_without_scrolling_sideways(
        live_server, site_page, every_board, viewport):
    page, errors = site_page(viewport=viewport)
    for env, flow, subset in every_board:
        page.goto(f"{live_server.url}/boards/{env}/{flow}/{subset}/?suite=fixture")
        cells = page.evaluate(CELLS_JS)
        board = f"{env}/{flow}/{subset} at {viewport['width']}px"
        assert cells["text"] == "80.00", board  # the leader's mean
        assert _inside(cells["score"], cells), (board, cells)
        assert _inside(cells["model"], cells), (board, cells)
        assert _inside(cells["se"], cells), (board, "the score's ± SE beside it", cells)
        assert cells["page"] <= cells["width"], (board, cells)  # the page itself never scrolls sideways
        hint = page.locator(".board-scroll-hint")
        if viewport is PHONE:
            # The other columns scroll inside the table's box, and the page says so.
            assert cells["scroller"] > 0, board
            expect(hint).to_be_visible()
            page.locator(".table-scroll").evaluate("(box) => { box.scrollLeft = box.scrollWidth; }")
            scrolled = page.evaluate(CELLS_JS)
            assert _inside(scrolled["model"], scrolled), (board, "the model column stays put", scrolled)
            assert scrolled["score"][0] < cells["score"][0], (board, "the score column scrolled away", scrolled)
        else:
            expect(hint).to_be_hidden()
    assert not errors, errors


def test_the_interval_chart_draws_each_entry_with_its_whisker_and_fits_a_phone(live_server, site_page, every_board):
    page, errors = site_page(viewport=PHONE)
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/?suite=fixture")
    expect(page.locator("#rank-method")).to_contain_text("share a rank")
    chart = page.locator("#board-intervals-chart")
    chart.scroll_into_view_if_needed()
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=15_000)
    # One marker per entry, with its whisker (plotly draws each as a path in the error-bar group).
    expect(chart.locator(".scatterlayer .point")).to_have_count(2)
    expect(chart.locator(".errorbar")).to_have_count(2)
    box = chart.locator(".main-svg").first.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert not errors, errors


@pytest.fixture
def entries(transactional_db, fixture_scenarios, lab) -> Entries:
    return board_entries(lab.team)


def _shown(page: Any) -> list[str]:
    return [name.strip() for name in
            page.locator("table.board tbody tr:visible td:nth-child(2) > a:first-of-type").all_inner_texts()]


def test_typing_over_a_permalinked_search_keeps_the_focus_every_key_and_fetches_the_rows(
        live_server, site_page, entries):
    page, errors = site_page(viewport=WIDE)
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/?suite=fixture&q=tiny")
    assert _shown(page) == ["Tiny"]
    page.evaluate("window.__samePage = true")
    box = page.locator("input[data-board-search]")
    box.click()
    page.keyboard.press("End")
    # Backspace widens the search past what the server filtered by; more keys follow at once.
    for key in ("Backspace", "Backspace", "Backspace", "Backspace"):
        page.keyboard.press(key)
    page.keyboard.type("vis", delay=30)
    expect(box).to_have_value("vis")
    expect(box).to_be_focused()
    names = page.locator("table.board tbody tr:visible td:nth-child(2) > a:first-of-type")
    expect(names).to_have_text(["Vision-7B"])  # a row the server had left out: fetched, not reloaded
    assert page.evaluate("window.__samePage") is True
    page.wait_for_url("**q=vis**")
    page.keyboard.press("Backspace")
    page.keyboard.press("Backspace")
    page.keyboard.press("Backspace")
    expect(box).to_have_value("")
    expect(names).to_have_text(["Vision-7B", "Tiny", "Partial"])
    page.keyboard.type("t")
    expect(box).to_have_value("t")
    expect(names).to_have_text(["Tiny", "Partial"])
    expect(box).to_be_focused()
    assert page.evaluate("window.__samePage") is True
    assert not errors, errors
