"""Settings and details as people write them, not as Python prints them.

One filter for every table of settings (a submission's frozen settings, a metric card's defaults):
lists read as comma-separated values, mappings as "key: value" lines, booleans as yes/no and a
missing value as a dash, so that ``['a', 'b']``, ``{'k': 1}``, ``True`` and ``None`` never reach a page.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

register = template.Library()

NONE = "—"


def setting_text(value: Any) -> str:
    """``value`` as plain text: nested lists and mappings are written the same way inside."""
    if value is None:
        return NONE
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return "\n".join(f"{key}: {setting_text(item)}" for key, item in value.items()) or NONE
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return ", ".join(setting_text(item) for item in items) or NONE
    return str(value)


@register.filter(name="setting_value")
def setting_value(value: Any) -> str:
    # Autoescaping still applies: the result is plain text, never marked safe.
    return setting_text(value)
