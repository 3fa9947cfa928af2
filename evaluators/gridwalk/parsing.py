"""Reading GridWalk replies.

* Global: the text after the first ``Moves:`` (the whole reply when it is absent), split on commas,
  each piece stripped and kept only when it is exactly a move name; other pieces are dropped and
  reported as foreign tokens (they make the attempt IA). A reply holding a ```` ```route ```` block
  (GridWalk's own file format, ``route.txt``: what an uploaded route file is replayed as) is read
  from that block alone, split on commas and line breaks alike.
* Online: the rest of the line after the first ``Move:`` (the whole reply when it is absent),
  stripped; it must be exactly one move name.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from evaluators.base import ParseResult

GLOBAL_MARKER = "Moves:"
ONLINE_MARKER = "Move:"

#: The code fence of a route block, and the file an uploaded run's route is in.
ROUTE_FENCE = "route"
ROUTE_FILE = "route.txt"
_ROUTE_BLOCK = re.compile(rf"```{ROUTE_FENCE}[ \t]*\n(.*?)```", re.DOTALL)

ERR_NO_MOVES = "no move name in the reply"
ERR_NOT_A_MOVE = "the text read as the move is not exactly one move name"


def parse_route(reply: str, vocabulary: Iterable[str]) -> ParseResult:
    names = set(vocabulary)
    block = _ROUTE_BLOCK.search(reply)
    if block is not None:
        tokens = route_pieces(block.group(1))
    else:
        _, found, after = reply.partition(GLOBAL_MARKER)
        tokens = [token.strip() for token in (after if found else reply).split(",")]
    moves = [token for token in tokens if token in names]
    return ParseResult(
        actions=moves,
        error=None if moves else ERR_NO_MOVES,
        foreign_tokens=[token for token in tokens if token and token not in names],
        tokens=[token for token in tokens if token],
    )


def route_pieces(text: str) -> list[str]:
    """The pieces of a route file (or block): split on commas and line breaks, stripped, blanks dropped."""
    return [piece.strip() for piece in re.split(r"[,\n]", text) if piece.strip()]


def move_text(reply: str) -> str:
    """The part of an Online reply read as the move."""
    _, found, after = reply.partition(ONLINE_MARKER)
    return (after.split("\n", 1)[0] if found else reply).strip()


def parse_move(reply: str, vocabulary: Iterable[str]) -> ParseResult:
    candidate = move_text(reply)
    if candidate in set(vocabulary):
        return ParseResult(actions=[candidate], tokens=[candidate])
    return ParseResult(actions=[], error=ERR_NOT_A_MOVE, foreign_tokens=[candidate] if candidate else [],
                       tokens=[candidate] if candidate else [])


def format_route(moves: Iterable[str]) -> str:
    """A Global reply carrying ``moves`` (what an upload's action list is played back as)."""
    return f"{GLOBAL_MARKER} {', '.join(moves)}"


def format_move(move: str) -> str:
    """An Online reply carrying one move."""
    return f"{ONLINE_MARKER} {move}"
