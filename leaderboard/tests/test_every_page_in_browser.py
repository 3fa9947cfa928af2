"""One pass over every kind of page of the site, in headless Chromium, on runs the platform played.

Seeds real episodes: Sokoban Online by the oracle and by an oracle whose endpoint rambles on every
third request (so its replay has unparsed replies), WebUI Global by the degraded oracle (rendered
and scored in Chromium) and text-only Football by the random agent. Then visits each page type,
sorts and filters a board, downloads its CSV, steps through a replay, and checks that no page logs
a console error or asks anything of a host other than the site.
"""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from accounts.services import team_get_or_create
from conftest import FIXTURE_RESOURCES
from submissions.engine import attempt_run
from submissions.models import Attempt, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint

pytestmark = pytest.mark.integration


def _run(url: str, name: str, env: str, flow: str, *, baseline: bool, **settings) -> Submission:
    team = team_get_or_create(name="MageBench baselines" if baseline else "Lab")
    model = model_entry_upsert(team=team, name=name, is_baseline=baseline, organisation="" if baseline else "Lab Org")
    submission = submission_create_endpoint(model=model, env=env, flow=flow, subset="mini", suite="fixture",
                                            endpoint_url=url, settings={"repeats": 1, **settings},
                                            is_baseline=baseline)
    for attempt_id in submission.attempts.values_list("id", flat=True):
        attempt_run(attempt_id=attempt_id)
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPLETED, submission.status_reason
    return submission


@pytest.fixture
def played(transactional_db, fixture_scenarios, baseline_endpoint):
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import start_server

    # A few decisions per episode are enough for every page to have something to show.
    oracle = _run(baseline_endpoint("oracle").url, "Oracle agent", "sokoban", "online", baseline=True,
                  resolution=256, max_loop=8)
    rambling = _run(baseline_endpoint("oracle", fault="rambling", every_n=3).url, "Rambling model", "sokoban",
                    "online", baseline=False, resolution=256, parse_retries=1, max_loop=8)
    with start_server(make_agent("degraded", pages=[FIXTURE_RESOURCES / "WebUI"])) as server:
        webui = _run(server.url, "Degraded oracle", "webui", "global", baseline=True)
    football = _run(baseline_endpoint("random", seed=4).url, "Random agent", "football", "online", baseline=True,
                    observation_images=False, max_loop=6)
    return {"oracle": oracle, "rambling": rambling, "webui": webui, "football": football}


def _pages(live: str, played: dict[str, Submission]) -> list[tuple[str, str]]:
    def replay(key: str) -> str:
        attempt = played[key].attempts.filter(status=Attempt.Status.SCORED).order_by("-model_calls", "id").first()
        return f"{live}/attempts/{attempt.id}/replay/"

    boards = [("sokoban", "global"), ("sokoban", "online"), ("webui", "global"), ("webui", "online"),
              ("football", "online")]
    pages = [("home", f"{live}/"), ("submit", f"{live}/submit/"), ("queue", f"{live}/queue/")]
    for env, flow in boards:
        pages += [(f"{env} {flow} board", f"{live}/boards/{env}/{flow}/mini/?suite=fixture"),
                  (f"{env} {flow} analysis", f"{live}/boards/{env}/{flow}/mini/analysis/?suite=fixture"),
                  (f"{env} {flow} compare", f"{live}/boards/{env}/{flow}/mini/compare/?suite=fixture")]
    pages += [(f"{env} metric card", f"{live}/environments/{env}/") for env in ("sokoban", "webui", "football")]
    pages += [(f"submission {key}", f"{live}/submissions/{s.id}/") for key, s in played.items()]
    pages += [(f"{key} replay", replay(key)) for key in played]
    return pages


def test_every_page_type_loads_cleanly_and_a_visitor_sorts_filters_exports_and_steps_through_a_replay(
        live_server, site_page, played, tmp_path):
    page, errors = site_page(viewport={"width": 1400, "height": 1000})
    outside: list[str] = []
    site = urlsplit(live_server.url).netloc
    page.on("request", lambda r: outside.append(r.url)
            if urlsplit(r.url).scheme in ("http", "https") and urlsplit(r.url).netloc != site else None)
    for name, url in _pages(live_server.url, played):
        response = page.goto(url)
        assert response is not None and response.status == 200, (name, response and response.status)
        page.wait_for_load_state("networkidle")
        assert not errors, (name, errors)
    assert not outside, outside

    # A board: sort it, filter it, export what is left.
    page.goto(f"{live_server.url}/boards/sokoban/online/mini/?suite=fixture")

    def models() -> list[str]:
        return [t.strip() for t in page.locator("table.board tbody tr td:nth-child(2) a").all_inner_texts()]

    assert models() == ["Oracle agent", "Rambling model"] or models() == ["Rambling model", "Oracle agent"]
    page.locator("table.board th", has_text="Model").click()
    assert models() == ["Oracle agent", "Rambling model"]
    page.locator("form.filters select[name=org]").select_option("Lab Org")
    page.locator("form.filters input[name=verified]").check()
    page.locator("form.filters button").click()
    page.wait_for_url("**verified=1**")
    assert models() == ["Oracle agent"]  # nothing verified yet: only the baseline stays
    with page.expect_download() as download:
        page.get_by_role("link", name="CSV").click()
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
