"""The WebUI lost-score bar as SVG rectangles.

Widths are SVG geometry rather than ``style="width: …"`` attributes, so the bar draws under a
Content-Security-Policy that allows no inline style.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django import template

register = template.Library()


@dataclass(frozen=True)
class Segment:
    name: str
    #: Where the segment starts and how wide it is, in percent of the bar.
    x: str
    width: str


@register.simple_tag
def lost_bar_segments(aes: float | None, parts: Mapping[str, float]) -> list[Segment]:
    """AES first, then each lost part, laid end to end (all in percent of the full score)."""
    segments = []
    offset = 0.0
    for name, value in [("aes", aes or 0.0), *parts.items()]:
        width = max(0.0, float(value or 0.0))
        segments.append(Segment(name=str(name), x=f"{offset:.2f}", width=f"{width:.2f}"))
        offset += width
    return segments
