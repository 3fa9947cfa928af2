"""A quick test that a JSONL line plainly meets the published schema, so that the schema's own
validator (by far the slowest step of reading a line) is only asked about the lines that may not.

The test is stricter than the schema, never looser: each rule below is one of the schema's or
narrower (``repeat`` must be an int, where the schema also takes 1.0). A line it does not pass goes
to the schema's validator, which gives the messages, so the answers are the schema's either way.
"""
from __future__ import annotations

from typing import Any

_KEYS = frozenset({"scenario", "repeat", "replies", "actions", "code", "score", "error", "meta"})
_OUTPUTS = ("replies", "actions", "code")
_ACTION_MAX_CHARS = 100


def plainly_valid(value: dict[str, Any]) -> bool:
    """Whether ``value`` certainly meets static/schemas/upload-jsonl-v1.schema.json."""
    if not _KEYS.issuperset(value):
        return False
    scenario, repeat = value.get("scenario"), value.get("repeat")
    if not isinstance(scenario, str) or not scenario:
        return False
    if type(repeat) is not int or repeat < 0:
        return False
    if [key in value for key in _OUTPUTS].count(True) != 1:
        return False
    return all(_fits(key, value[key]) for key in value if key not in ("scenario", "repeat"))


def _fits(key: str, item: Any) -> bool:
    if key == "replies":
        return type(item) is list and bool(item) and all(type(reply) is str for reply in item)
    if key == "actions":
        return type(item) is list and bool(item) and all(_action_name(action) for action in item)
    if key == "code":
        return type(item) is dict and bool(item) and all(type(text) is str for text in item.values())
    if key == "score":
        return type(item) in (int, float)
    if key == "error":
        return type(item) is str
    return type(item) is dict  # meta


def _action_name(action: Any) -> bool:
    return (type(action) is str and 0 < len(action) <= _ACTION_MAX_CHARS
            and "," not in action and "\r" not in action and "\n" not in action)
