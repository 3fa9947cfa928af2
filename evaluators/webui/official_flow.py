"""The reader of the official WebUI Online flows (``Flow/Online_Web_*.py``, one per variant in
:mod:`evaluators.webui.online_variants`).

Like the other flow readers (:mod:`evaluators.agents.official_flows`), it checks that a flow still
builds its requests the way the platform composes that variant before it reads the flow's texts.
"""
from __future__ import annotations

import ast
from collections.abc import Sequence

from evaluators.agents.official_flows import opening_user
from evaluators.agents.official_source import (
    SourceFile,
    assigned_before,
    assigned_value,
    assigns,
    dict_value,
    enclosing,
    is_source,
    local_names,
    method_calls,
    single_text_part,
    text_part,
    undeepcopied,
    walk_statements,
)
from evaluators.webui.online_variants import NATURAL, VARIANTS, OnlineVariant

#: Expressions of the WebUI Online flow that stand for the current code, by template slot.
WEBUI_CODE_SLOTS = {"html": "cur_html", "css": "cur_css", "javascript": "cur_js"}


def read_webui_online_flow(source: SourceFile, run: ast.FunctionDef, call: ast.Call,
                           variant: OnlineVariant = VARIANTS[NATURAL]) -> dict[str, str]:
    """Checks that the flow's requests (``run`` sending ``call``) are built as the platform composes
    ``variant`` and reads its texts: the code templates (``code_html``, ``code_css``,
    ``code_javascript``), ``refine``, ``no_code`` and ``continuation``, and ``system`` for a flow that
    opens with rules of its own."""
    sent = call.args[0] if call.args else None
    assign = assigned_before(run.body, call, sent.id) if isinstance(sent, ast.Name) else None
    value = assign.value if assign else None
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)
            and isinstance(undeepcopied(value.left), ast.Name) and isinstance(value.right, ast.List)
            and len(value.right.elts) == 1 and isinstance(value.right.elts[0], ast.Name)):
        raise source.refused(assign or call, "the request is no longer the opening messages and one user turn")
    opening = undeepcopied(value.left)
    turn_name = value.right.elts[0]
    assert isinstance(turn_name, ast.Name)
    texts = _opening(source, run, opening, call, variant)

    # The round's turn: the code and a picture when there is code, else one text.
    chain = enclosing(run.body, call)
    body, index = chain[-1]
    branch = next((s for s in reversed(body[:index]) if isinstance(s, ast.If)
                   and assigns(s.body, turn_name.id) and assigns(s.orelse, turn_name.id)), None)
    if branch is None or not (isinstance(branch.test, ast.Compare) and isinstance(branch.test.left, ast.Name)
                              and isinstance(branch.test.ops[0], ast.NotEq)
                              and is_source(branch.test.comparators[0], "''")):
        raise source.refused(call, "the round's user turn is no longer chosen by whether there is code")
    code = branch.test.left.id
    reader = source.reader({**local_names(run.body), **local_names(body)})
    templates = _code_templates(source, body[:index], code)
    refine_part = _turn_with_code(source, branch, turn_name.id, code, variant)

    without = assigned_value(branch.orelse, turn_name.id)
    empty = source.message(without) if without is not None else None
    if empty is None or empty.role != "user":
        raise source.refused(branch, "the turn without code is no longer a user message")
    no_code = reader.text(single_text_part(source, empty.content, "the turn without code"))

    return {
        **texts,
        **templates,
        "refine": reader.text(refine_part),
        "no_code": no_code,
        "continuation": _continuation(source),
    }


def _opening(source: SourceFile, run: ast.FunctionDef, opening: ast.expr, call: ast.Call,
             variant: OnlineVariant) -> dict[str, str]:
    """Checks the messages every round opens with: the environment's rules and the task description,
    or (a flow without the description) one system message of the flow's own rules, read as ``system``."""
    if variant.described:
        user = opening_user(source, run, opening, call)
        described = assigned_before(run.body, call, user.content.id) if isinstance(user.content, ast.Name) else None
        if not (is_source(user.content, "self.env.task_prompt")
                or (described is not None and is_source(described.value, "self.env.task_prompt"))):
            raise source.refused(user.node, "the first user message is no longer the task description")
        return {}
    assign = assigned_before(run.body, call, opening.id) if isinstance(opening, ast.Name) else None
    if assign is None:
        raise source.refused(call, "the opening messages are no longer a named list assigned before the request")
    messages = source.message_list(assign.value, assign)
    source.roles(messages, ["system"], assign)
    rules = single_text_part(source, messages[0].content, "the system message's content")
    if is_source(rules, "self.env.system_prompt"):
        raise source.refused(messages[0].node, "the system message is the environment's rules, not the flow's own")
    return {"system": source.reader(local_names(run.body)).text(rules)}


def _turn_with_code(source: SourceFile, branch: ast.If, turn: str, code: str, variant: OnlineVariant) -> ast.expr:
    """Checks the turn with code (the code as one text part, then the variant's picture, then one text)
    and returns the text part after the picture."""
    with_code = assigned_value(branch.body, turn)
    message = source.message(with_code) if with_code is not None else None
    if message is None or message.role != "user" or not isinstance(message.content, ast.Name):
        raise source.refused(branch, "the turn with code is no longer a user message of its parts")
    parts = message.content.id
    started = assigned_before(branch.body, message.node, parts)
    if started is None or not is_source(single_text_part(source, started.value, "the code part"), code):
        raise source.refused(started or branch, "the turn with code no longer opens with the code as one text part")
    appends = [c for c in method_calls(branch.body, parts, "append") if len(c.args) == 1]
    pictures = [c for c in appends if is_source(dict_value(c.args[0], "type"), "'image_url'")]
    if variant.picture and not (len(appends) == 2 and pictures == appends[:1]):
        raise source.refused(branch, "the turn with code is no longer the code, one picture and one text")
    if not variant.picture and (len(appends) != 1 or pictures):
        raise source.refused(branch, "the turn with code is no longer the code and one text, without a picture")
    if variant.picture == "screenshot" and not any(isinstance(n, ast.Break) for s in branch.body for n in ast.walk(s)):
        raise source.refused(branch, "the picture is no longer the first image of the last observation")
    # The stacked picture's top is the description's second part, which must be an image.
    if variant.picture == "merged" and not any(is_source(n, "self.env.task_prompt[1]") for n in ast.walk(branch)):
        raise source.refused(branch, "the picture no longer stacks the description's second part over the render")
    refine_part = text_part(appends[-1].args[0])
    if refine_part is None:
        raise source.refused(appends[-1], "the text after the code is no longer one text part")
    return refine_part


def _continuation(source: SourceFile) -> str:
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
