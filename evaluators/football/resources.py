"""Reading Football scenarios from a MageBench ``resources/`` directory (official layout).

``Football_all.json`` / ``Football_mini.json`` list ``resources/Football/<name>.py`` files. Each file
is parsed, never run (``scenario.py``); the parsed builder calls are stored as the scenario's data.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from evaluators.base import ImportedScenario, ResourceError
from evaluators.football.scenario import FootballScenario, ScenarioFileError, parse_scenario
from evaluators.resources import read_listed_files

_NAME = re.compile(r"^R(?P<zone>[1-9])_(?P<category>[PRT])_(?P<index>\d+)$")
CATEGORIES = {"P": "personal", "T": "teamwork", "R": "real-world"}
LANES = ("top", "central", "bottom")
THIRDS = ("own", "middle", "attacking")


def zone_of(ball: tuple[float, float]) -> int:
    """The 3×3 zone (1–9) of a ball position: lanes top/central/bottom by y, thirds by x."""
    x, y = ball
    lane = 0 if y < -0.14 else 2 if y > 0.14 else 1
    third = 0 if x < -1 / 3 else 2 if x > 1 / 3 else 1
    return 1 + 3 * lane + third


def scenario_tags(name: str, scenario: FootballScenario) -> dict[str, Any]:
    match = _NAME.match(name)
    zone = int(match.group("zone")) if match else zone_of(scenario.ball)
    category = match.group("category") if match else "custom"
    lane, third = divmod(zone - 1, 3)
    return {
        "zone": f"R{zone}", "lane": LANES[lane], "third": THIRDS[third],
        "category": CATEGORIES.get(category, category),
        "players": f"{len(scenario.left)}v{len(scenario.right)}",
    }


def discover_football(resources: Path, *, verify: bool = True) -> list[ImportedScenario]:
    folder, all_names, mini_names = read_listed_files(resources, "Football", ".py", "scenarios")
    found: list[ImportedScenario] = []
    for name in all_names:
        path = folder / f"{name}.py"
        raw = path.read_bytes()
        try:
            scenario = parse_scenario(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise ResourceError(f"{path.name} is not UTF-8 text") from None
        except ScenarioFileError as exc:
            raise ResourceError(f"{path.name}: {exc}") from None
        if not scenario.left:
            raise ResourceError(f"{path.name}: the left team has no players")
        warnings = []
        if scenario.config.get("game_duration", 400) != 400:
            warnings.append(f"{name}: game_duration is {scenario.config['game_duration']}, not the official 400")
        tags = scenario_tags(name, scenario)
        found.append(ImportedScenario(
            key=name, in_mini=name in mini_names, in_full=True,
            data={"scenario": scenario.as_dict(), **{k: tags[k] for k in ("zone", "category")}},
            tags=tags, content_hash=hashlib.sha256(raw).hexdigest(), resource_file=path, warnings=warnings,
        ))
    return found
