"""Reading Sokoban levels from a MageBench ``resources/`` directory (official layout).

``Sokoban_all.json`` / ``Sokoban_mini.json`` list the levels; ``Sokoban/<name>.pkl`` are pickled
gym-sokoban environments and ``Sokoban/upper_bound.json`` holds each level's optimal reward. The
pickles run code when loaded, so this module is only ever pointed at a directory an administrator
named on the command line, never at uploaded files.
"""
from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluators.base import ImportedScenario, ResourceError
from evaluators.checkout_files import loads_json
from evaluators.resources import read_listed_files

if TYPE_CHECKING:  # pragma: no cover
    from evaluators.sokoban.solver import Solution

#: Verifying an official upper bound must not stall an import on one hard level.
VERIFY_BUDGET_SECONDS = 60.0
_NAME = re.compile(r"^(?P<id>\d+)-Sokoban-(?P<variant>[\w.-]+)$")


def discover_sokoban(resources: Path, *, verify: bool = True) -> list[ImportedScenario]:
    from evaluators.sokoban.levels import load_pickled_env, scenario_data_from_env
    from evaluators.sokoban.solver import SolverBudgetExceeded, Unsolvable

    folder, all_names, mini_names = read_listed_files(resources, "Sokoban", ".pkl", "levels")
    bounds: dict[str, Any] = {}
    bound_file = folder / "upper_bound.json"
    if bound_file.exists():
        try:
            bounds = loads_json(bound_file.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ResourceError(f"upper_bound.json is not valid JSON: {exc}") from None

    found: list[ImportedScenario] = []
    for name in all_names:
        match = _NAME.match(name)
        variant = match.group("variant") if match else "custom"
        pkl = folder / f"{name}.pkl"
        try:
            env = load_pickled_env(pkl)
            data = scenario_data_from_env(env, variant)
        except Exception as exc:  # noqa: BLE001 - any unreadable pickle is a resource error
            raise ResourceError(f"{pkl.name} is not a readable gym-sokoban level: {exc}") from None
        warnings: list[str] = []
        bound = bounds.get(name)
        solution = None
        if verify or bound is None:
            try:
                solution = _optimal(data["grid"])
            except SolverBudgetExceeded:
                warnings.append(f"{name}: upper bound not verified (solver budget of {VERIFY_BUDGET_SECONDS:.0f}s)")
            except Unsolvable:
                warnings.append(f"{name}: the level has no solution")
        if bound is None:
            if solution is None:
                raise ResourceError(f"{name} has no upper_bound.json entry and could not be solved")
            bound = {"actions": list(solution.letters), "steps": solution.steps, "reward": solution.reward}
            warnings.append(f"{name}: no upper_bound.json entry; computed R_ub = {solution.reward}")
        elif solution is not None and abs(float(bound["reward"]) - solution.reward) > 1e-6:
            warnings.append(
                f"{name}: upper_bound.json says R_ub = {bound['reward']} but the optimal solution gives "
                f"{solution.reward} ({solution.steps} steps); the official value is kept"
            )
        data["upper_bound"] = {"actions": list(bound.get("actions", [])), "steps": int(bound.get("steps", 0)),
                               "reward": float(bound["reward"])}
        if solution is not None:
            data["optimal"] = {"steps": solution.steps, "reward": solution.reward}
        digest = hashlib.sha256(pkl.read_bytes())
        digest.update(json.dumps(data["upper_bound"], sort_keys=True).encode())
        found.append(ImportedScenario(
            key=name, in_mini=name in mini_names, in_full=True, data=data,
            tags={"variant": variant, "boxes": data["num_boxes"], "size": "x".join(map(str, data["dim_room"])),
                  "optimal_steps": data["upper_bound"]["steps"]},
            content_hash=digest.hexdigest(), resource_file=pkl, warnings=warnings,
        ))
    return found


@lru_cache(maxsize=1024)
def _optimal(grid: str) -> Solution:
    """The level's move-optimal solution, searched for once per process: a grid's solution never
    changes, and importing a checkout again verifies the same levels. A search that fails (no
    solution, or out of budget) raises and is not kept."""
    from evaluators.sokoban.solver import solve_grid

    return solve_grid(grid, time_budget=VERIFY_BUDGET_SECONDS)
