"""The model page's chart in headless Chromium at desktop and phone sizes: each environment on its
own axis, and each value's label clear of its bar's whisker."""
from __future__ import annotations

import pytest

from accounts.models import Team
from catalogue.models import Scenario
from submissions.models import Attempt, ModelEntry, Submission
from submissions.services import submission_result_rebuild

pytestmark = pytest.mark.integration

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


def _entry(model: ModelEntry, env: str, flow: str, scores: list[float]) -> Submission:
    """A finished entry scoring ``scores`` in turn over the environment's mini fixture scenarios."""
    sub = Submission.objects.create(team=model.team, model=model, environment_id=env, flow=flow, subset="mini",
                                    suite="fixture", status=Submission.Status.COMPLETED, is_public=True)
    scenarios = Scenario.objects.filter(environment_id=env, suite="fixture", in_mini=True).order_by("key")
    Attempt.objects.bulk_create(Attempt(submission=sub, scenario=sc, repeat=0, status=Attempt.Status.SCORED,
                                        score=scores[i % len(scores)]) for i, sc in enumerate(scenarios))
    submission_result_rebuild(submission_id=sub.id)
    return sub


@pytest.mark.parametrize("size", SIZES)
def test_each_environment_has_its_own_axis_and_its_label_sits_clear_of_the_whisker(
        live_server, site_page, transactional_db, fixture_scenarios, size):
    team = Team.objects.create(name="Lab", slug="lab")
    model = ModelEntry.objects.create(team=team, name="Wide model")
    # Widely spread scores: long whiskers, which a label placed at the bar's end would sit on.
    _entry(model, "sokoban", "global", [10.0, 90.0, 30.0, 70.0])
    _entry(model, "webui", "global", [20.0, 60.0, 35.0])
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/models/{model.id}/")
    page.wait_for_selector("#model-chart svg.main-svg")
    layout = page.evaluate("""() => { const l = document.getElementById('model-chart').layout;
        return {y: l.yaxis.range, y2: l.yaxis2 && l.yaxis2.range, titles: [l.yaxis.title.text, l.yaxis2.title.text],
                x: l.xaxis.domain, x2: l.xaxis2.domain, yd: l.yaxis.domain, yd2: l.yaxis2.domain}; }""")
    assert layout["y"] != layout["y2"]  # each environment's own range
    if size == "desktop":
        assert layout["x"][1] < layout["x2"][0]  # side by side, not on one axis
    else:
        assert layout["yd2"][1] < layout["yd"][0]  # stacked, the first on top
    whiskers = page.locator("#model-chart g.errorbar path")
    labels = page.locator("#model-chart g.annotation")
    assert whiskers.count() == 2 and labels.count() == 2
    for index in range(2):
        whisker = whiskers.nth(index).bounding_box()
        label = labels.nth(index).bounding_box()
        assert whisker is not None and label is not None
        # Above the whisker's top, and not overlapping it.
        assert label["y"] + label["height"] <= whisker["y"] + 0.5, (index, label, whisker)
        assert whisker["x"] < label["x"] + label["width"] and label["x"] < whisker["x"] + whisker["width"]
    page.screenshot(path=f"/tmp/shots/model-chart-{size}.png", full_page=True)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= SIZES[size]["width"]
    assert errors == []


# Each panel's plot area (plotly's own record of it) and its y axis title's box, in page pixels.
PANELS = """() => { const node = document.getElementById('model-chart'), box = node.getBoundingClientRect();
    const l = node._fullLayout;
    return node.layout.annotations.map((a, i) => { const s = i === 0 ? '' : String(i + 1);
      const xa = l['xaxis' + s], ya = l['yaxis' + s];
      const title = node.querySelector('.g-y' + s + 'title text').getBoundingClientRect();
      return {area: {left: box.left + xa._offset, right: box.left + xa._offset + xa._length,
                     top: box.top + ya._offset, bottom: box.top + ya._offset + ya._length},
              title: {left: title.left, right: title.right, top: title.top, bottom: title.bottom},
              env: node.data[i].x[0], range: ya.range}; }); }"""


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


@pytest.mark.parametrize("size", SIZES)
def test_no_axis_title_runs_into_another_panel_and_a_zero_is_drawn_on_its_boards_scale(
        live_server, site_page, transactional_db, fixture_scenarios, size):
    team = Team.objects.create(name="Lab", slug="lab")
    idle = ModelEntry.objects.create(team=team, name="Idle model")
    best = ModelEntry.objects.create(team=team, name="Best model")
    _entry(idle, "sokoban", "global", [10.0, 90.0, 30.0, 70.0])
    _entry(idle, "football", "online", [1.0, 2.0])
    _entry(idle, "webui", "global", [0.0])
    _entry(best, "webui", "global", [80.0])
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/models/{idle.id}/")
    page.wait_for_selector("#model-chart svg.main-svg")
    panels = page.evaluate(PANELS)
    assert len(panels) == 3
    for i, panel in enumerate(panels):
        assert all(not _overlap(panel["title"], other["area"]) for j, other in enumerate(panels) if j != i), i
    # The WebUI entry scores 0 on a board whose best mean is 80: its axis runs 0 … 80 and beyond, not 0 … 0.18.
    (webui,) = [p for p in panels if p["env"] == "WebUI"]
    assert webui["range"][0] == pytest.approx(0.0) and webui["range"][1] > 80.0
    assert "0.00" in page.locator("#model-chart g.annotation text").all_text_contents()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= SIZES[size]["width"]
    assert errors == []
