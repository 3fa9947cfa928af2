"""Reading an operator's checkout as data: only what lies inside it, only as deep as a reader can follow.

A checkout is a folder of someone else's files. A symbolic link in it could make an import read (and
store, and show) a file of the server's own; a text nested tens of thousands deep makes Python's
parsers raise RecursionError, which would end the import in a traceback instead of a refusal that
names the file.
"""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path
from typing import Any

#: The deepest syntax tree read from a checkout's Python file. The official files nest at most 13
#: deep; the text reader and ast.unparse recurse about three frames a level, so this stays well
#: inside Python's default limit of 1000 frames, whatever the stack the import is called from.
MAX_SYNTAX_DEPTH = 100


class TooDeep(ValueError):
    """A text nested more deeply than it is read."""


def link_out_of(root: Path, path: Path) -> tuple[Path, Path] | None:
    """The first symbolic link on the way from ``root`` to ``path`` that leads out of ``root``, with
    where it leads; None when ``path`` stays inside (links within the checkout are fine)."""
    inside = root.resolve()
    relative = path.relative_to(root)
    current = root
    for part in relative.parts:
        current = current / part
        if current.is_symlink():
            target = current.resolve()
            if not target.is_relative_to(inside):
                return current.relative_to(root), target
    return None


def links_out_of(root: Path, folder: Path) -> list[tuple[Path, Path]]:
    """Every symbolic link under ``folder`` that leads out of ``root`` (each relative to ``root``, with
    where it leads), in a stable order. Links are not followed while looking."""
    inside = root.resolve()
    found = []
    for directory, folders, files in os.walk(folder, followlinks=False):
        for name in sorted(folders) + sorted(files):
            entry = Path(directory) / name
            if entry.is_symlink():
                target = entry.resolve()
                if not target.is_relative_to(inside):
                    found.append((entry.relative_to(root), target))
        folders.sort()
    return found


def parse_python(text: str, filename: str) -> ast.Module:
    """``text`` parsed (never run); TooDeep when it nests more than :data:`MAX_SYNTAX_DEPTH` deep or
    the parser itself runs out of room. SyntaxError and ValueError as ast.parse raises them."""
    try:
        tree = ast.parse(text, filename=filename)
    except (RecursionError, MemoryError):
        raise TooDeep("an expression is nested too deeply for the parser") from None
    node = deepest_beyond(tree, MAX_SYNTAX_DEPTH)
    if node is not None:
        line = getattr(node, "lineno", None)
        raise TooDeep(f"{f'line {line}: ' if line else ''}the code nests more than {MAX_SYNTAX_DEPTH} deep, "
                      f"deeper than it is read")
    return tree


def deepest_beyond(tree: ast.AST, limit: int) -> ast.AST | None:
    """The first node (with a line number, if its statement has one) nested more than ``limit`` deep,
    or None. Walked with a list, not recursion, so that a deep tree is measured without failing."""
    stack: list[tuple[ast.AST, int, ast.AST]] = [(tree, 0, tree)]
    while stack:
        node, depth, located = stack.pop()
        if hasattr(node, "lineno"):
            located = node
        if depth > limit:
            return located
        stack.extend((child, depth + 1, located) for child in ast.iter_child_nodes(node))
    return None


def loads_json(text: str | bytes) -> Any:
    """JSON from a checkout; TooDeep rather than RecursionError for a document nested too deeply."""
    try:
        return json.loads(text)
    except (RecursionError, MemoryError):
        raise TooDeep("the JSON is nested too deeply to read") from None
