"""Football's analysis panel: an entry's per-scenario means laid out on the pitch's zones."""
from __future__ import annotations

from evaluators.football import plugin
from evaluators.football.analysis import ZONES, zone_grid, zone_index


def test_zones_map_onto_the_pitch_by_lane_and_third() -> None:
    assert zone_index("R1") == (0, 0) and zone_index("R3") == (0, 2)
    assert zone_index("R5") == (1, 1) and zone_index("R7") == (2, 0) and zone_index("R9") == (2, 2)
    assert zone_index("R0") is None and zone_index(None) is None and zone_index("R10") is None


def test_the_zone_grid_averages_the_means_of_each_zone_and_counts_its_scenarios() -> None:
    grid = zone_grid([({"zone": "R1"}, 1.0), ({"zone": "R5"}, 4.0), ({"zone": "R5"}, 6.0), ({"zone": "R9"}, -1.0),
                      ({"category": "personal"}, 9.0)])
    assert grid == {"means": [[1.0, None, None], [None, 5.0, None], [None, None, -1.0]],
                    "counts": [[1, 0, 0], [0, 2, 0], [0, 0, 1]]}


def test_an_entry_without_a_zoned_scenario_has_no_grid() -> None:
    assert zone_grid([]) is None and zone_grid([({"zone": "R12"}, 1.0)]) is None


def test_the_football_plugin_declares_the_zone_heatmap_as_its_analysis_panel() -> None:
    assert plugin.analysis_panels == (ZONES,)
    assert ZONES.plotly == "cartesian" and ZONES.template == "football/analysis_zones.html"
    assert ZONES.chart["names"][1] == ["R4", "R5", "R6"]
