"""Imports point down the layers the README's Architecture section draws, and go round in no circle.

magebench_client, evaluators (plain Python) < leaderboard's catalogue, accounts < submissions < pages,
APIs and boards. Imports only named for type checkers (under ``if TYPE_CHECKING:``) do not count: they
run nowhere. Imports inside functions count: they run all the same, only later.
"""
from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The project's packages; fixtures/ holds data in the official layout and scripts/ no Python.
PACKAGES = ("accounts", "bench", "config", "evaluators", "leaderboard", "magebench_client", "submissions")

#: The top of every app: pages, APIs, templates' helpers, admin and URL wiring may import anything.
TOP = ("views.py", "team_views.py", "apis.py", "analysis_views.py", "cost_views.py", "admin.py", "urls.py",
       "templatetags", "tests", "migrations")

#: Every app and framework of the site: what the plain-Python packages never import.
SITE = ("django", "rest_framework", "celery", "config", "accounts", "leaderboard", "submissions", "evaluators")

#: Every page, as a module: what nothing below the pages imports.
PAGES = ("leaderboard.views", "leaderboard.apis", "leaderboard.analysis_views", "leaderboard.cost_views",
         "leaderboard.admin", "leaderboard.urls", "leaderboard.templatetags", "accounts.views", "accounts.admin",
         "accounts.urls", "submissions.views", "submissions.team_views", "submissions.apis", "submissions.admin",
         "submissions.urls", "submissions.templatetags", "config.urls")

#: What submissions may never import: the boards (with what they store, and the warm that rebuilds their
#: pages) and every page.
BOARDS = ("leaderboard.selectors", "leaderboard.analysis", "leaderboard.stored", "leaderboard.warming",
          "leaderboard.tasks", "leaderboard.views", "leaderboard.apis", "leaderboard.analysis_views",
          "leaderboard.cost_views", "accounts.views", "submissions.views", "submissions.team_views",
          "submissions.apis")

#: leaderboard's modules below submissions, by what they may import.
CATALOGUE = ("models.py", "catalogue.py", "prompt_sets.py", "services.py", "management/commands/import_magebench.py")
PURE_MATHS = ("cost.py", "ordering.py", "stats.py")
BELOW_THE_PAGES = ("cache.py",)
#: The app's wiring: its config and the templates' context, which may import anything.
WIRING = ("apps.py", "context_processors.py")

#: The import cycles left, each inside one of these groups (a name covers a package's modules too). A
#: new cycle, or one reaching a module outside its group, fails; a group whose cycle is cut may go.
KNOWN_CYCLES = (
    # The plug-in interface, the flows and baseline agents it runs, the settings they read and the check
    # of a plug-in against the interface.
    ("evaluators.base", "evaluators.agents", "evaluators.baselines", "evaluators.settings", "evaluators.conformance"),
    # Sokoban's plug-in names its baselines, which play through the plug-in.
    ("evaluators.sokoban.plugin", "evaluators.sokoban.baselines"),
    # A change to a board stores its aggregates, which are computed by the board's selectors.
    ("leaderboard.cache", "leaderboard.stored", "leaderboard.analysis", "leaderboard.selectors"),
    # Services queue attempts through the tasks, which run them through the engine and the watchdog.
    ("submissions.services", "submissions.tasks", "submissions.engine", "submissions.watchdog"),
)


def _dotted(path: Path, root: Path = ROOT) -> str:
    """The module a file under ``root`` is imported as (a package by its folder)."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, root: Path = ROOT) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names imported from it) of every import that runs, at module level or inside
    functions; relative imports as the absolute module they name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _dotted(path, root) if path.name == "__init__.py" else _dotted(path, root).rpartition(".")[0]
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            yield node.lineno, module, tuple(alias.name for alias in node.names)


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


def _offenders(files: list[Path], forbidden: tuple[str, ...], *, allowed: tuple[str, ...] = ()) -> list[str]:
    found = []
    for path in files:
        for line, module, names in _imports(path):
            # `from leaderboard import views` imports leaderboard.views.
            for name in (module, *(f"{module}.{name}" for name in names)):
                if _forbidden(name, forbidden) and not _forbidden(name, allowed):
                    found.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
                    break
    return found


def _import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Each module of ``packages`` (tests and migrations left out) and the project's modules it imports."""
    files = {_dotted(path, root): path for package in packages for path in sorted((root / package).rglob("*.py"))
             if "tests" not in path.parts and "migrations" not in path.parts}

    def known(name: str) -> str:
        # A name inside a module (a function, a class) is an import of the module.
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        targets = set()
        for _, imported, names in _imports(path, root):
            submodules = {f"{imported}.{name}" for name in names if f"{imported}.{name}" in files}
            targets |= submodules
            if len(submodules) < len(names) or not names:
                targets.add(known(imported))
        graph[module] = targets - {"", module}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The groups of modules that import one another, directly or round a circle (Tarjan's strongly
    connected components, of two modules or more)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph.get(module, ()):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = set()
            while (member := stack.pop()) != module:
                group.add(member)
            if group:
                found.append(group | {module})

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for module in sorted(graph):
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_evaluators_is_plain_python_apart_from_its_app_config() -> None:
    files = [p for p in _modules("evaluators") if p.name != "apps.py"]
    assert _offenders(files, SITE, allowed=("evaluators",)) == []


def test_the_command_line_client_imports_nothing_of_the_site() -> None:
    assert _offenders(sorted((ROOT / "magebench_client").rglob("*.py")), SITE) == []


def test_the_command_line_client_needs_only_the_standard_library_and_requests() -> None:
    # Submitters copy the folder to any machine with requests installed.
    needed = {module.partition(".")[0] for path in sorted((ROOT / "magebench_client").rglob("*.py"))
              if "tests" not in path.parts for _, module, _ in _imports(path)}
    assert needed - set(sys.stdlib_module_names) - {"magebench_client"} == {"requests"}


def test_accounts_builds_on_nothing_of_submissions_or_the_boards() -> None:
    # Its pages and admin too: the team's page, which lists submissions, is submissions' own.
    everything = [p for p in sorted((ROOT / "accounts").rglob("*.py")) if "tests" not in p.parts]
    assert _offenders(everything, ("submissions", "leaderboard")) == []


@pytest.mark.parametrize("module", CATALOGUE)
def test_the_scenario_catalogue_sits_below_submissions(module: str) -> None:
    assert _offenders([ROOT / "leaderboard" / module], ("submissions", "accounts")) == []


@pytest.mark.parametrize("module", PURE_MATHS)
def test_the_boards_maths_is_plain_python_that_imports_no_app(module: str) -> None:
    # Each may use another: they are one layer.
    pure = tuple(f"leaderboard.{name.removesuffix('.py')}" for name in PURE_MATHS)
    assert _offenders([ROOT / "leaderboard" / module], SITE, allowed=pure) == []


@pytest.mark.parametrize("module", BELOW_THE_PAGES)
def test_the_board_cache_sits_below_the_pages_and_what_renders_them(module: str) -> None:
    # submissions and the catalogue drop cached boards after a write, so it imports neither submissions
    # nor accounts; the warm renders pages through the views, so the cache sends it by name.
    forbidden = (*PAGES, "leaderboard.warming", "leaderboard.tasks", "submissions", "accounts")
    assert _offenders([ROOT / "leaderboard" / module], forbidden) == []


def test_submissions_reads_the_catalogue_but_never_the_boards_or_any_page() -> None:
    assert _offenders(_modules("submissions"), BOARDS) == []


def test_the_rules_reach_every_module_of_a_package() -> None:
    # A rule that missed a package's modules would pass whatever they import.
    checked = {path.relative_to(ROOT).as_posix() for path in _modules("submissions")}
    uploads = {path.relative_to(ROOT).as_posix() for path in (ROOT / "submissions" / "uploads").glob("*.py")}
    assert uploads and uploads <= checked
    selectors = sorted((ROOT / "leaderboard" / "selectors").glob("*.py"))
    assert selectors and all(_forbidden(_dotted(path), BOARDS) for path in selectors)


def test_every_module_of_leaderboard_outside_its_pages_is_under_a_rule() -> None:
    # leaderboard has a part on each side of submissions: each module is either below (a rule says what
    # it may import) or above (submissions may not import it).
    ruled = {*CATALOGUE, *PURE_MATHS, *BELOW_THE_PAGES, *WIRING}
    unruled = []
    for path in _modules("leaderboard"):
        name = path.relative_to(ROOT / "leaderboard").as_posix()
        if name in ruled or _forbidden(_dotted(path), BOARDS):
            continue
        if path.name == "__init__.py" and not list(_imports(path)):
            continue
        unruled.append(name)
    assert unruled == []


def test_the_import_cycle_finder_follows_imports_inside_functions_but_not_those_for_type_checkers(
        tmp_path: Path) -> None:
    # A finder that saw nothing would pass on anything.
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "cache.py").write_text("def warm():\n    from app import tasks\n")
    (tmp_path / "app" / "tasks.py").write_text("from app.views import page\n")
    (tmp_path / "app" / "views.py").write_text("from .cache import warm\nfrom typing import TYPE_CHECKING\n"
                                               "if TYPE_CHECKING:\n    from app.typed import Hint\n")
    (tmp_path / "app" / "typed.py").write_text("from app.views import page\n")

    assert _cycles(_import_graph(tmp_path, ("app",))) == [{"app.cache", "app.tasks", "app.views"}]


def test_no_import_cycle_goes_beyond_the_ones_left() -> None:
    beyond = [sorted(cycle) for cycle in _cycles(_import_graph(ROOT, PACKAGES))
              if not any(all(_forbidden(module, group) for module in cycle) for group in KNOWN_CYCLES)]
    assert beyond == []


def test_the_board_cache_schedules_its_warm_without_an_import_circle_through_the_pages() -> None:
    # The warm renders pages through the views, which read the cache: the cache sends it by name.
    graph = _import_graph(ROOT, PACKAGES)
    assert "leaderboard.tasks" not in graph["leaderboard.cache"]
    rendering = ("leaderboard.tasks", "leaderboard.warming", *PAGES)
    assert [sorted(cycle) for cycle in _cycles(graph) if any(_forbidden(m, rendering) for m in cycle)] == []
