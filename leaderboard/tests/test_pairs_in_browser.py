"""A board's matrix of all pairs in headless Chromium at desktop and phone sizes: reached from the
board, coloured by sign and significance, sorted on request, each cell opening its two-model
comparison; on a phone the matrix scrolls in its own box with the entries' names kept in view."""
from __future__ import annotations

import pytest

from accounts.models import Team
from leaderboard.tests.board_entries import finished_entry
from submissions.models import ModelEntry, Submission

pytestmark = pytest.mark.integration

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def eight_entries(transactional_db, fixture_scenarios) -> dict[str, Submission]:
    """Eight entries on the Sokoban Global mini board (10 scenarios): "Steady" scores 50 + i on
    scenario i; "Model k" scores k × 10 + i, so the gaps to Steady are constant (every test
    separates them) except for Model 5, which is level with it."""
    team = Team.objects.create(name="Lab", slug="lab")
    entries = {}
    for name, offset in [("Steady", 50.0)] + [(f"Model {k}", 10.0 * k) for k in (1, 2, 3, 5, 6, 7, 8)]:
        model = ModelEntry.objects.create(team=team, name=name)
        entries[name] = finished_entry(team, model, [offset + i for i in range(10)])
    return entries


@pytest.mark.parametrize("size", SIZES)
def test_a_visitor_opens_every_pair_from_the_board_and_a_cell_opens_its_comparison(
        live_server, site_page, eight_entries, size):
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/?suite=fixture")
    page.get_by_role("link", name="All pairs").first.click()
    page.wait_for_url("**/pairs/**")
    rows = page.locator("table.pairs tbody th.row-name a").all_inner_texts()
    assert rows == ["Model 8", "Model 7", "Model 6", "Steady", "Model 5", "Model 3", "Model 2", "Model 1"]
    # Model 8 − Model 1: 70 on every scenario, separable; Steady − Model 5: level, not separable.
    strong = page.locator("table.pairs tbody tr").nth(0).locator("td.pair").nth(7)
    assert strong.get_attribute("class") == "pair ahead sig"
    assert strong.locator(".diff").inner_text() == "+70.00"
    assert strong.evaluate("c => getComputedStyle(c.querySelector('.diff')).fontWeight") == "700"
    level = page.locator("table.pairs tbody tr").nth(3).locator("td.pair").nth(4)
    assert level.get_attribute("class") == "pair level"
    assert level.locator(".diff").inner_text() == "0.00"
    weak_colour = level.evaluate("c => getComputedStyle(c).backgroundColor")
    behind = page.locator("table.pairs tbody tr").nth(7).locator("td.pair").nth(0)
    assert behind.get_attribute("class") == "pair behind sig"
    colours = {strong.evaluate("c => getComputedStyle(c).backgroundColor"),
               behind.evaluate("c => getComputedStyle(c).backgroundColor"), weak_colour}
    assert len(colours) == 3

    # Sorted by name on request: rows and columns alike.
    page.select_option("#pairs-order", "name")
    page.get_by_role("button", name="Sort").click()
    page.wait_for_url("**order=name**")
    assert page.locator("table.pairs tbody th.row-name a").all_inner_texts()[:2] == ["Model 1", "Model 2"]
    assert page.locator("table.pairs thead th.pair-col").first.inner_text() == "Model 1"

    if size == "phone":
        box = page.locator("#pairs")
        assert box.evaluate("b => b.scrollWidth > b.clientWidth")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= SIZES[size]["width"]
        box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
        page.wait_for_function("() => document.getElementById('pairs').scrollLeft > 0")
        name = page.locator("table.pairs tbody th.row-name").first.bounding_box()
        frame = box.bounding_box()
        assert name is not None and frame is not None
        # Still at the box's left edge, wide enough to read, after the cells scrolled beneath it.
        assert abs(name["x"] - frame["x"]) <= 2 and name["x"] + name["width"] <= SIZES[size]["width"]
        assert name["width"] >= 100
        assert page.locator("table.pairs tbody th.row-name a").first.bounding_box()["height"] < 50
        box.evaluate("b => { b.scrollLeft = 0; }")
    page.screenshot(path=f"/tmp/shots/pairs-{size}.png", full_page=True)

    first = page.locator("table.pairs tbody tr").nth(0)
    a = first.locator("th.row-name a").inner_text()
    # The first row's own entry is its first column: the third column is another entry.
    cell = first.locator("td.pair").nth(2).locator("a")
    b = page.locator("table.pairs thead th.pair-col").nth(2).inner_text()
    cell.click()
    page.wait_for_url("**/compare/**")
    assert page.locator("#compare-a option:checked").inner_text() == a
    assert page.locator("#compare-b option:checked").inner_text() == b
    assert errors == []


@pytest.fixture
def three_entries(transactional_db, fixture_scenarios) -> None:
    team = Team.objects.create(name="Lab", slug="lab")
    for name, offset in [("Oracle agent", 90.0), ("Random agent", 40.0), ("Idle agent", 0.0)]:
        finished_entry(team, ModelEntry.objects.create(team=team, name=name), [offset + i for i in range(10)])


@pytest.mark.parametrize("size", SIZES)
def test_three_entries_fit_beside_their_names_and_the_column_names_clear_the_top_border(
        live_server, site_page, three_entries, size):
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/pairs/?suite=fixture")
    frame = page.locator("#pairs").bounding_box()
    assert frame is not None
    last = page.locator("table.pairs tbody tr").first.locator("td.pair").last.bounding_box()
    assert last is not None and last["x"] + last["width"] <= frame["x"] + frame["width"], (last, frame)
    for label in page.locator("table.pairs thead th.pair-col span").all():
        box = label.bounding_box()
        assert box is not None and box["y"] >= frame["y"] + 6, (box, frame)  # a gap under the card's border
    assert not errors, errors
