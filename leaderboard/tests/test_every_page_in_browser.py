"""Every kind of page of the site, in headless Chromium, on runs the platform played once for the module
(``played_site``: see site_pages.py and conftest.py).

On a wide screen: each page type, anonymous and signed in, no console error and nothing asked of a host
other than the site; a visitor sorts and filters a board, downloads its CSV and steps through a replay.
On a phone (390 × 844): every page fits the screen's width (wide tables scroll inside their own box,
nothing makes the page itself scroll sideways), and the header's links fold into a menu button.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from leaderboard.tests.site_pages import PHONE, visit_site_pages
from submissions.models import Attempt

pytestmark = pytest.mark.integration

# The page's width against the window's; when the page is wider, the outermost elements sticking out on
# the right, leaving out those inside a box that clips or scrolls them (a table in its scrolling wrapper).
OVERFLOW_JS = """() => {
  const width = window.innerWidth;
  const scrollWidth = document.documentElement.scrollWidth;
  const offenders = [];
  if (scrollWidth > width) {
    const contained = (el) => {
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        if (getComputedStyle(p).overflowX !== "visible") return true;
      }
      return false;
    };
    document.querySelectorAll("body *").forEach((el) => {
      const box = el.getBoundingClientRect();
      // Only the outermost element sticking out: its contents go with it.
      const parent = el.parentElement.getBoundingClientRect();
      if (box.right > width && box.width > 0 && !(parent.right > width) && !contained(el)) {
        const name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
          + (el.classList.length ? "." + Array.from(el.classList).join(".") : "");
        offenders.push(name + " (right " + Math.round(box.right) + ")");
      }
    });
  }
  // A chart in a box that clips it would not widen the page: it must fit the screen all the same.
  const charts = Array.from(document.querySelectorAll(".js-plotly-plot"))
    .map((plot) => [plot.id, plot.querySelector(".main-svg").getBoundingClientRect()])
    .filter(([, box]) => box.right > width || box.left < 0)
    .map(([id, box]) => "chart #" + id + " from " + Math.round(box.left) + " to " + Math.round(box.right));
  return { width: width, scrollWidth: scrollWidth, offenders: offenders.slice(0, 15), charts: charts };
}"""


def overflow(page: Any, name: str) -> str | None:
    found = page.evaluate(OVERFLOW_JS)
    if found["scrollWidth"] <= found["width"] and not found["charts"]:
        return None
    return (f"{name}: {found['scrollWidth']}px wide on a {found['width']}px screen; sticking out: "
            f"{found['offenders'] + found['charts']}")


def test_every_page_type_loads_cleanly_and_a_visitor_sorts_filters_exports_and_steps_through_a_replay(
        live_server, site_page, played_site, tmp_path):
    page, errors = site_page(viewport={"width": 1400, "height": 1000})
    outside: list[str] = []
    site = urlsplit(live_server.url).netloc
    page.on("request", lambda r: outside.append(r.url)
            if urlsplit(r.url).scheme in ("http", "https") and urlsplit(r.url).netloc != site else None)
    for name in visit_site_pages(page, live_server.url, played_site):
        assert not errors, (name, errors)
    assert not outside, outside
    page.context.clear_cookies()

    # A board: sort it, filter it, export what is left.
    page.goto(f"{live_server.url}/boards/sokoban/online/mini/?suite=fixture")

    def models() -> list[str]:
        names = page.locator("table.board tbody tr td:nth-child(2) a:first-of-type")  # not the entry's #id
        return [t.strip() for t in names.all_inner_texts()]

    assert models() == ["Oracle agent", "Rambling model"] or models() == ["Rambling model", "Oracle agent"]
    page.locator("table.board th", has_text="Model").click()
    assert models() == ["Oracle agent", "Rambling model"]
    page.locator("form.filters select[name=org]").select_option("Lab Org")
    page.locator("form.filters input[name=verified]").check()
    page.locator("form.filters button").click()
    page.wait_for_url("**verified=1**")
    assert models() == ["Oracle agent"]  # nothing verified yet: only the baseline stays
    with page.expect_download() as download:
        page.get_by_role("link", name="CSV", exact=True).click()
    path = tmp_path / "board.csv"
    download.value.save_as(path)
    lines = path.read_text().splitlines()
    assert lines[0].startswith("rank,") and len(lines) == 2 and "Oracle agent" in lines[1]

    attempt = (played_site["rambling"].attempts.filter(status=Attempt.Status.SCORED, parse_errors__gt=0)
               .order_by("-parse_errors", "id").first())
    assert attempt is not None, "every third reply rambles: some attempt must have an unparsed reply"
    # A replay with unparsed replies: each has its own entry, and the step after it tells what was parsed.
    page.goto(f"{live_server.url}/attempts/{attempt.id}/replay/")
    failed = page.locator("#step-list li.failed")
    assert failed.count() == attempt.parse_errors
    assert page.locator("#step-list li").count() == 1 + attempt.steps + attempt.parse_errors
    failed.first.click()
    assert "Parse error" in page.locator("#step-table").inner_text()
    assert "Let me look at the picture" in page.locator("#reply").inner_text()
    page.keyboard.press("ArrowRight")  # the retry's step: the score so far and what was parsed
    table = page.locator("#step-table").inner_text()
    assert "Score so far" in table and "Parsed from the reply" in table and "Unparsed replies before it" in table
    page.keyboard.press("End")
    assert page.locator("#frame-caption").inner_text() == f"After step {attempt.steps} of {attempt.steps}"
    last_score = page.locator("#step-table tr", has_text="Score so far").locator("td").inner_text()
    assert float(last_score) == pytest.approx(attempt.score, abs=1e-3)
    assert not errors, errors


def test_no_page_is_wider_than_a_phone_screen_and_the_header_menu_opens(live_server, site_page, played_site):
    page, errors = site_page(viewport=PHONE)
    too_wide: list[str] = []
    for name in visit_site_pages(page, live_server.url, played_site):
        problem = overflow(page, name)
        if problem:
            too_wide.append(problem)
    assert not too_wide, "\n".join(too_wide)
    assert not errors, errors

    # Signed out again: the menu holds the links to log in and to sign up.
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/queue/")
    menu = page.locator("header .site-menu > summary")
    header = page.locator("header")
    links = ["Boards", "Queue", "API", "Log in", "Sign up", "Submit a model"]
    assert menu.is_visible()
    for link in links:
        assert not header.get_by_role("link", name=link, exact=True).is_visible(), link
    menu.click()
    for link in links:
        shown = header.get_by_role("link", name=link, exact=True)
        assert shown.is_visible(), link
        box = shown.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (link, box)
    assert overflow(page, "queue with the menu open") is None
    header.get_by_role("link", name="Sign up").click()
    page.wait_for_url("**/accounts/signup/")
    # The menu is a button for the keyboard too: Enter opens it.
    page.locator("header .site-menu > summary").focus()
    page.keyboard.press("Enter")
    assert page.locator("header").get_by_role("link", name="Log in").is_visible()
    assert not errors, errors
