"""Imports point down the layers the README's Architecture section draws.

evaluators (plain Python) < leaderboard's catalogue, accounts < submissions < pages, APIs and boards.
Imports only named for type checkers (under ``if TYPE_CHECKING:``) do not count: they run nowhere.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The top of every app: pages, APIs, templates' helpers, admin and URL wiring may import anything.
TOP = ("views.py", "team_views.py", "apis.py", "analysis_views.py", "cost_views.py", "admin.py", "urls.py",
       "templatetags", "tests", "migrations")

#: What submissions may never import: the boards and every page.
BOARDS = ("leaderboard.selectors", "leaderboard.analysis", "leaderboard.views", "leaderboard.apis",
          "leaderboard.analysis_views", "accounts.views", "submissions.views", "submissions.apis")


def _imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, module) of every import that runs, at module level or inside functions."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module


def _dotted(path: Path) -> str:
    """The module a file under ROOT is imported as (a package by its folder)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _forbidden(module: str, forbidden: tuple[str, ...]) -> bool:
    """Whether ``module`` is one of ``forbidden`` or inside one of them (a package's modules)."""
    return any(module == name or module.startswith(name + ".") for name in forbidden)


def _modules(app: str, *, leave_out: tuple[str, ...] = ()) -> list[Path]:
    files = []
    for path in sorted((ROOT / app).rglob("*.py")):
        parts = path.relative_to(ROOT / app).parts
        if any(part in TOP or part in leave_out for part in parts):
            continue
        files.append(path)
    return files


def _offenders(files: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in files:
        for line, module in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if _forbidden(module, forbidden):
                found.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return found


def test_evaluators_is_plain_python_apart_from_its_app_config() -> None:
    files = [p for p in _modules("evaluators") if p.name != "apps.py"]
    assert _offenders(files, ("django", "rest_framework", "celery", "config", "accounts", "leaderboard",
                              "submissions")) == []


def test_accounts_builds_on_nothing_of_submissions_or_the_boards() -> None:
    # Its pages and admin too: the team's page, which lists submissions, is submissions' own.
    everything = [p for p in sorted((ROOT / "accounts").rglob("*.py")) if "tests" not in p.parts]
    assert _offenders(everything, ("submissions", "leaderboard")) == []


@pytest.mark.parametrize("module", ["models.py", "catalogue.py", "prompt_sets.py", "services.py", "stats.py",
                                    "management/commands/import_magebench.py"])
def test_the_scenario_catalogue_sits_below_submissions(module: str) -> None:
    assert _offenders([ROOT / "leaderboard" / module], ("submissions", "accounts")) == []


def test_submissions_reads_the_catalogue_but_never_the_boards_or_any_page() -> None:
    assert _offenders(_modules("submissions", leave_out=("cli.py",)), BOARDS) == []


def test_the_rules_reach_every_module_of_a_package() -> None:
    # A rule that missed a package's modules would pass whatever they import.
    checked = {path.relative_to(ROOT).as_posix() for path in _modules("submissions", leave_out=("cli.py",))}
    uploads = {path.relative_to(ROOT).as_posix() for path in (ROOT / "submissions" / "uploads").glob("*.py")}
    assert uploads and uploads <= checked
    selectors = sorted((ROOT / "leaderboard" / "selectors").glob("*.py"))
    assert selectors and all(_forbidden(_dotted(path), BOARDS) for path in selectors)
