"""Imports point down the layers the README's Architecture section draws, and go round in no circle.

Plain Python (evaluators, the scoring maths, the command-line client, the backup tool) < the site's configuration
< catalogue < accounts < submissions < leaderboard (the boards) < the URL wiring and the benches.
Every module counts, pages and admin included; only tests and migrations are left out. Imports only
named for type checkers (under ``if TYPE_CHECKING:``) do not count: they run nowhere. Imports inside
functions count: they run all the same, only later.
"""
from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The command-line client is a package of its own, in client/ (client/pyproject.toml).
CLIENT = ROOT / "client"

#: The project's packages; fixtures/ holds data in the official layout and scripts/ no Python.
PACKAGES = ("accounts", "bench", "catalogue", "config", "deploy", "evaluators", "leaderboard", "magebench_client",
            "monitoring", "scoring", "submissions")

#: Bottom to top. A module imports from its own unit or the layers below; units of one layer import
#: nothing of each other. A name covers a package's modules; the longest name that fits is a module's.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("evaluators", "scoring", "magebench_client", "deploy"),
    ("config",),
    ("catalogue",),
    ("accounts",),
    ("submissions",),
    # monitoring reads the submissions' records for /metrics; nothing imports it (MIDDLEWARE names it).
    ("leaderboard", "monitoring"),
    ("config.urls", "bench"),
)

#: Every app and framework of the site: what the plain-Python packages never import.
SITE = ("django", "rest_framework", "celery", "config", "accounts", "catalogue", "leaderboard", "monitoring",
        "submissions", "evaluators", "scoring")

#: Every page, as a module: what neither the board cache nor its warm imports (the warm computes the
#: pages' data, and renders none of them).
PAGES = ("leaderboard.views", "leaderboard.apis", "leaderboard.analysis_views", "leaderboard.cost_views",
         "leaderboard.submission_views", "leaderboard.templatetags", "accounts.views", "submissions.views",
         "submissions.team_views", "submissions.apis", "submissions.upload_apis", "config.urls")

#: The import cycles left, each inside one of these groups (a name covers a package's modules too). A
#: new cycle, or one reaching a module outside its group, fails; a group whose cycle is cut may go.
KNOWN_CYCLES: tuple[tuple[str, ...], ...] = ()


def _home(package: str, root: Path = ROOT) -> Path:
    """The folder ``package`` lives in: the client's is client/, every other package's the root."""
    return root / "client" if package == "magebench_client" else root


def _dotted(path: Path, root: Path = ROOT) -> str:
    """The module a file under ``root`` is imported as (a package by its folder)."""
    if path.is_relative_to(root / "client" / "magebench_client"):
        root = root / "client"
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


Import = tuple[int, str, tuple[str, ...]]


def _imports(path: Path, root: Path = ROOT) -> tuple[Import, ...]:
    """(line, module, names imported from it) of every import that runs, at module level or inside
    functions; relative imports as the absolute module they name."""
    # Several tests read every module of the project: each file is parsed once per version of it.
    stat = path.stat()
    return _imports_of_version(path, root, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _imports_of_version(path: Path, root: Path, _mtime_ns: int, _size: int) -> tuple[Import, ...]:
    return tuple(_parsed_imports(path, root))


def _parsed_imports(path: Path, root: Path) -> Iterator[Import]:
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
    files = {_dotted(path, root): path for package in packages
             for path in sorted((_home(package, root) / package).rglob("*.py"))
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


def _unit(module: str) -> tuple[int, str] | None:
    """(layer, unit) of a project module: the longest unit name that fits it; None outside the project."""
    fitting = [(len(unit), index, unit) for index, layer in enumerate(LAYERS) for unit in layer
               if module == unit or module.startswith(unit + ".")]
    if not fitting:
        return None
    _, index, unit = max(fitting)
    return index, unit


def _sources(package: str) -> list[Path]:
    return [path for path in sorted((_home(package) / package).rglob("*.py"))
            if "tests" not in path.relative_to(ROOT).parts and "migrations" not in path.parts]


def _upward(path: Path) -> list[str]:
    """The imports of ``path`` that reach a unit above its own, or another unit of its layer."""
    own = _unit(_dotted(path))
    assert own is not None, path
    found = []
    for line, module, names in _imports(path):
        for name in (module, *(f"{module}.{name}" for name in names)):
            target = _unit(name)
            if target is not None and target[1] != own[1] and target[0] >= own[0]:
                found.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
                break
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_imports_a_layer_above_its_own(package: str) -> None:
    upward = [line for path in _sources(package) for line in _upward(path)]
    assert upward == []


def test_every_module_of_the_project_sits_in_a_layer() -> None:
    # A module outside every layer would pass whatever it imports.
    outside = [str(path.relative_to(ROOT)) for package in PACKAGES for path in _sources(package)
               if _unit(_dotted(path)) is None]
    assert outside == []


def test_the_apps_import_graph_runs_one_way() -> None:
    # The same rule read from the import graph: units joined by their modules' imports form no circle,
    # and every edge points down the layers.
    graph = _import_graph(ROOT, PACKAGES)
    units: dict[str, set[str]] = {}
    order: dict[str, int] = {}
    for module, targets in graph.items():
        own = _unit(module)
        assert own is not None, module
        order[own[1]] = own[0]
        for target in targets:
            other = _unit(target)
            if other is not None and other[1] != own[1]:
                units.setdefault(own[1], set()).add(other[1])
                order[other[1]] = other[0]
    assert _cycles(units) == []
    assert sorted((unit, target) for unit, targets in units.items() for target in targets
                  if order[target] >= order[unit]) == []


def test_the_layer_rule_catches_an_app_importing_the_one_above(tmp_path: Path) -> None:
    # A rule that saw nothing would pass on anything.
    (tmp_path / "submissions").mkdir()
    (tmp_path / "submissions" / "__init__.py").write_text("")
    below = tmp_path / "submissions" / "views.py"
    below.write_text("def page():\n    from leaderboard.selectors import board_get\n")
    imports = [name for _, module, names in _imports(below, tmp_path) for name in (module,)]
    assert imports == ["leaderboard.selectors"]
    assert _unit("leaderboard.selectors") == (5, "leaderboard") and _unit("submissions.views") == (4, "submissions")
    assert _unit("config.urls") == (6, "config.urls") and _unit("config.env") == (1, "config")


def test_evaluators_is_plain_python_apart_from_its_app_config() -> None:
    files = [p for p in _sources("evaluators") if p.name != "apps.py"]
    assert _offenders(files, SITE, allowed=("evaluators",)) == []


def test_the_scoring_maths_is_plain_python_that_imports_no_app() -> None:
    assert _offenders(_sources("scoring"), SITE, allowed=("scoring",)) == []


def test_the_command_line_client_imports_nothing_of_the_site() -> None:
    assert _offenders(sorted((CLIENT / "magebench_client").rglob("*.py")), SITE) == []
    # The client lives in its own folder: the layer checks read it there, under its own name.
    assert {"magebench_client.cli", "magebench_client.csv_safe"} <= set(_import_graph(ROOT, PACKAGES))


def test_the_command_line_client_needs_only_the_standard_library_and_requests() -> None:
    # Submitters copy the folder to any machine with requests installed.
    needed = {module.partition(".")[0] for path in sorted((CLIENT / "magebench_client").rglob("*.py"))
              if "tests" not in path.parts for _, module, _ in _imports(path)}
    assert needed - set(sys.stdlib_module_names) - {"magebench_client"} == {"requests"}


def test_the_backup_tool_needs_only_the_standard_library() -> None:
    # A restore runs into an empty stack, before any secret exists: the site's settings cannot load.
    needed = {module.partition(".")[0] for path in _sources("deploy") for _, module, _ in _imports(path)}
    assert needed - set(sys.stdlib_module_names) == {"deploy"}


def test_the_board_cache_sits_below_the_pages_and_what_warms_it() -> None:
    # The warm reads the selectors, which read the cache, so the cache sends it by name.
    forbidden = (*PAGES, "leaderboard.warming", "leaderboard.tasks")
    assert _offenders([ROOT / "leaderboard" / "cache.py"], forbidden) == []


def test_the_warm_imports_no_page_and_nothing_the_pages_import_a_page_through() -> None:
    # The warm fills the selectors' cached reads; the pages render from them on their own requests.
    warm = [ROOT / "leaderboard" / "warming.py", ROOT / "leaderboard" / "tasks.py"]
    assert _offenders(warm, PAGES) == []
    graph = _import_graph(ROOT, PACKAGES)
    reached, todo = set(), ["leaderboard.warming"]
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo.extend(graph.get(module, ()))
    assert sorted(module for module in reached if _forbidden(module, PAGES)) == []


#: Modules allowed Django's test tools outside tests, each for a reason: the latency bench requests the
#: pages as a visitor does, through the test client, on a developer's machine; no process of the site runs it.
TEST_TOOLS_ALLOWED = ("bench.board_latency",)


def test_no_module_of_the_site_imports_django_s_test_tools() -> None:
    # A web or worker process building requests by hand (a RequestFactory) bypasses the middleware and
    # the throttles that real requests go through.
    offenders = [found for package in PACKAGES for path in _sources(package)
                 if path.name != "conftest.py" and _dotted(path) not in TEST_TOOLS_ALLOWED
                 for found in _offenders([path], ("django.test",))]
    assert offenders == []


def test_the_test_tools_rule_sees_an_import_of_them(tmp_path: Path) -> None:
    # A rule that saw nothing would pass on anything.
    (tmp_path / "warm.py").write_text("def warm():\n    from django.test import RequestFactory\n")
    assert [module for _, module, _ in _imports(tmp_path / "warm.py", tmp_path)] == ["django.test"]


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
    # The warm reads the selectors, which read the cache: the cache sends it by name.
    graph = _import_graph(ROOT, PACKAGES)
    assert "leaderboard.tasks" not in graph["leaderboard.cache"]
    rendering = ("leaderboard.tasks", "leaderboard.warming", *PAGES)
    assert [sorted(cycle) for cycle in _cycles(graph) if any(_forbidden(m, rendering) for m in cycle)] == []
