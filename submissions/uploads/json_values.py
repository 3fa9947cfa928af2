"""Reading JSON strictly and describing its values in problem messages."""
from __future__ import annotations

import json
import math
from typing import Any, TypeGuard

_MAX_SHOWN_CHARS = 200


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            # Parsers disagree on which duplicate wins; refusing keeps the meaning unambiguous.
            raise ValueError(f"duplicate key {shorten(repr(key))}")
        result[key] = value
    return result


def loads(text: str) -> Any:
    """JSON as the standard defines it: no NaN or Infinity, no duplicate keys."""
    return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)


def json_error(exc: BaseException) -> str:
    """Why ``loads`` failed, in a few words."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} (column {exc.colno})"
    return shorten(str(exc))


def json_type(value: Any) -> str:
    """The JSON type of a parsed value, as a message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def finite(value: Any) -> TypeGuard[float]:
    """Whether ``value`` is a JSON number that is a finite float (booleans are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float
        return False


def shorten(text: str) -> str:
    """``text`` cut to a length a problem message can show."""
    # Cut in the middle: schema messages start with the offending value and end with the rule broken.
    if len(text) <= _MAX_SHOWN_CHARS:
        return text
    half = (_MAX_SHOWN_CHARS - 1) // 2
    return text[:half] + "…" + text[-half:]
