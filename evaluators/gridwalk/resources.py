"""Reading GridWalk levels from a resources directory in the official layout.

``GridWalk_all.json`` / ``GridWalk_mini.json`` list the levels; ``GridWalk/<name>.json`` holds one
level: ``{"grid": [rows], "max_steps": n}`` (see :mod:`evaluators.gridwalk.grid` for the characters).
The files are plain JSON, so unlike Sokoban's pickles they may come from anywhere.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from evaluators.base import ImportedScenario, ResourceError
from evaluators.checkout_files import loads_json
from evaluators.gridwalk.grid import DEFAULT_MAX_STEPS, Level, LevelError
from evaluators.resources import read_listed_files

TITLE = "GridWalk"
#: The bundled levels, imported by the tests and by anyone trying the environment out.
FIXTURE_RESOURCES = Path(__file__).resolve().parent / "fixtures" / "resources"
#: A route at most this long is "short" in the tags.
SHORT_ROUTE = 6


def discover_gridwalk(resources: Path) -> list[ImportedScenario]:
    folder, all_names, mini_names = read_listed_files(resources, TITLE, ".json", "levels")
    found: list[ImportedScenario] = []
    for name in all_names:
        path = folder / f"{name}.json"
        raw = path.read_bytes()
        try:
            content = loads_json(raw)
            level = Level.from_rows(content["grid"], max_steps=int(content.get("max_steps", DEFAULT_MAX_STEPS)))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, LevelError) as exc:
            raise ResourceError(f"{path.name} is not a GridWalk level: {exc}") from None
        distance = level.distance(level.start)
        found.append(ImportedScenario(
            key=name, in_mini=name in mini_names, in_full=True,
            data={"grid": level.to_rows(), "max_steps": level.max_steps, "initial_distance": distance,
                  "route": level.route(level.start)},
            tags={"size": f"{level.rows}x{level.cols}",
                  "route": "short" if distance is not None and distance <= SHORT_ROUTE else "long",
                  # The analysis panel's axis (evaluators.gridwalk.analysis).
                  "distance": distance},
            content_hash=hashlib.sha256(raw).hexdigest(),
        ))
    return found
