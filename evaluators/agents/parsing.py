"""Reply parsers shared by the action-based environments (Sokoban, Football).

Both follow the official MageBench flows to the letter (reference §2.2):

* Global: the text after the first ``### Actions`` (or the whole reply when it is absent), split on
  commas, each token stripped, kept only when it is exactly an action name (case-sensitive).
  Anything else is silently dropped by the official code; we keep it in ``foreign_tokens`` so the
  IA diagnostic can see it, but it never changes the executed actions.
* Online: the text after the first ``# action``, stripped, must be exactly one action name.
"""
from __future__ import annotations

from typing import Iterable

from evaluators.base import ParseResult

GLOBAL_MARKER = "### Actions"
ONLINE_MARKER = "# action"

ERR_NO_ACTIONS = "no valid action in the reply"
ERR_NO_MARKER = "the reply has no '# action' line"
ERR_NOT_AN_ACTION = "the text after '# action' is not exactly one action name"


def parse_global_actions(reply: str, vocabulary: Iterable[str]) -> ParseResult:
    names = set(vocabulary)
    _, found, after = reply.partition(GLOBAL_MARKER)
    body = after if found else reply
    tokens = [token.strip() for token in body.split(",")]
    actions = [token for token in tokens if token in names]
    foreign = [token for token in tokens if token and token not in names]
    return ParseResult(
        actions=actions,
        error=None if actions else ERR_NO_ACTIONS,
        foreign_tokens=foreign,
        tokens=[t for t in tokens if t],
    )


def parse_online_action(reply: str, vocabulary: Iterable[str]) -> ParseResult:
    _, found, after = reply.partition(ONLINE_MARKER)
    if not found:
        return ParseResult(actions=[], error=ERR_NO_MARKER)
    candidate = after.strip()
    if candidate in set(vocabulary):
        return ParseResult(actions=[candidate], tokens=[candidate])
    return ParseResult(
        actions=[],
        error=ERR_NOT_AN_ACTION,
        foreign_tokens=[candidate] if candidate else [],
        tokens=[candidate] if candidate else [],
    )
