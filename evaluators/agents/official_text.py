"""Texts of the official checkout's Python source, evaluated without running anything.

Only text expressions are read: string constants, ``+``, f-strings and ``"...".format(...)`` over
local texts. A part the flow fills at run time is kept as a :class:`Slot` of the template.
"""
from __future__ import annotations

import ast
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluators.agents.official_source import SourceFile


@dataclass(frozen=True)
class Slot:
    """A place in a template that the flow fills at run time (``{html}``)."""

    name: str


Segment = str | Slot


@dataclass(frozen=True)
class Text:
    """A text read from a checkout: literal pieces and slots, in order."""

    segments: tuple[Segment, ...]

    @property
    def slots(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.segments if isinstance(s, Slot))

    def template(self) -> str:
        """The text as a ``str.format`` template: literal braces doubled, slots as ``{name}``."""
        return "".join(
            "{" + s.name + "}" if isinstance(s, Slot) else s.replace("{", "{{").replace("}", "}}")
            for s in self.segments)

    def literal(self) -> str:
        return "".join(s for s in self.segments if isinstance(s, str))


def _join(parts: Sequence[Text]) -> Text:
    segments: list[Segment] = []
    for part in parts:
        for segment in part.segments:
            if isinstance(segment, str) and segments and isinstance(segments[-1], str):
                segments[-1] += segment
            elif segment != "":
                segments.append(segment)
    return Text(tuple(segments))


_UNSET = object()


class TextReader:
    """Evaluates text expressions of one checkout file without running anything.

    ``names`` are the local assignments in scope (name → expression, evaluated when used); ``slots``
    maps the source of an expression (``sts.cur_html``) to the template slot it stands for.
    Anything else raises :class:`CheckoutError` naming the file and line.
    """

    def __init__(self, source: SourceFile, names: Mapping[str, ast.expr | None] | None = None,
                 slots: Mapping[str, str] | None = None) -> None:
        self.source = source
        self.names = dict(names or {})
        self.slots = dict(slots or {})
        self._resolving: set[str] = set()

    def read(self, node: ast.expr) -> Text:
        slot = self.slots.get(ast.unparse(node))
        if slot is not None:
            return Text((Slot(slot),))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return Text((node.value,))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return _join([self.read(node.left), self.read(node.right)])
        if isinstance(node, ast.JoinedStr):
            return _join([self._f_string_part(value) for value in node.values])
        if isinstance(node, ast.Name):
            return self._name(node)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "format"):
            return self._format(node)
        raise self.source.error(node, f"the text is built from {ast.unparse(node)!r}, which is not read as a text "
                                      "(only string constants, +, f-strings and .format() of local texts are)")

    def text(self, node: ast.expr) -> str:
        """A text with no slot in it."""
        value = self.read(node)
        if value.slots:
            raise self.source.error(node, f"a plain text was expected, but it holds {ast.unparse(node)!r} parts "
                                          "that are filled at run time")
        return value.literal()

    def template(self, node: ast.expr, slots: Sequence[str]) -> str:
        """A template whose slots are exactly ``slots`` (each once, in that order)."""
        value = self.read(node)
        if list(value.slots) != list(slots):
            raise self.source.error(node, f"the template {ast.unparse(node)!r} fills {list(value.slots)} where "
                                          f"{list(slots)} was expected")
        return value.template()

    def _f_string_part(self, value: ast.expr) -> Text:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return Text((value.value,))
        if isinstance(value, ast.FormattedValue):
            if value.conversion != -1 or value.format_spec is not None:
                raise self.source.error(value, f"the f-string field of {ast.unparse(value.value)!r} has a "
                                               "conversion or format spec, which is not read as a text")
            return self.read(value.value)
        raise self.source.error(value, f"unexpected f-string part {ast.unparse(value)!r}")

    def _name(self, node: ast.Name) -> Text:
        value = self.names.get(node.id, _UNSET)
        if value is _UNSET:
            raise self.source.error(node, f"the text uses {node.id!r}, which is not a local text")
        if value is None:
            raise self.source.error(node, f"the text uses {node.id!r}, which is assigned more than once")
        if node.id in self._resolving:
            raise self.source.error(node, f"the text {node.id!r} refers to itself")
        assert isinstance(value, ast.expr)
        self._resolving.add(node.id)
        try:
            return self.read(value)
        finally:
            self._resolving.discard(node.id)

    def _format(self, node: ast.Call) -> Text:
        assert isinstance(node.func, ast.Attribute)
        base = self.read(node.func.value)
        if base.slots:
            raise self.source.error(node, "the template of .format() is itself filled at run time")
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.source.error(node, ".format() with * or ** arguments is not read as a text")
        positional = [self.read(a) for a in node.args]
        keywords = {k.arg: self.read(k.value) for k in node.keywords if k.arg is not None}
        pieces: list[Text] = []
        auto = 0
        try:
            parsed = list(string.Formatter().parse(base.literal()))
        except ValueError as exc:
            raise self.source.error(node, f"the template of .format() is malformed: {exc}") from None
        for literal, field, spec, conversion in parsed:
            pieces.append(Text((literal,)))
            if field is None:
                continue
            if spec or conversion:
                raise self.source.error(node, f"the .format() field {{{field}}} has a conversion or format spec")
            if field == "":
                field = str(auto)
                auto += 1
            if field.isdigit():
                index = int(field)
                if index >= len(positional):
                    raise self.source.error(node, f".format() has no argument {index}")
                pieces.append(positional[index])
            elif field in keywords:
                pieces.append(keywords[field])
            else:
                raise self.source.error(node, f".format() has no argument for the field {{{field}}}")
        return _join(pieces)
