"""Reading Small Go positions from a resources directory in the official layout.

``SmallGo_all.json`` / ``SmallGo_mini.json`` list the positions; ``SmallGo/<name>.json`` holds one:
``{"rows": [...], "komi": 0.5, "level": 1, "seed": 1, "max_moves": 20}`` (rows as in
:mod:`.board`; the engine's level and seed fix White's answers).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluators.base import ImportedScenario
from evaluators.resources import discover_json_files

from .board import BLACK, WHITE, Position
from .env import DEFAULT_MAX_MOVES

TITLE = "SmallGo"
#: The bundled positions, imported by the tests and by anyone trying the environment out.
FIXTURE_RESOURCES = Path(__file__).resolve().parent / "fixtures" / "resources"


def discover_smallgo(resources: Path) -> list[ImportedScenario]:
    return discover_json_files(resources, TITLE, ("a Small Go position", "positions"), _position)


def _position(content: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    position = Position.from_rows(content["rows"])
    data = {"rows": position.to_rows(), "komi": float(content.get("komi", 0.5)),
            "level": int(content.get("level", 1)), "seed": int(content.get("seed", 1)),
            "max_moves": int(content.get("max_moves", DEFAULT_MAX_MOVES))}
    opening = "empty" if not position.stones(BLACK) | position.stones(WHITE) else "set"
    return data, {"size": f"{position.size}x{position.size}", "opening": opening}
