"""Readers of the official Global and Online flows (Sokoban, Football) and of the client they send with.

Reading the texts alone would not be enough: the platform composes the requests the way the
official flows do (``evaluators.agents.flows``), and a flow that changed how it builds its messages
would make correct texts arrive in the wrong places. So these readers also check the statements
that build the messages (who gets the system prompt and in which form, where each turn text is
appended, that same-role messages are merged before sending) and refuse, with the file and line,
a flow that no longer builds them that way.
"""
from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.agents.official_source import (
    Message,
    SourceFile,
    assigned_before,
    assigned_value,
    enclosing,
    is_source,
    local_names,
    method_calls,
    single_text_part,
    text_part,
    undeepcopied,
    walk_statements,
)
from evaluators.agents.official_text import TextReader


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


def read_global_flow(source: SourceFile, run: ast.FunctionDef, call: ast.Call) -> GlobalFlowTexts:
    """Checks Flow/GlobalPlanning.py's request (``run`` sending ``call``) and reads its own text."""
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


def read_online_flow(source: SourceFile, run: ast.FunctionDef, call: ast.Call) -> OnlineFlowTexts:
    """Checks Flow/Online_HL_FBandSB.py's requests (``run`` sending ``call``) and reads its own texts."""
    sent = call.args[0] if call.args else None
    if not isinstance(sent, ast.Name):
        raise source.refused(call, "the generator is no longer sent a named message list")
    assign = assigned_before(run.body, call, sent.id)
    value = assign.value if assign else None
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        opening, history = undeepcopied(value.left), value.right
    else:
        opening, history = None, None
    if not isinstance(opening, ast.Name) or not isinstance(history, ast.Name):
        raise source.refused(assign or call, "the request is no longer the opening messages followed by the memory")

    # The opening: the rules as one text part, then the format instruction.
    user = opening_user(source, run, opening, call)
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
    memory_start = assigned_value(run.body[:chain[0][1]], history.id)
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


def check_client_merges(source: SourceFile) -> None:
    """Checks that API/HF.py merges consecutive same-role messages before sending."""
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


def opening_user(source: SourceFile, function: ast.FunctionDef, opening: ast.expr | None,
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


def _compares_roles(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and _subscript_key(test.left) == "role" and _subscript_key(test.comparators[0]) == "role")


def _subscript_key(node: ast.AST) -> object:
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value
    return None
