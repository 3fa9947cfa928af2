"""Reading Small Go positions from a resources directory in the official layout.

``SmallGo_all.json`` / ``SmallGo_mini.json`` list the positions; ``SmallGo/<name>.json`` holds one:
``{"rows": [...], "komi": 0.5, "level": 1, "seed": 1, "max_moves": 20}`` (rows as in
:mod:`.board`; the engine's level and seed fix White's answers).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from evaluators.base import ImportedScenario, ResourceError
from evaluators.checkout_files import loads_json
from evaluators.resources import read_listed_files

from .board import BLACK, WHITE, Position, PositionError
from .env import DEFAULT_MAX_MOVES

TITLE = "SmallGo"
#: The bundled positions, imported by the tests and by anyone trying the environment out.
FIXTURE_RESOURCES = Path(__file__).resolve().parent / "fixtures" / "resources"


def discover_smallgo(resources: Path) -> list[ImportedScenario]:
    folder, all_names, mini_names = read_listed_files(resources, TITLE, ".json", "positions")
    found: list[ImportedScenario] = []
    for name in all_names:
        path = folder / f"{name}.json"
        raw = path.read_bytes()
        try:
            content = loads_json(raw)
            position = Position.from_rows(content["rows"])
            data = {"rows": position.to_rows(), "komi": float(content.get("komi", 0.5)),
                    "level": int(content.get("level", 1)), "seed": int(content.get("seed", 1)),
                    "max_moves": int(content.get("max_moves", DEFAULT_MAX_MOVES))}
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, PositionError) as exc:
            raise ResourceError(f"{path.name} is not a Small Go position: {exc}") from None
        opening = "empty" if not position.stones(BLACK) | position.stones(WHITE) else "set"
        found.append(ImportedScenario(
            key=name, in_mini=name in mini_names, in_full=True, data=data,
            tags={"size": f"{position.size}x{position.size}", "opening": opening},
            content_hash=hashlib.sha256(raw).hexdigest(),
        ))
    return found
