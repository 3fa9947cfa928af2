"""An operator's checkout of the official MageBench harness, read as data.

The official prompts are Python source: properties returning strings (``env/*_env.py``), branches of
``special_prompt_for_task`` and the turns the flows add (``Flow/*.py``). The platform never imports,
runs or compiles those files: :class:`OfficialCheckout` parses them with :mod:`ast` and evaluates only
text expressions (string constants, ``+``, f-strings and ``"...".format(...)`` over local texts), so a
checkout cannot execute anything here. Every file read is hashed, and the digest of those hashes is
what a suite records of the checkout it read.

Reading the texts alone would not be enough: the platform composes the requests the way the
official flows do (``evaluators.agents.flows``), and a flow that changed how it builds its messages
would make correct texts arrive in the wrong places. So the flow readers below also check the
statements that build the messages (who gets the system prompt and in which form, where each turn
text is appended, that same-role messages are merged before sending) and refuse, with the file and
line, a flow that no longer builds them that way.

The environment plug-ins' ``official.py`` modules put the pieces together into prompt sets.
"""
from __future__ import annotations

import ast
import hashlib
import json
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from evaluators.base import PROMPTS_OFFICIAL, PromptSet

GLOBAL_FLOW = "Flow/GlobalPlanning.py"
ONLINE_FLOW = "Flow/Online_HL_FBandSB.py"
WEBUI_ONLINE_FLOW = "Flow/Online_Web_CoT_Natural.py"
CLIENT = "API/HF.py"
#: The folders that make a directory an official checkout.
REQUIRED_FOLDERS = ("Flow", "env")

#: Expressions of the WebUI Online flow that stand for the current code, by template slot.
WEBUI_CODE_SLOTS = {"html": "cur_html", "css": "cur_css", "javascript": "cur_js"}


class CheckoutError(ValueError):
    """An official checkout that is missing, or whose files are not as the platform reads them."""


# --- texts ------------------------------------------------------------------------------------


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


# --- files and statements ---------------------------------------------------------------------


def local_names(stmts: Sequence[ast.stmt]) -> dict[str, ast.expr | None]:
    """Simple ``name = value`` assignments among ``stmts`` (not nested); None for a name assigned twice."""
    names: dict[str, ast.expr | None] = {}
    for stmt in stmts:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            names[name] = None if name in names else stmt.value
    return names


def _bodies(stmt: ast.stmt) -> list[list[ast.stmt]]:
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
        for body in _bodies(stmt):
            yield from walk_statements(body)


def enclosing(stmts: list[ast.stmt], target: ast.AST) -> list[tuple[list[ast.stmt], int]]:
    """The chain of (statement list, index) from ``stmts`` down to the statement holding ``target``."""
    for index, stmt in enumerate(stmts):
        if any(node is target for node in ast.walk(stmt)):
            for body in _bodies(stmt):
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


# --- the checkout -----------------------------------------------------------------------------


@dataclass(frozen=True)
class GlobalFlowTexts:
    """What the official Global flow adds to the environment's texts."""

    unavailable_image: str


@dataclass(frozen=True)
class OnlineFlowTexts:
    """What the official Online flow (Sokoban, Football) adds to the environment's texts."""

    unavailable_image: str
    first_turn: str
    next_turn: str
    regenerate: str


class OfficialCheckout:
    """A checkout of the official harness at ``root`` (the folder holding ``Flow/`` and ``env/``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise CheckoutError(f"{self.root}: no such folder, so no official checkout is there")
        missing = [name for name in REQUIRED_FOLDERS if not (self.root / name).is_dir()]
        if missing:
            raise CheckoutError(f"{self.root} is not an official MageBench checkout: it has no "
                                + " and no ".join(f"{name}/ folder" for name in missing))
        self._files: dict[str, SourceFile] = {}

    @classmethod
    def beside(cls, resources: Path) -> OfficialCheckout | None:
        """The checkout whose ``resources/`` folder is ``resources``; None when its parent is none."""
        parent = Path(resources).resolve().parent
        if all((parent / name).is_dir() for name in REQUIRED_FOLDERS):
            return cls(parent)
        return None

    def __repr__(self) -> str:
        return f"OfficialCheckout({str(self.root)!r})"

    # files

    def source(self, path: str) -> SourceFile:
        """The parsed file ``path`` (relative, with /), read once; never imported or run."""
        cached = self._files.get(path)
        if cached is not None:
            return cached
        full = self.root / path
        if not full.is_file():
            raise CheckoutError(f"{path}: missing from the official checkout at {self.root}")
        data = full.read_bytes()
        try:
            text = data.decode("utf-8")
            tree = ast.parse(text, filename=path)
        except (UnicodeDecodeError, SyntaxError, ValueError) as exc:
            raise CheckoutError(f"{path}: cannot be read as Python source: {exc}") from None
        parsed = SourceFile(path, tree, hashlib.sha256(data).hexdigest())
        self._files[path] = parsed
        return parsed

    def files(self) -> dict[str, str]:
        """Relative path → sha256 of every file read so far."""
        return {path: self._files[path].sha256 for path in sorted(self._files)}

    def digest(self) -> str:
        """One sha256 over the files read so far (paths and their hashes, in path order)."""
        lines = "".join(f"{path}\0{sha}\n" for path, sha in self.files().items())
        return hashlib.sha256(lines.encode()).hexdigest()

    # texts of the environments

    def returned_text(self, path: str, cls: str, name: str) -> str:
        """The text a method or property of ``cls`` returns (``SokobanEnv.system_prompt``)."""
        source = self.source(path)
        function = source.method(cls, name)
        value = returned_value(source, function.body, function)
        return source.reader(local_names(function.body)).text(value)

    def task_text(self, path: str, cls: str, name: str, task: str) -> str:
        """The one text part that ``cls.name`` returns in its ``self.task == task`` branch."""
        source = self.source(path)
        function = source.method(cls, name)
        branch = task_branch(source, function, task)
        part = single_text_part(source, returned_value(source, branch, function),
                                f"{cls}.{name} for {task}")
        return source.reader({**local_names(function.body), **local_names(branch)}).text(part)

    def frame_lead(self, path: str, cls: str, methods: Sequence[str]) -> str:
        """The text an environment's observations carry right before their image (``o.add_text(...)``
        followed by ``o.add_image(...)``), the same in each of ``methods``; "" when none has one."""
        source = self.source(path)
        found: dict[str, str] = {}
        for name in methods:
            function = source.method(cls, name)
            reader = source.reader(local_names(function.body))
            bodies = [function.body] + [body for stmt in walk_statements(function.body) for body in _bodies(stmt)]
            texts = set()
            for body in bodies:
                for first, second in zip(body, body[1:]):
                    text, image = _observation_call(first, "add_text"), _observation_call(second, "add_image")
                    if text is not None and image is not None and text[0] == image[0]:
                        texts.add(reader.text(text[1]))
            if len(texts) > 1:
                raise source.error(function, f"{cls}.{name} puts different texts before its frames")
            found[name] = texts.pop() if texts else ""
        if len(set(found.values())) > 1:
            raise source.error(source.class_def(cls), f"{cls} puts different texts before its frames in "
                                                      + " and ".join(found))
        return next(iter(found.values()), "")

    # the flows

    def _flow_call(self, path: str, cls: str, generator: str) -> tuple[SourceFile, ast.FunctionDef, ast.Call]:
        """A flow file's ``cls.run`` and its one call of ``generator``, once the client is checked."""
        self.check_client()
        source = self.source(path)
        run = source.method(cls, "run")
        return source, run, _single_call(source, run, generator)

    def global_prompt_set(self, system: str, task: str, *, observation_lead: str = "") -> PromptSet:
        """The Global flow's prompt set for ``task``: the rules ``system``, the flow's format for the task
        and its text for a left-out image; the Online flow's regenerate text stands in for the one the
        Global flow lacks (sent only by the labelled parse-retry option)."""
        return build_prompt_set(
            system=system,
            format_instruction=self.task_text(GLOBAL_FLOW, "GlobalPlan", "special_prompt_for_task", task),
            regenerate=self.online_flow.regenerate, unavailable_image=self.global_flow.unavailable_image,
            observation_lead=observation_lead)

    @cached_property
    def global_flow(self) -> GlobalFlowTexts:
        """Checks Flow/GlobalPlanning.py's request and reads its own text."""
        source, run, call = self._flow_call(GLOBAL_FLOW, "GlobalPlan", "self.generator")
        messages = _traced_messages(source, run, call.args[0] if call.args else None, call)
        source.roles(messages, ["system", "user"], call)
        system, user = messages
        if not is_source(system.content, "self.env.system_prompt"):
            raise source.refused(system.node, "the system message's content is no longer self.env.system_prompt "
                                              "as a plain string")
        if not (isinstance(user.content, ast.BinOp) and isinstance(user.content.op, ast.Add)
                and isinstance(user.content.left, ast.Name)
                and is_source(user.content.right, "self.special_prompt_for_task")):
            raise source.refused(user.node, "the user message is no longer the task description followed by "
                                            "self.special_prompt_for_task")
        unavailable = _image_replacement(source, run, user.content.left.id)
        return GlobalFlowTexts(unavailable_image=unavailable)

    @cached_property
    def online_flow(self) -> OnlineFlowTexts:
        """Checks Flow/Online_HL_FBandSB.py's requests and reads its own texts."""
        source, run, call = self._flow_call(ONLINE_FLOW, "OnlinePlan", "self.generator")
        sent = call.args[0] if call.args else None
        if not isinstance(sent, ast.Name):
            raise source.refused(call, "the generator is no longer sent a named message list")
        assign = assigned_before(run.body, call, sent.id)
        value = assign.value if assign else None
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            opening, history = _undeepcopied(value.left), value.right
        else:
            opening, history = None, None
        if not isinstance(opening, ast.Name) or not isinstance(history, ast.Name):
            raise source.refused(assign or call, "the request is no longer the opening messages followed by the memory")

        # The opening: the rules as one text part, then the format instruction.
        user = _opening_user(source, run, opening, call)
        if not is_source(user.content, "self.special_prompt_for_task"):
            raise source.refused(user.node, "the first user message is no longer self.special_prompt_for_task")

        # Each round sends the opening and the memory, keeps the reply as one text part, then adds a
        # user turn of the observation and one text.
        chain = enclosing(run.body, call)
        loop = run.body[chain[0][1]]
        if len(chain) < 2 or not isinstance(loop, ast.For | ast.While):
            raise source.refused(call, "the generator is no longer called once per round of a loop")
        round_stmts = list(walk_statements(loop.body))
        for stmt in round_stmts:
            if (isinstance(stmt, ast.Assign) and any(is_source(t, history.id) for t in stmt.targets)
                    and not (isinstance(stmt.value, ast.Subscript) and is_source(stmt.value.value, history.id))):
                raise source.refused(stmt, f"the memory {history.id} is replaced during a round, not only cut")

        # The memory starts with the task description and the first turn's text.
        memory_start = _assigned_value(run.body[:chain[0][1]], history.id)
        first = source.message_list(memory_start, call)
        source.roles(first, ["user"], memory_start or call)
        content = first[0].content
        if not (isinstance(content, ast.BinOp) and isinstance(content.op, ast.Add)
                and isinstance(content.left, ast.Name) and isinstance(content.right, ast.List)):
            raise source.refused(first[0].node, "the memory no longer starts with the task description and one text")
        unavailable = _image_replacement(source, run, content.left.id)
        reader = source.reader({**local_names(run.body), **local_names(loop.body)})
        first_turn = reader.text(single_text_part(source, content.right, "the text after the task description"))

        appended = [source.message(c.args[0]) for c in method_calls(loop.body, history.id, "append")
                    if len(c.args) == 1]
        replies = [m for m in appended if m.role == "assistant"]
        turns = [m for m in appended if m.role == "user"]
        if len(replies) != 1 or not is_source(single_text_part(source, replies[0].content, "the stored reply"),
                                              _reply_name(call, run.body) or "None"):
            raise source.refused(replies[0].node if replies else loop,
                                 "the reply is no longer kept in the memory as one text part")
        if len(turns) != 1 or not isinstance(turns[0].content, ast.Name):
            raise source.refused(turns[0].node if turns else loop, "the memory no longer gets one user turn per round")
        turn = turns[0].content.id
        if not any(isinstance(s, ast.For) and isinstance(s.iter, ast.Attribute) and s.iter.attr == "info"
                   and method_calls(s.body, turn, "append") for s in round_stmts):
            raise source.refused(turns[0].node, "the user turn no longer carries the observation")
        regenerate, next_turn = _no_action_branches(source, loop, round_stmts, turn, _actions_name(call, run.body),
                                                    reader)
        return OnlineFlowTexts(unavailable_image=unavailable, first_turn=first_turn, next_turn=next_turn,
                               regenerate=regenerate)

    @cached_property
    def webui_online_flow(self) -> dict[str, str]:
        """Checks Flow/Online_Web_CoT_Natural.py's requests and reads its texts: the code templates
        (``code_html``, ``code_css``, ``code_javascript``), ``refine``, ``no_code`` and ``continuation``."""
        source, run, call = self._flow_call(WEBUI_ONLINE_FLOW, "OnlinePlan", "self.generate_with_continue")
        sent = call.args[0] if call.args else None
        assign = assigned_before(run.body, call, sent.id) if isinstance(sent, ast.Name) else None
        value = assign.value if assign else None
        if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)
                and isinstance(_undeepcopied(value.left), ast.Name) and isinstance(value.right, ast.List)
                and len(value.right.elts) == 1 and isinstance(value.right.elts[0], ast.Name)):
            raise source.refused(assign or call, "the request is no longer the opening messages and one user turn")
        opening = _undeepcopied(value.left)
        turn_name = value.right.elts[0]
        assert isinstance(turn_name, ast.Name)

        user = _opening_user(source, run, opening, call)
        described = assigned_before(run.body, call, user.content.id) if isinstance(user.content, ast.Name) else None
        if not (is_source(user.content, "self.env.task_prompt")
                or (described is not None and is_source(described.value, "self.env.task_prompt"))):
            raise source.refused(user.node, "the first user message is no longer the task description")

        # The round's turn: the code and screenshot when there is code, else one text.
        chain = enclosing(run.body, call)
        body, index = chain[-1]
        branch = next((s for s in reversed(body[:index]) if isinstance(s, ast.If)
                       and _assigns(s.body, turn_name.id) and _assigns(s.orelse, turn_name.id)), None)
        if branch is None or not (isinstance(branch.test, ast.Compare) and isinstance(branch.test.left, ast.Name)
                                  and isinstance(branch.test.ops[0], ast.NotEq)
                                  and is_source(branch.test.comparators[0], "''")):
            raise source.refused(call, "the round's user turn is no longer chosen by whether there is code")
        code = branch.test.left.id
        reader = source.reader({**local_names(run.body), **local_names(body)})
        templates = _code_templates(source, body[:index], code)

        with_code = _assigned_value(branch.body, turn_name.id)
        turn = source.message(with_code) if with_code is not None else None
        if turn is None or turn.role != "user" or not isinstance(turn.content, ast.Name):
            raise source.refused(branch, "the turn with code is no longer a user message of its parts")
        parts = turn.content.id
        started = assigned_before(branch.body, turn.node, parts)
        if started is None or not is_source(single_text_part(source, started.value, "the code part"), code):
            raise source.refused(started or branch, "the turn with code no longer opens with the code as one text part")
        appends = [c for c in method_calls(branch.body, parts, "append") if len(c.args) == 1]
        screenshot = dict_value(appends[0].args[0], "type") if appends else None
        if len(appends) != 2 or not is_source(screenshot, "'image_url'") \
                or not any(isinstance(n, ast.Break) for s in branch.body for n in ast.walk(s)):
            raise source.refused(branch, "the turn with code is no longer the code, one screenshot and one text")
        refine_part = text_part(appends[1].args[0])
        if refine_part is None:
            raise source.refused(appends[1], "the text after the screenshot is no longer one text part")

        without = _assigned_value(branch.orelse, turn_name.id)
        empty = source.message(without) if without is not None else None
        if empty is None or empty.role != "user":
            raise source.refused(branch, "the turn without code is no longer a user message")
        no_code = reader.text(single_text_part(source, empty.content, "the turn without code"))

        return {
            **templates,
            "refine": reader.text(refine_part),
            "no_code": no_code,
            "continuation": self._continuation(source),
        }

    def _continuation(self, source: SourceFile) -> str:
        function = source.method("OnlinePlan", "generate_with_continue")
        if len(function.args.args) < 2:
            raise source.refused(function, "generate_with_continue no longer takes the messages")
        sent = function.args.args[1].arg
        for stmt in walk_statements(function.body):
            if not isinstance(stmt, ast.If):
                continue
            test = stmt.test
            fence_count = any(isinstance(n, ast.Constant) and n.value == "```" for n in ast.walk(test))
            odd = (isinstance(test, ast.Compare) and isinstance(test.left, ast.BinOp)
                   and isinstance(test.left.op, ast.Mod) and is_source(test.left.right, "2")
                   and is_source(test.comparators[0], "1"))
            if not (fence_count and odd):
                continue
            calls = [c for c in method_calls(stmt.body, "self", "generator") if c.args]
            if len(calls) != 1:
                break
            request = calls[0].args[0]
            if not (isinstance(request, ast.BinOp) and isinstance(request.op, ast.Add)
                    and is_source(request.left, sent)):
                raise source.refused(calls[0], "the continuation request is no longer the same messages plus two")
            messages = source.message_list(request.right, calls[0])
            source.roles(messages, ["assistant", "user"], calls[0])
            reply, ask = messages
            if not isinstance(reply.content, ast.Name) or isinstance(ask.content, ast.List | ast.Dict):
                raise source.refused(calls[0], "the continuation no longer sends the reply and its request as "
                                               "plain strings")
            return source.reader(local_names(function.body)).text(ask.content)
        raise source.refused(function, "a reply with an odd number of ``` fences is no longer continued")

    def check_client(self) -> None:
        """Checks that API/HF.py merges consecutive same-role messages before sending."""
        source = self.source(CLIENT)
        merge = source.function("merge_role")
        merges = False
        for stmt in walk_statements(merge.body):
            if not (isinstance(stmt, ast.For) and isinstance(stmt.iter, ast.Call) and is_source(stmt.iter.func, "range")
                    and len(stmt.iter.args) == 3 and is_source(stmt.iter.args[2], "-1")):
                continue
            for inner in walk_statements(stmt.body):
                if isinstance(inner, ast.If) and _compares_roles(inner.test):
                    joined = any(isinstance(s, ast.Assign) and _subscript_key(s.targets[0]) == "content"
                                 and isinstance(s.value, ast.BinOp) and isinstance(s.value.op, ast.Add)
                                 and _subscript_key(s.value.left) == "content"
                                 and _subscript_key(s.value.right) == "content" for s in inner.body)
                    popped = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                 and n.func.attr == "pop" for s in inner.body for n in ast.walk(s))
                    merges = merges or (joined and popped)
        if not merges:
            raise source.refused(merge, "merge_role no longer joins the contents of consecutive same-role messages")
        sending = source.function("generate")
        if not any(isinstance(n, ast.keyword) and n.arg == "messages" and isinstance(n.value, ast.Call)
                   and is_source(n.value.func, "merge_role") for n in ast.walk(sending)):
            raise source.refused(sending, "generate no longer sends merge_role(message)")


# --- flow helpers -----------------------------------------------------------------------------


def _single_call(source: SourceFile, function: ast.FunctionDef, callee: str) -> ast.Call:
    calls = [n for n in ast.walk(function) if isinstance(n, ast.Call) and is_source(n.func, callee)]
    if len(calls) != 1:
        raise source.refused(function, f"{function.name} calls {callee} {len(calls)} times where once was expected")
    return calls[0]


def _undeepcopied(node: ast.expr) -> ast.expr:
    """``x`` of ``deepcopy(x)``; ``node`` itself otherwise."""
    if isinstance(node, ast.Call) and is_source(node.func, "deepcopy") and len(node.args) == 1:
        return node.args[0]
    return node


def _opening_user(source: SourceFile, function: ast.FunctionDef, opening: ast.expr | None,
                  call: ast.Call) -> Message:
    """The opening's user message, once the opening is checked to be the environment's system
    prompt followed by one user message."""
    messages = _traced_messages(source, function, opening, call)
    source.roles(messages, ["system", "user"], call)
    system, user = messages
    if not is_source(single_text_part(source, system.content, "the system message's content"),
                     "self.env.system_prompt"):
        raise source.refused(system.node, "the system message's text is no longer self.env.system_prompt")
    return user


def _traced_messages(source: SourceFile, function: ast.FunctionDef, sent: ast.expr | None,
                     call: ast.Call) -> list[Message]:
    """The message list literal a name sent at ``call`` was last given before it."""
    if not isinstance(sent, ast.Name):
        raise source.refused(call, "the request is no longer a named message list")
    assign = assigned_before(function.body, call, sent.id)
    if assign is None:
        raise source.refused(call, f"{sent.id} is not assigned before the request is sent")
    return source.message_list(assign.value, assign)


def _assigns(stmts: Sequence[ast.stmt], name: str) -> bool:
    return _assigned_value(stmts, name) is not None


def _assigned_value(stmts: Sequence[ast.stmt], name: str) -> ast.expr | None:
    values = [s.value for s in stmts if isinstance(s, ast.Assign) and len(s.targets) == 1
              and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
    return values[-1] if values else None


def _image_replacement(source: SourceFile, function: ast.FunctionDef, parts: str) -> str:
    """The text that the loop building ``parts`` from self.env.task_prompt puts in place of an image
    past self.args.max_image."""
    for stmt in walk_statements(function.body):
        if not (isinstance(stmt, ast.For) and is_source(stmt.iter, "self.env.task_prompt")):
            continue
        for inner in walk_statements(stmt.body):
            if isinstance(inner, ast.If) and any(is_source(n, "self.args.max_image") for n in ast.walk(inner.test)):
                calls = method_calls(inner.orelse, parts, "append")
                texts = [text_part(c.args[0]) for c in calls if len(c.args) == 1]
                if len(texts) == 1 and texts[0] is not None:
                    return source.reader(local_names(function.body)).text(texts[0])
    raise source.refused(function, f"images past self.args.max_image are no longer replaced by a text in {parts}")


def _reply_name(call: ast.Call, stmts: list[ast.stmt]) -> str:
    """The name the reply text of ``acts, out = self.generator(...)`` is bound to."""
    for stmt in walk_statements(stmts):
        if isinstance(stmt, ast.Assign) and stmt.value is call and isinstance(stmt.targets[0], ast.Tuple) \
                and len(stmt.targets[0].elts) == 2 and isinstance(stmt.targets[0].elts[1], ast.Name):
            return stmt.targets[0].elts[1].id
    return ""


def _actions_name(call: ast.Call, stmts: list[ast.stmt]) -> str:
    for stmt in walk_statements(stmts):
        if isinstance(stmt, ast.Assign) and stmt.value is call and isinstance(stmt.targets[0], ast.Tuple) \
                and isinstance(stmt.targets[0].elts[0], ast.Name):
            return stmt.targets[0].elts[0].id
    return ""


def _no_action_branches(source: SourceFile, anchor: ast.AST, stmts: Sequence[ast.stmt], turn: str, actions: str,
                        reader: TextReader) -> tuple[str, str]:
    """(regenerate, next turn): the texts appended to the turn when ``len(actions) == 0`` and otherwise."""
    for stmt in stmts:
        if not (isinstance(stmt, ast.If) and is_source(stmt.test, f"len({actions}) == 0")):
            continue
        found = []
        for body in (stmt.body, stmt.orelse):
            texts = [text_part(c.args[0]) for c in method_calls(body, turn, "append") if len(c.args) == 1]
            if len(texts) != 1 or texts[0] is None:
                raise source.refused(stmt, f"the {'regenerate' if body is stmt.body else 'next'} text is no longer "
                                           f"the one text appended to {turn} "
                                           f"{'when no action was parsed' if body is stmt.body else 'otherwise'}")
            found.append(reader.text(texts[0]))
        return found[0], found[1]
    raise source.refused(anchor, f"no turn text is chosen by whether an action was parsed (if len({actions}) == 0)")


def _code_templates(source: SourceFile, stmts: Sequence[ast.stmt], code: str) -> dict[str, str]:
    """The templates that add the current html, css and javascript to ``code``, in that order."""
    names = local_names(stmts)
    expressions = {}
    for stmt in stmts:
        for node in ast.walk(stmt):
            if (isinstance(node, ast.Attribute) and node.attr in WEBUI_CODE_SLOTS.values()
                    and isinstance(node.value, ast.Name)
                    and is_source(names.get(node.value.id), "self.env.trajectory.last_state")):
                expressions[ast.unparse(node)] = next(s for s, a in WEBUI_CODE_SLOTS.items() if a == node.attr)
    reader = source.reader(names, expressions)
    found: list[tuple[str, str]] = []
    for stmt in stmts:
        if not isinstance(stmt, ast.If):
            continue
        for inner in stmt.body:
            if isinstance(inner, ast.AugAssign) and isinstance(inner.op, ast.Add) and is_source(inner.target, code):
                text = reader.read(inner.value)
                if len(text.slots) != 1:
                    raise source.error(inner, f"a code template fills {list(text.slots)} where one file was expected")
                found.append((text.slots[0], text.template()))
    order = [slot for slot, _ in found]
    if order != list(WEBUI_CODE_SLOTS):
        anchor = stmts[0] if stmts else None
        raise source.refused(anchor, f"the current code is added as {order}, not as {list(WEBUI_CODE_SLOTS)}, "
                                     "each under its own condition")
    return {f"code_{slot}": template for slot, template in found}


def _compares_roles(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and _subscript_key(test.left) == "role" and _subscript_key(test.comparators[0]) == "role")


def _subscript_key(node: ast.AST) -> object:
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value
    return None


def _observation_call(stmt: ast.stmt, method: str) -> tuple[str, ast.expr] | None:
    """(receiver, argument) of a statement ``receiver.method(argument)``."""
    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == method
            and len(stmt.value.args) == 1):
        return ast.unparse(stmt.value.func.value), stmt.value.args[0]
    return None


# --- prompt sets ------------------------------------------------------------------------------


def prompt_version(texts: Mapping[str, str], extra: Mapping[str, str]) -> str:
    """``official-`` and 12 hex digits of the sha256 over the texts, as canonical JSON."""
    canonical = json.dumps({"texts": dict(texts), "extra": dict(extra)}, sort_keys=True, ensure_ascii=False,
                           separators=(",", ":"))
    return "official-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]


def build_prompt_set(*, system: str, format_instruction: str = "", first_turn: str = "", next_turn: str = "",
                     regenerate: str = "", unavailable_image: str = "", observation_lead: str = "",
                     extra: Mapping[str, str] | None = None) -> PromptSet:
    """An official prompt set of these texts, versioned by them."""
    texts = {
        "system": system, "format_instruction": format_instruction, "first_turn": first_turn,
        "next_turn": next_turn, "regenerate": regenerate, "unavailable_image": unavailable_image,
        "observation_lead": observation_lead,
    }
    extras = dict(extra or {})
    return PromptSet(version=prompt_version(texts, extras), source=PROMPTS_OFFICIAL, extra=extras, **texts)
