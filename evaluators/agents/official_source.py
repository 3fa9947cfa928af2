"""The parsed files of an official checkout, and the :mod:`ast` lookups the readers share."""
from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from evaluators.agents.official_text import TextReader


class CheckoutError(ValueError):
    """An official checkout that is missing, or whose files are not as the platform reads them."""


def local_names(stmts: Sequence[ast.stmt]) -> dict[str, ast.expr | None]:
    """Simple ``name = value`` assignments among ``stmts`` (not nested); None for a name assigned twice."""
    names: dict[str, ast.expr | None] = {}
    for stmt in stmts:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            names[name] = None if name in names else stmt.value
    return names


def statement_bodies(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists directly inside a compound statement (not inside nested definitions)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return []
    bodies = [getattr(stmt, name) for name in ("body", "orelse", "finalbody")
              if isinstance(getattr(stmt, name, None), list)]
    bodies += [handler.body for handler in getattr(stmt, "handlers", [])]
    bodies += [case.body for case in getattr(stmt, "cases", [])]
    return bodies


def walk_statements(stmts: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement in ``stmts`` and, depth first, in their bodies (not in nested definitions)."""
    for stmt in stmts:
        yield stmt
        for body in statement_bodies(stmt):
            yield from walk_statements(body)


def enclosing(stmts: list[ast.stmt], target: ast.AST) -> list[tuple[list[ast.stmt], int]]:
    """The chain of (statement list, index) from ``stmts`` down to the statement holding ``target``."""
    for index, stmt in enumerate(stmts):
        if any(node is target for node in ast.walk(stmt)):
            for body in statement_bodies(stmt):
                inner = enclosing(body, target)
                if inner:
                    return [(stmts, index), *inner]
            return [(stmts, index)]
    return []


def assigned_before(stmts: list[ast.stmt], target: ast.AST, name: str) -> ast.Assign | None:
    """The nearest ``name = ...`` before ``target`` in its own statement list or an enclosing one
    (assignments inside sibling branches do not count)."""
    for body, index in reversed(enclosing(stmts, target)):
        for stmt in reversed(body[:index]):
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name):
                return stmt
    return None


def dict_value(node: ast.AST, key: str) -> ast.expr | None:
    """The value of the string key ``key`` in a dict literal; None when ``node`` is no such dict."""
    if not isinstance(node, ast.Dict):
        return None
    for k, v in zip(node.keys, node.values):
        if isinstance(k, ast.Constant) and k.value == key:
            return v
    return None


def text_part(node: ast.AST) -> ast.expr | None:
    """``X`` of a ``{"type": "text", "text": X}`` literal, else None."""
    kind = dict_value(node, "type")
    if isinstance(kind, ast.Constant) and kind.value == "text" and isinstance(node, ast.Dict) and len(node.keys) == 2:
        return dict_value(node, "text")
    return None


def is_source(node: ast.AST | None, source: str) -> bool:
    """Whether ``node`` is the expression ``source`` (compared as normalised source text)."""
    return node is not None and ast.unparse(node) == ast.unparse(ast.parse(source, mode="eval").body)


def method_calls(stmts: Sequence[ast.stmt], receiver: str, method: str) -> list[ast.Call]:
    """Calls ``receiver.method(...)`` anywhere in ``stmts``, in source order."""
    calls = [node for stmt in stmts for node in ast.walk(stmt)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr == method and is_source(node.func.value, receiver)]
    return sorted(calls, key=lambda c: (c.lineno, c.col_offset))


@dataclass(frozen=True)
class Message:
    """One ``{"role": ..., "content": ...}`` literal of a flow."""

    role: str
    content: ast.expr
    node: ast.Dict


@dataclass
class SourceFile:
    """One parsed file of the checkout."""

    path: str
    tree: ast.Module
    sha256: str

    def error(self, node: ast.AST | None, message: str) -> CheckoutError:
        line = getattr(node, "lineno", None)
        return CheckoutError(f"{self.path} line {line}: {message}" if line else f"{self.path}: {message}")

    def refused(self, node: ast.AST | None, message: str) -> CheckoutError:
        """The flow no longer builds its request the way the platform composes it."""
        return self.error(node, f"the request is no longer built as the platform composes it: {message}")

    def class_def(self, name: str) -> ast.ClassDef:
        for node in self.tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return node
        raise self.error(None, f"has no class {name}")

    def function(self, name: str) -> ast.FunctionDef:
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return node
        raise self.error(None, f"has no function {name}")

    def method(self, cls: str, name: str) -> ast.FunctionDef:
        """A method or property of a class (the last definition, as Python binds it)."""
        found = [node for node in self.class_def(cls).body if isinstance(node, ast.FunctionDef) and node.name == name]
        if not found:
            raise self.error(self.class_def(cls), f"{cls} has no method {name}")
        return found[-1]

    def reader(self, names: Mapping[str, ast.expr | None] | None = None,
               slots: Mapping[str, str] | None = None) -> TextReader:
        return TextReader(self, names, slots)

    def message_list(self, node: ast.expr | None, anchor: ast.AST) -> list[Message]:
        """The messages of a list literal of ``{"role": "...", "content": ...}`` dicts."""
        if not isinstance(node, ast.List):
            raise self.refused(node or anchor, f"{ast.unparse(node) if node else 'nothing'} is not a list of messages")
        return [self.message(item) for item in node.elts]

    def message(self, node: ast.AST) -> Message:
        role = dict_value(node, "role")
        content = dict_value(node, "content")
        if (not isinstance(node, ast.Dict) or len(node.keys) != 2 or not isinstance(role, ast.Constant)
                or not isinstance(role.value, str) or content is None):
            raise self.refused(node, f"{ast.unparse(node)} is not a message with a literal role and a content")
        return Message(role.value, content, node)

    def roles(self, messages: Sequence[Message], expected: Sequence[str], anchor: ast.AST) -> None:
        if [m.role for m in messages] != list(expected):
            raise self.refused(anchor, f"the messages have the roles {[m.role for m in messages]}, "
                                       f"not {list(expected)}")


def task_branch(source: SourceFile, function: ast.FunctionDef, task: str) -> list[ast.stmt]:
    """The body under ``if self.task == "<task>":`` (or an ``elif`` of the same chain) in ``function``."""
    for stmt in function.body:
        node: ast.stmt | None = stmt
        while isinstance(node, ast.If):
            test = node.test
            if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
                    and is_source(test.left, "self.task") and isinstance(test.comparators[0], ast.Constant)
                    and test.comparators[0].value == task):
                return node.body
            node = node.orelse[0] if len(node.orelse) == 1 else None
    raise source.error(function, f"{function.name} has no branch for self.task == {task!r}")


def returned_value(source: SourceFile, stmts: Sequence[ast.stmt], anchor: ast.AST) -> ast.expr:
    """The value of the one ``return`` among ``stmts`` (not nested)."""
    returns = [s for s in stmts if isinstance(s, ast.Return) and s.value is not None]
    if len(returns) != 1:
        raise source.error(anchor, f"{len(returns)} return statements with a value where one was expected")
    value = returns[0].value
    assert value is not None
    return value


def single_text_part(source: SourceFile, node: ast.expr, what: str) -> ast.expr:
    """``X`` of a ``[{"type": "text", "text": X}]`` literal: the platform sends ``what`` as one text part."""
    if not isinstance(node, ast.List) or len(node.elts) != 1 or text_part(node.elts[0]) is None:
        raise source.refused(node, f"{what} is no longer a list of one text part")
    value = text_part(node.elts[0])
    assert value is not None
    return value


def single_call(source: SourceFile, function: ast.FunctionDef, callee: str) -> ast.Call:
    """The one call of ``callee`` in ``function``."""
    calls = [n for n in ast.walk(function) if isinstance(n, ast.Call) and is_source(n.func, callee)]
    if len(calls) != 1:
        raise source.refused(function, f"{function.name} calls {callee} {len(calls)} times where once was expected")
    return calls[0]


def undeepcopied(node: ast.expr) -> ast.expr:
    """``x`` of ``deepcopy(x)``; ``node`` itself otherwise."""
    if isinstance(node, ast.Call) and is_source(node.func, "deepcopy") and len(node.args) == 1:
        return node.args[0]
    return node


def assigns(stmts: Sequence[ast.stmt], name: str) -> bool:
    """Whether ``name`` is assigned among ``stmts`` (not nested)."""
    return assigned_value(stmts, name) is not None


def assigned_value(stmts: Sequence[ast.stmt], name: str) -> ast.expr | None:
    """The value last assigned to ``name`` among ``stmts`` (not nested); None when there is none."""
    values = [s.value for s in stmts if isinstance(s, ast.Assign) and len(s.targets) == 1
              and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
    return values[-1] if values else None
