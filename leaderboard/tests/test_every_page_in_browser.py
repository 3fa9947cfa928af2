"""One pass over every kind of page of the site, in headless Chromium, on runs the platform played
(seeded by the ``played`` fixture: see site_pages.py). Visits each page type, anonymous and signed in,
sorts and filters a board, downloads its CSV, steps through a replay, and checks that no page logs
a console error or asks anything of a host other than the site.
"""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from leaderboard.tests.site_pages import visit_site_pages
from submissions.models import Attempt

pytestmark = pytest.mark.integration


def test_every_page_type_loads_cleanly_and_a_visitor_sorts_filters_exports_and_steps_through_a_replay(
        live_server, site_page, played, tmp_path):
    page, errors = site_page(viewport={"width": 1400, "height": 1000})
    outside: list[str] = []
    site = urlsplit(live_server.url).netloc
    page.on("request", lambda r: outside.append(r.url)
            if urlsplit(r.url).scheme in ("http", "https") and urlsplit(r.url).netloc != site else None)
    for name in visit_site_pages(page, live_server.url, played):
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

    attempt = (played["rambling"].attempts.filter(status=Attempt.Status.SCORED, parse_errors__gt=0)
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
