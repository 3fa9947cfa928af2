"""Outside the environments' own folders, nothing names an environment or its engine: the platform's
Python modules, requirements, scripts, Dockerfiles and compose files ask the registry instead, so that
adding an environment is its folder and removing the folder removes it.

The names come from the folders themselves: each plug-in's slug, and its engines, the third-party
modules only its folder imports. Tests, fixtures, docs, benches, migrations, comments and docstrings
may name environments (they speak about them); ``deploy/check/`` is the compose-level tests' harness.
"""
from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from evaluators.base import plugin_from_module
from evaluators.registry import BUILT_IN_FOLDER, built_in_environments

ROOT = Path(__file__).resolve().parents[2]

#: Folders that speak about environments rather than to them, and what is never the project's own.
_ASIDE = re.compile(r"(^|/)(tests|fixtures|docs|bench|migrations|node_modules|__pycache__|\.venv|\.git|build|var)/"
                    r"|^deploy/check/|(^|/)(conftest\.py|test_[^/]*\.py)$|\.md$")
#: The project's own top-level packages (never an engine).
_OWN = {"magebench_client"} | {path.parent.name for path in ROOT.glob("*/__init__.py")}


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    name: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.name}"


def _imports(files: Iterable[Path]) -> set[str]:
    """The top-level modules ``files`` import, absolute imports only."""
    found: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.partition(".")[0])
    return found


def _third_party(modules: set[str]) -> set[str]:
    return {name for name in modules if name not in sys.stdlib_module_names and name not in _OWN
            and name != "__future__"}


def _python_files(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*.py") if not _ASIDE.search(path.relative_to(ROOT).as_posix())]


def environment_names(root: Path = ROOT, folder: Path = BUILT_IN_FOLDER) -> dict[str, set[str]]:
    """Each built-in environment's slug with its engines: the third-party modules its folder imports
    that neither another environment's folder nor the platform's own code imports (those are shared
    libraries, not an environment's)."""
    modules = built_in_environments(folder)
    folders = {path: folder / path.rpartition(".")[2] for path in modules}
    own = {path: _third_party(_imports(_python_files(place))) for path, place in folders.items()}
    shared = _third_party(_imports(
        path for path in _python_files(root) if not any(path.is_relative_to(place) for place in folders.values())))
    names = {}
    for path in modules:
        others = set().union(*(imports for other, imports in own.items() if other != path))
        names[plugin_from_module(path).slug] = own[path] - others - shared
    return names


def name_pattern(names: dict[str, set[str]]) -> re.Pattern[str]:
    """A slug in any case that is not part of a longer lower-case word (``WebUIPlugin`` and
    ``MAGEBENCH_WEBUI_X`` name it, ``footballer`` does not), or an engine as imported or as its
    package is spelt (``gym_sokoban``, ``gym-sokoban``)."""
    slugs = [re.escape(slug) for slug in names]
    engines = [re.escape(engine).replace("_", "[-_.]") for engines in names.values() for engine in engines]
    # Engines first: where one holds a slug (gym-sokoban), the whole engine name is reported.
    return re.compile((rf"(?<![\w-])(?i:{'|'.join(engines)})(?!\w)|" if engines else "")
                      + rf"(?<![a-z])(?i:{'|'.join(slugs)})(?![a-z])")


def _docstring_lines(source: str) -> set[int]:
    """The lines of string statements (docstrings): prose about environments, as comments are."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            lines |= set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _python_hits(source: str, pattern: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    prose = _docstring_lines(source)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT or token.start[0] in prose:
            continue
        for match in pattern.finditer(token.string):
            yield token.start[0], match.group()


def _text_hits(source: str, pattern: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(source.splitlines(), 1):
        code = re.sub(r"(^|\s)#.*", "", line)  # shell, YAML, TOML, requirements and Dockerfile comments
        for match in pattern.finditer(code):
            yield number, match.group()


def _scanned(relative: str, path: Path) -> bool:
    """Python modules, requirements, scripts, Dockerfiles, compose files and the project's build file."""
    name = path.name
    return (name.endswith(".py") or relative.startswith(("requirements/", "scripts/"))
            or "Dockerfile" in name or name.endswith(".sh") or name == "pyproject.toml"
            or bool(re.fullmatch(r"(docker-)?compose[\w.-]*\.ya?ml", name))
            or (relative.startswith("docker/") and path.read_bytes()[:2] == b"#!"))


def environment_hits(root: Path, names: dict[str, set[str]], plugin_folders: Iterable[Path]) -> list[Hit]:
    """Every place outside ``plugin_folders`` (and what is aside) that names an environment or engine."""
    pattern = name_pattern(names)
    folders = list(plugin_folders)
    hits = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if (not path.is_file() or _ASIDE.search(relative) or any(path.is_relative_to(f) for f in folders)
                or not _scanned(relative, path)):
            continue
        source = path.read_text(encoding="utf-8", errors="replace")
        found = _python_hits(source, pattern) if path.suffix == ".py" else _text_hits(source, pattern)
        hits += [Hit(relative, line, name) for line, name in found]
    return hits


def _plugin_folders() -> list[Path]:
    return [BUILT_IN_FOLDER / path.rpartition(".")[2] for path in built_in_environments()]


def test_nothing_outside_the_environments_folders_names_an_environment_or_its_engine() -> None:
    hits = environment_hits(ROOT, environment_names(), _plugin_folders())
    assert not hits, "names an environment outside its folder:\n" + "\n".join(map(str, hits))


def test_the_names_are_each_folders_slug_and_the_engines_only_that_folder_imports() -> None:
    names = environment_names()
    assert set(names) == {plugin_from_module(path).slug for path in built_in_environments()}
    # Football's engine is gfootball (its Python package and its compiled engine); Sokoban's, gym-sokoban.
    assert names["football"] == {"gfootball", "gfootball_engine"}
    assert names["sokoban"] == {"gym_sokoban"}


def test_a_name_in_code_is_found_with_its_line_and_prose_about_it_is_not(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "views.py").write_text(
        '"""Shows a Kart board."""\n# kart: the default\nDEFAULT = "kart"\nclass KartPlugin: ...\n'
        'import kartengine\ncarts = "a kartel"\n', encoding="utf-8")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "base.txt").write_text("kart-engine==1.0  # kart\nrequests==2\n", encoding="utf-8")
    (tmp_path / "evaluators" / "kart").mkdir(parents=True)
    (tmp_path / "evaluators" / "kart" / "plugin.py").write_text('slug = "kart"\n', encoding="utf-8")
    (tmp_path / "app" / "tests").mkdir()
    (tmp_path / "app" / "tests" / "test_views.py").write_text('"kart"\n', encoding="utf-8")
    names = {"kart": {"kartengine", "kart_engine"}}
    hits = environment_hits(tmp_path, names, [tmp_path / "evaluators" / "kart"])
    assert list(map(str, hits)) == ["app/views.py:3: kart", "app/views.py:4: Kart", "app/views.py:5: kartengine",
                                    "requirements/base.txt:1: kart-engine"]
