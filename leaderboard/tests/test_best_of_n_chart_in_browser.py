"""The analysis page's best-of-N chart in headless Chromium at desktop and phone sizes: a single curve is still
named in a legend, and its score axis reaches 0 rather than stretching a small gain over the chart's height."""
from __future__ import annotations

import pytest
from django.db.models import Max

from catalogue.models import Scenario
from leaderboard.tests.test_analysis_in_browser import _seed
from submissions.models import Attempt

pytestmark = pytest.mark.integration

SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("size", SIZES)
def test_a_single_best_of_n_curve_has_a_legend_and_an_axis_from_zero(live_server, site_page, transactional_db,
                                                                      fixture_scenarios, size):
    keys = sorted(Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True)
                  .values_list("key", flat=True))
    # Three repeats scoring 48.5 … 51: one curve; the other model has one repeat only, so no curve.
    _seed("Repeating model", keys, lambda i, r: 48.5 + 1.25 * r)
    once = _seed("Once model", keys, lambda i, r: 20.0)
    Attempt.objects.filter(submission=once, repeat__gt=0).delete()
    assert Attempt.objects.filter(submission=once).aggregate(Max("repeat"))["repeat__max"] == 0
    page, errors = site_page(viewport=SIZES[size])
    page.goto(f"{live_server.url}/boards/sokoban/global/mini/analysis/?suite=fixture")
    page.wait_for_selector("#chart-best-of-n svg.main-svg", timeout=15_000)
    assert page.locator("#chart-best-of-n .scatterlayer .trace").count() == 1
    assert page.locator("#chart-best-of-n .legend .traces text").all_text_contents() == ["Repeating model"]
    low, high = page.evaluate("() => document.getElementById('chart-best-of-n')._fullLayout.yaxis.range")
    assert low <= 0.0 < 51.0 <= high
    assert errors == []
