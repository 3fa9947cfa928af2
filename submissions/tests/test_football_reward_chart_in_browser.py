"""A Football replay's reward chart in headless Chromium, at desktop and phone sizes: it shows the whole
episode from the start (not the first page of engine steps), and its title and legend are neither cut
nor drawn over the plot or the axis titles."""
from __future__ import annotations

from pathlib import Path

import pytest

from evaluators.trajectory import REPLAY_PAGE
from submissions.tests.test_replay_paging import STEPS, long_football_attempt

pytestmark = pytest.mark.integration

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def _box(page, selector: str) -> dict[str, float]:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


@pytest.mark.parametrize("size", SIZES)
def test_the_reward_chart_shows_the_whole_episode_with_its_title_and_legend_clear(live_server, site_page,
                                                                                 transactional_db, media_root, size):
    assert STEPS > REPLAY_PAGE  # more engine steps than the page embeds
    attempt = long_football_attempt(media_root)
    requests: list[str] = []
    page, errors = site_page(viewport=SIZES[size])
    page.on("request", lambda r: requests.append(r.url) if "/trajectory/" in r.url else None)
    page.goto(f"{live_server.url}/attempts/{attempt.id}/replay/")
    page.wait_for_selector("#football-chart .plot-container svg.main-svg", timeout=15_000)
    figure = page.evaluate("""() => { const c = document.getElementById('football-chart');
        return {xs: c.data.map((t) => t.x.length), last: Math.max(...c.data[0].x), range: c.layout.xaxis.range,
                cumulative: c.data[c.data.length - 1].y[c.data[0].x.length - 1]}; }""")
    assert figure["xs"] == [STEPS, STEPS] and figure["last"] == STEPS
    assert figure["range"][0] < 1 and figure["range"][1] >= STEPS
    assert figure["cumulative"] == pytest.approx(0.001 * STEPS)
    assert requests == []  # the whole episode's rewards came with the page, no engine step was fetched

    chart = _box(page, "#football-chart .main-svg")
    title = _box(page, "#football-chart .gtitle")
    legend = _box(page, "#football-chart .legend")
    plot = _box(page, "#football-chart .cartesianlayer .bg, #football-chart .nsewdrag")
    x_title = _box(page, "#football-chart .g-xtitle")
    page.locator("#football-chart").screenshot(path=f"/tmp/shots/football-chart-{size}.png")
    for name, box in (("title", title), ("legend", legend)):
        assert chart["x"] - 1 <= box["x"] and box["x"] + box["width"] <= chart["x"] + chart["width"] + 1, name
        assert chart["y"] - 1 <= box["y"] and box["y"] + box["height"] <= chart["y"] + chart["height"] + 1, name
        assert not _overlap(box, plot), name
    assert not _overlap(legend, x_title) and legend["y"] >= x_title["y"]
    for axis in ("g-ytitle", "g-y2title"):
        assert not _overlap(title, _box(page, f"#football-chart .{axis}")), axis
    # The whole title is drawn (none of its text is cut off at the chart's edge).
    assert "cumulative reward" in page.locator("#football-chart .gtitle").text_content()
    page.locator("#football-chart").screenshot(path=f"/tmp/shots/football-chart-{size}.png")
    assert errors == []


@pytest.mark.parametrize("size", SIZES)
def test_every_reward_terms_legend_entry_stays_clear_of_the_plot_and_axis_titles(live_server, site_page,
                                                                              transactional_db, media_root, size):
    from submissions.tests.test_football_replay import TERMS, football_attempt

    attempt = football_attempt(media_root)
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/attempts/{attempt.id}/replay/")
    page.wait_for_selector("#football-chart .plot-container svg.main-svg", timeout=15_000)
    assert page.locator("#football-chart .legendtext").count() == len(TERMS) + 1
    chart = _box(page, "#football-chart .main-svg")
    legend = _box(page, "#football-chart .legend")
    plot = _box(page, "#football-chart .nsewdrag")
    assert chart["y"] - 1 <= legend["y"] and legend["y"] + legend["height"] <= chart["y"] + chart["height"] + 1
    assert chart["x"] - 1 <= legend["x"] and legend["x"] + legend["width"] <= chart["x"] + chart["width"] + 1
    assert not _overlap(legend, plot) and not _overlap(legend, _box(page, "#football-chart .g-xtitle"))
    title = _box(page, "#football-chart .gtitle")
    assert chart["x"] - 1 <= title["x"] and title["x"] + title["width"] <= chart["x"] + chart["width"] + 1
    assert chart["y"] - 1 <= title["y"] and not _overlap(title, plot)
    page.locator("#football-chart").screenshot(path=f"/tmp/shots/football-terms-{size}.png")
    assert errors == []
