"""GridWalk's section of a board's analysis page: each entry's mean score by the length of the
level's shortest route (d_0, the ``distance`` tag stored on import).

A longer route leaves more moves to go wrong, so the curve shows where a model stops finding its
way; the page draws one line per model (static/js/analysis_gridwalk.js).
"""
from __future__ import annotations

from typing import Any

from evaluators.base import AnalysisPanel, ScenarioMeans


def _distance(value: object) -> int | None:
    # Tags come back from JSON; anything but a positive whole number is a scenario the panel skips.
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    try:
        distance = int(value)
    except ValueError:
        return None
    return distance if distance > 0 else None


def by_distance(scenario_means: ScenarioMeans) -> dict[str, Any] | None:
    """{"distances": [d_0, …] ascending, "means": [...], "counts": [...]} of an entry's per-scenario
    means, summed in the order given; None when no scenario has a distance."""
    sums: dict[int, float] = {}
    counts: dict[int, int] = {}
    for tags, mean in scenario_means:
        distance = _distance(tags.get("distance"))
        if distance is None:
            continue
        sums[distance] = sums.get(distance, 0.0) + mean
        counts[distance] = counts.get(distance, 0) + 1
    if not counts:
        return None
    distances = sorted(counts)
    return {"distances": distances, "means": [sums[d] / counts[d] for d in distances],
            "counts": [counts[d] for d in distances]}


ROUTE_LENGTH = AnalysisPanel(
    key="route_length", title="By route length", aggregate=by_distance, template="gridwalk/analysis_route.html",
    script="js/analysis_gridwalk.js", plotly="basic",
    chart={"axis": "shortest route from the start (moves)"})
