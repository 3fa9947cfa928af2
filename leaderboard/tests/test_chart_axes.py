"""static/js/chart_axes.js, run in headless Chromium on hand-computed cases: two y-axes that share
their zero line and tick at round steps."""
from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

SCRIPT = Path(__file__).resolve().parents[2] / "static" / "js" / "chart_axes.js"


@pytest.fixture(scope="module")
def axes() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    from evaluators.browser import launch_chromium

    # Playwright's sync API refuses a thread where an event loop is running, which an earlier test in
    # the same process may leave behind; one thread of its own keeps this browser clear of that.
    thread = ThreadPoolExecutor(max_workers=1)
    state: dict[str, Any] = {}

    def start() -> None:
        state["playwright"] = sync_playwright().start()
        state["browser"] = launch_chromium(state["playwright"])
        page = state["browser"].new_page()
        page.set_content("<!doctype html><title>axes</title>")
        page.add_script_tag(content=SCRIPT.read_text())
        state["page"] = page

    def stop() -> None:
        state["browser"].close()
        state["playwright"].stop()

    thread.submit(start).result()

    def aligned(left: list[float], right: list[float], intervals: int = 5) -> dict[str, Any]:
        return thread.submit(lambda: state["page"].evaluate(
            "([l, r, n]) => window.MageChartAxes.alignedZeroRanges(l, r, n)", [left, right, intervals])).result()

    yield aligned
    thread.submit(stop).result()
    thread.shutdown()


def test_both_axes_take_the_larger_count_of_steps_below_and_above_zero(axes):
    # Left: -0.1 … 0.05, a span of 0.15 → 0.03 per interval → step 0.05: 2 below, 1 above.
    # Right: -0.05 … 0.2, a span of 0.25 → 0.05 → step 0.05: 1 below, 4 above.
    # Both: 2 below and 4 above, so zero sits a third of the way up on each.
    result = axes([-0.1, 0.05, 0.004], [0, 0.2, -0.05])
    assert result["left"] == {"range": [-0.1, 0.2], "dtick": 0.05, "tick0": 0}
    assert result["right"] == {"range": [-0.1, 0.2], "dtick": 0.05, "tick0": 0}
    assert result["zeroFraction"] == pytest.approx(1 / 3)


def test_each_axis_keeps_its_own_round_step(axes):
    # Left: 0 … 3 → 0.6 → step 1: 0 below, 3 above. Right: -40 … 0 → 8 → step 10: 4 below, 0 above.
    # Both: 4 below, 3 above: left [-4, 3] by 1, right [-40, 30] by 10, zero at 4/7.
    result = axes([1, 2, 3], [-40, -10])
    assert result["left"]["range"] == [-4, 3] and result["left"]["dtick"] == 1
    assert result["right"]["range"] == [-40, 30] and result["right"]["dtick"] == 10
    assert result["zeroFraction"] == pytest.approx(4 / 7)


def test_positive_values_only_put_zero_at_the_bottom(axes):
    # Left: 0 … 0.012 → 0.0024 → step 0.005: 3 above. Right: 0 … 1 → 0.2 → step 0.2: 5 above.
    result = axes([0.012, 0.004], [0.5, 1.0])
    assert result["left"]["range"] == [0, 0.025] and result["left"]["dtick"] == 0.005
    assert result["right"]["range"] == [0, 1] and result["right"]["dtick"] == 0.2
    assert result["zeroFraction"] == 0


def test_all_zero_values_still_get_a_range(axes):
    result = axes([0, 0], [])
    assert result["left"]["range"][0] == 0 and result["left"]["range"][1] > 0
    assert result["zeroFraction"] == 0
