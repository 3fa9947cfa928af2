"""The scenario sets ("mini", "full") are named in one place: ``evaluators.declarations.SUBSETS``.

Everything else imports them, so a board, a form, an API field and a page cannot disagree on them. The
command-line client imports nothing of the site (test_layers), so it keeps its own copy, held equal here.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from config.tests.test_layers import PACKAGES, ROOT, _home
from evaluators.declarations import SUBSETS

#: Where the pair may be written out: the definition, and the client's copy of it.
CLIENT_CLI = ROOT / "client" / "magebench_client" / "cli.py"
HOMES = {ROOT / "evaluators" / "declarations.py", CLIENT_CLI}
#: Folders whose Python may spell the sets as it likes: tests and data, not the product's code.
LEFT_OUT = {"tests", "migrations", "fixtures", "bench"}


def _sources(root: Path = ROOT) -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((_home(package, root) / package).rglob("*.py")):
            if not LEFT_OUT & set(path.relative_to(root).parts):
                yield path


def spelled_out_pairs(path: Path) -> list[int]:
    """The lines of ``path`` with a tuple, list or set literal naming both "mini" and "full"."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            names = {elt.value for elt in node.elts if isinstance(elt, ast.Constant)}
            if {"mini", "full"} <= names:
                lines.append(node.lineno)
    return sorted(lines)


def test_the_sets_are_spelled_out_only_where_they_are_defined() -> None:
    offenders = [f"{path.relative_to(ROOT)}:{line}" for path in _sources() if path not in HOMES
                 for line in spelled_out_pairs(path)]
    assert offenders == []


def test_no_template_spells_out_the_sets() -> None:
    pages = sorted((ROOT / "templates").rglob("*.html"))
    assert pages
    offenders = [str(page.relative_to(ROOT)) for page in pages
                 if any(pair in page.read_text(encoding="utf-8") for pair in ('"mini", "full"', "'mini', 'full'"))]
    assert offenders == []


def test_the_command_line_client_names_the_same_sets_as_the_site() -> None:
    # Read from this tree's source: the installed client may be another checkout's.
    tree = ast.parse(CLIENT_CLI.read_text(encoding="utf-8"))
    client = [ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
              and [ast.unparse(target) for target in node.targets] == ["SUBSETS"]]
    assert client == [SUBSETS] == [("mini", "full")]


def test_the_check_finds_a_pair_written_out_as_choices(tmp_path: Path) -> None:
    module = tmp_path / "forms.py"
    module.write_text('subset = Field(choices=["mini", "full"])\nsizes = {"mini": 1, "full": 2}\n'
                      'fields = ("suite", "mini", "full")\n', encoding="utf-8")
    assert spelled_out_pairs(module) == [1, 3]
