"""Reply parsers shared by the action-based environments (Sokoban, Football).

Both follow the official MageBench flows to the letter (reference §2.2):

* Global: the text after the first ``### Actions`` (or the whole reply when it is absent), split on
  commas, each token stripped, kept only when it is exactly an action name (case-sensitive).
  Anything else is silently dropped by the official code; we keep it in ``foreign_tokens`` so the
  IA diagnostic can see it, but it never changes the executed actions.
* Online: the text between the first ``# action`` and the next one (or the end of the reply); the
  whole reply when there is no ``# action`` at all. Stripped, it must be exactly one action name.
"""
from __future__ import annotations

from collections.abc import Iterable

from evaluators.declarations import FLOW_GLOBAL, FLOW_ONLINE, ParseResult

GLOBAL_MARKER = "### Actions"
ONLINE_MARKER = "# action"

ERR_NO_ACTIONS = "no valid action in the reply"
ERR_NOT_AN_ACTION = "the text read as the action is not exactly one action name"


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


def online_action_text(reply: str) -> str:
    """The part of an Online reply the official parser reads as the action (official split()[1])."""
    segments = reply.split(ONLINE_MARKER)
    return (segments[1] if len(segments) > 1 else reply).strip()


def parse_online_action(reply: str, vocabulary: Iterable[str]) -> ParseResult:
    candidate = online_action_text(reply)
    if candidate in set(vocabulary):
        return ParseResult(actions=[candidate], tokens=[candidate])
    return ParseResult(
        actions=[],
        error=ERR_NOT_AN_ACTION,
        foreign_tokens=[candidate] if candidate else [],
        tokens=[candidate] if candidate else [],
    )


#: The official parser of each flow: the ``reply_parsers`` of an environment whose replies are the
#: official formats.
ACTION_PARSERS = {FLOW_GLOBAL: parse_global_actions, FLOW_ONLINE: parse_online_action}
