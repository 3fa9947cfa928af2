"""Football's section of a board's analysis page: each entry's mean score per pitch zone.

A scenario's ``zone`` tag ("R1" … "R9", read from its file name or its ball position on import)
places it on a 3 × 3 grid of lanes (rows) by thirds (columns); the page draws the grid as a heatmap
per model (static/js/analysis_football.js).
"""
from __future__ import annotations

import re
from typing import Any

from evaluators.base import AnalysisPanel, ScenarioMeans
from evaluators.football.resources import LANES, THIRDS

_ZONE = re.compile(r"^R([1-9])$")


def zone_index(zone: object) -> tuple[int, int] | None:
    """(lane, third) of a zone tag "R1" … "R9"; R1–R3 are the top lane from own to attacking third."""
    match = _ZONE.match(str(zone or ""))
    if not match:
        return None
    lane, third = divmod(int(match.group(1)) - 1, 3)
    return lane, third


def zone_grid(scenario_means: ScenarioMeans) -> dict[str, Any] | None:
    """{"means": 3 × 3, "counts": 3 × 3} of an entry's per-scenario means by zone, summed in the
    order given (a mean's last bit depends on it); None when no scenario has a zone."""
    sums = [[0.0] * 3 for _ in range(3)]
    counts = [[0] * 3 for _ in range(3)]
    for tags, mean in scenario_means:
        where = zone_index(tags.get("zone"))
        if where is None:
            continue
        lane, third = where
        sums[lane][third] += mean
        counts[lane][third] += 1
    if not any(map(any, counts)):
        return None
    means = [[sums[lane][third] / counts[lane][third] if counts[lane][third] else None for third in range(3)]
             for lane in range(3)]
    return {"means": means, "counts": counts}


ZONES = AnalysisPanel(
    key="zones", title="By pitch zone", aggregate=zone_grid, template="football/analysis_zones.html",
    script="js/analysis_football.js", plotly="cartesian",
    chart={"lanes": list(LANES), "thirds": list(THIRDS),
           "names": [[f"R{1 + 3 * lane + third}" for third in range(3)] for lane in range(3)]})
