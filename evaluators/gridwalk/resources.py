"""Reading GridWalk levels from a resources directory in the official layout.

``GridWalk_all.json`` / ``GridWalk_mini.json`` list the levels; ``GridWalk/<name>.json`` holds one
level: ``{"grid": [rows], "max_steps": n}`` (see :mod:`evaluators.gridwalk.grid` for the characters).
The files are plain JSON, so unlike Sokoban's pickles they may come from anywhere.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluators.base import ImportedScenario
from evaluators.gridwalk.grid import DEFAULT_MAX_STEPS, Level
from evaluators.resources import discover_json_files

TITLE = "GridWalk"
#: The bundled levels, imported by the tests and by anyone trying the environment out.
FIXTURE_RESOURCES = Path(__file__).resolve().parent / "fixtures" / "resources"
#: A route at most this long is "short" in the tags.
SHORT_ROUTE = 6


def discover_gridwalk(resources: Path) -> list[ImportedScenario]:
    return discover_json_files(resources, TITLE, ("a GridWalk level", "levels"), _level)


def _level(content: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    level = Level.from_rows(content["grid"], max_steps=int(content.get("max_steps", DEFAULT_MAX_STEPS)))
    distance = level.distance(level.start)
    data = {"grid": level.to_rows(), "max_steps": level.max_steps, "initial_distance": distance,
            "route": level.route(level.start)}
    return data, {"size": f"{level.rows}x{level.cols}",
                  "route": "short" if distance is not None and distance <= SHORT_ROUTE else "long",
                  # The analysis panel's axis (evaluators.gridwalk.analysis).
                  "distance": distance}
