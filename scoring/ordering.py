"""How scenario names are ordered wherever they are listed: numbers by value, so "level_2" comes
before "level_10", "R3_R_1.py" before "R10_R_1.py" and "faq-accordion~2" before "faq-accordion~10"."""
from __future__ import annotations

import re

_NUMBER = re.compile(r"(\d+)")


def natural_key(value: object) -> tuple[tuple[int, int | str], ...]:
    """A sort key comparing runs of digits as numbers and the rest case-insensitively."""
    return tuple((0, int(part)) if part.isdigit() else (1, part.lower())
                 for part in _NUMBER.split(str(value)) if part)

