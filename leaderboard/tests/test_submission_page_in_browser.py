"""A submission's page in headless Chromium shows what its board and analysis show of the entry: IA/RA %,
the lost-score bar and its means by scenario tag; an upload's page lists only the settings that applied."""
from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from accounts.models import Team
from catalogue.models import Scenario
from submissions.models import Attempt, ModelEntry, Submission
from submissions.services import submission_refresh_status

pytestmark = pytest.mark.integration

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
WEBUI_PARTS = ("parse", "render", "interaction", "unmatched", "attribute")


def _finished(env: str, name: str, score_of: Callable[[int, int], float], *, flow: str = "global",
              details: Callable[[int, float], dict] | None = None, source: str = Submission.Source.ENDPOINT,
              settings: dict | None = None) -> Submission:
    """A public submission of every mini fixture scenario × 2 repeats, finished the way the engine
    finishes one (its status and stored board numbers from submission_refresh_status)."""
    team, _ = Team.objects.get_or_create(name="Lab", defaults={"slug": "lab"})
    sub = Submission.objects.create(is_public=True, team=team, model=ModelEntry.objects.create(team=team, name=name),
                                    environment_id=env, flow=flow, subset="mini", suite="fixture",
                                    status=Submission.Status.RUNNING, source=source, settings=settings or {},
                                    endpoint_url="" if source == Submission.Source.UPLOAD else "http://127.0.0.1:9/v1",
                                    endpoint_model="" if source == Submission.Source.UPLOAD else "served-model")
    scenarios = Scenario.objects.filter(environment_id=env, suite="fixture", in_mini=True).order_by("key")
    Attempt.objects.bulk_create(
        Attempt(submission=sub, scenario=scenario, repeat=repeat, status=Attempt.Status.SCORED,
                score=score_of(i, repeat), invalid_action=i == 0 and repeat == 0, repeating_action=i < 2,
                details=details(i, score_of(i, repeat)) if details else {})
        for i, scenario in enumerate(scenarios) for repeat in range(2))
    return submission_refresh_status(submission_id=sub.id)


def _webui_details(i: int, score: float) -> dict:
    aes = score / 100
    lost = 1.0 - aes
    return {"breakdown": {"aes": aes, "parse": 0.0, "render": lost * 0.25, "interaction": 0.0,
                          "unmatched": lost * 0.75, "attribute": 0.0}}


@pytest.fixture
def entries(transactional_db, fixture_scenarios) -> dict[str, Submission]:
    return {
        "sokoban": _finished("sokoban", "Pusher", lambda i, r: 10.0 * i + r),
        "webui": _finished("webui", "Writer", lambda i, r: 40.0 + 10.0 * i + r, details=_webui_details),
        "upload": _finished("sokoban", "Uploaded", lambda i, r: 5.0 * i, source=Submission.Source.UPLOAD,
                            settings={"temperature": 0.1, "max_tokens": 2048, "repeats": 2, "top_p": 0.95}),
    }


def _board_row(page, live_server, sub: Submission):
    page.goto(f"{live_server.url}/boards/{sub.environment_id}/{sub.flow}/{sub.subset}/?suite=fixture")
    row = page.locator("table.board[data-board] tbody tr", has=page.locator(f"a[href='/submissions/{sub.id}/']"))
    row.first.wait_for()
    return row.first


@pytest.mark.parametrize("size", SIZES)
def test_a_sokoban_submission_shows_the_boards_ia_and_ra_and_the_analysis_means_by_tag(live_server, site_page,
                                                                                       entries, size):
    sub = entries["sokoban"]
    page, errors = site_page(viewport=SIZES[size])
    row = _board_row(page, live_server, sub)
    heads = page.locator("table.board[data-board] thead th").evaluate_all("(ths) => ths.map((th) => th.dataset.col)")
    cells = {col: row.locator("td").nth(heads.index(col)).inner_text().strip() for col in ("ia", "ra")}
    attempts = Attempt.objects.filter(submission=sub)
    # One invalid attempt of all; both repeats of the first two scenarios repeat their actions.
    assert cells["ia"] == f"{100 / attempts.count():.1f}"
    assert cells["ra"] == f"{100 * attempts.filter(repeating_action=True).count() / attempts.count():.1f}"

    page.goto(f"{live_server.url}/boards/sokoban/global/mini/analysis/?suite=fixture")
    analysis = {}
    for table in page.locator("table.analysis-tag").all():
        tag = table.get_attribute("data-tag")
        heads = [h.strip() for h in table.locator("thead th").all_inner_texts()][1:]
        model_row = table.locator("tbody tr", has_text="Pusher").first
        values = [c.strip() for c in model_row.locator("td.num").all_inner_texts()]
        analysis[tag] = {h: v for h, v in zip(heads, values, strict=True) if v != "—"}

    page.goto(f"{live_server.url}/submissions/{sub.id}/")
    diagnostics = page.locator("#action-diagnostics")
    diagnostics.wait_for()
    text = diagnostics.inner_text()
    assert f"IA {cells['ia']}%" in text and f"RA {cells['ra']}%" in text
    shown = {}
    for table in page.locator("table.entry-tag").all():
        shown[table.get_attribute("data-tag")] = {
            tr.locator("td").nth(0).inner_text().strip():
                f"{tr.locator('td').nth(1).inner_text().strip()} ({tr.locator('td').nth(2).inner_text().strip()})"
            for tr in table.locator("tbody tr").all()}
    assert shown and set(shown) == set(analysis)
    assert shown == analysis
    assert page.locator("#lost-score").count() == 0  # Sokoban does not break its score down
    page.screenshot(path=f"/tmp/shots/submission-sokoban-{size}.png", full_page=True)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= SIZES[size]["width"]
    assert errors == []


@pytest.mark.parametrize("size", SIZES)
def test_a_webui_submission_shows_the_boards_lost_score_bar(live_server, site_page, entries, size):
    sub = entries["webui"]
    page, errors = site_page(viewport=SIZES[size])
    row = _board_row(page, live_server, sub)
    board_bar = row.locator(".lostbar").get_attribute("title")
    board_labels = row.locator("svg.lostlabels").get_attribute("aria-label")
    page.goto(f"{live_server.url}/submissions/{sub.id}/")
    lost = page.locator("#lost-score")
    lost.wait_for()
    assert lost.locator(".lostbar").get_attribute("title") == board_bar
    assert lost.locator("svg.lostlabels").get_attribute("aria-label") == board_labels
    assert re.search(r"render \d", board_labels) and re.search(r"unmatched \d", board_labels)
    assert lost.locator("rect.seg.unmatched").count() == 1 and lost.locator("rect.seg.parse").count() == 0
    assert page.locator("#action-diagnostics").count() == 0  # WebUI has no IA/RA
    page.screenshot(path=f"/tmp/shots/submission-webui-{size}.png", full_page=True)
    assert errors == []


@pytest.mark.parametrize("size", SIZES)
def test_an_uploads_page_shows_no_endpoint_and_no_request_settings(live_server, site_page, entries, size):
    upload, endpoint = entries["upload"], entries["sokoban"]
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/submissions/{upload.id}/")
    settings = page.locator("table.plain", has=page.locator("th", has_text="Board")).first
    settings.wait_for()
    names = [n.strip() for n in settings.locator("th").all_inner_texts()]
    assert "Endpoint" not in names and "temperature" not in names and "max_tokens" not in names
    assert "top_p" not in names and "repeats" in names and "Source" in names
    assert "model was not called" in page.locator("#submission-source").inner_text()
    assert "Not measured" in page.locator("#cost-and-effort").inner_text()

    # A run against an endpoint lists both.
    page.goto(f"{live_server.url}/submissions/{endpoint.id}/")
    names = [n.strip() for n in page.locator("table.plain", has=page.locator("th", has_text="Board")).first
             .locator("th").all_inner_texts()]
    assert "Endpoint" in names and "Source" not in names
    assert errors == []
