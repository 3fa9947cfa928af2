"""The lost-score bar as SVG rectangles, with each lost part labelled under its own segment.

Widths, label positions and the parts' colours (each environment's ``breakdown_parts``) are SVG
geometry and presentation attributes rather than ``style="…"`` attributes, so the bar draws under a
Content-Security-Policy that allows no inline style.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from django import template

from evaluators.base import all_plugins, get_plugin

register = template.Library()

#: The label strip's width in its own SVG units: the bar's width in CSS pixels (.lostbar), so a
#: label's text keeps its size wherever the bar is drawn at that width.
LABEL_WIDTH = 220.0
#: About how wide one character of a label is, in the strip's units (its font is 9 units high).
CHAR_WIDTH = 5.0
#: A lost part smaller than this (in % of the score) is too thin to see and gets no label.
SHOWN_FROM = 0.05
#: A label that would overlap its left neighbour moves down a row; beyond these rows it is left out
#: (the bar's tooltip still lists every part).
MAX_ROWS = 3
ROW_HEIGHT = 11.0


@dataclass(frozen=True)
class Segment:
    name: str
    #: Where the segment starts and how wide it is, in percent of the bar.
    x: str
    width: str
    #: The fill its environment declares for the part; none for the score kept (the site's colour).
    colour: str = ""


@dataclass(frozen=True)
class Label:
    name: str
    text: str
    #: The label's centre and baseline in the label strip's units (centred under its segment).
    x: str
    y: str


@dataclass
class LostBar:
    segments: list[Segment] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    #: True when no part lost anything (a perfect page): the strip says so instead of labelling.
    nothing_lost: bool = False
    rows: int = 1

    @property
    def label_height(self) -> str:
        return f"{self.rows * ROW_HEIGHT:.0f}"


def declared_colours() -> dict[str, str]:
    """Each lost part's colour, as the configured environments declare them."""
    return {part.key: part.colour for plugin in all_plugins() for part in plugin.breakdown_parts}


def lost_bar_segments(aes: float | None, parts: Mapping[str, float]) -> list[Segment]:
    """AES first, then each lost part, laid end to end (all in percent of the full score)."""
    colours = declared_colours()
    segments = []
    offset = 0.0
    for name, value in [("aes", aes or 0.0), *parts.items()]:
        width = max(0.0, float(value or 0.0))
        colour = colours.get(str(name), "") if name != "aes" else ""
        segments.append(Segment(name=str(name), x=f"{offset:.2f}", width=f"{width:.2f}", colour=colour))
        offset += width
    return segments


@register.simple_tag
def lost_bar(aes: float | None, parts: Mapping[str, float]) -> LostBar:
    """The bar's segments and the labels of its lost parts: a part that lost nothing has none, and
    each label is centred under its own segment (kept inside the bar, moved down a row rather than
    drawn over its neighbour)."""
    segments = lost_bar_segments(aes, parts)
    bar = LostBar(segments=segments)
    right_edges: list[float] = []  # per row, where its last label ends
    for segment in segments[1:]:
        width = float(segment.width)
        if width < SHOWN_FROM:
            continue
        text = f"{segment.name} {width:.1f}%"
        half = len(text) * CHAR_WIDTH / 2
        centre = (float(segment.x) + width / 2) * LABEL_WIDTH / 100
        centre = min(max(centre, half), LABEL_WIDTH - half)
        row = next((i for i, edge in enumerate(right_edges) if centre - half >= edge), len(right_edges))
        if row >= MAX_ROWS:
            continue
        if row == len(right_edges):
            right_edges.append(0.0)
        right_edges[row] = centre + half + CHAR_WIDTH
        bar.labels.append(Label(name=segment.name, text=text, x=f"{centre:.1f}", y=f"{(row + 1) * ROW_HEIGHT - 2:.0f}"))
    bar.rows = max(1, len(right_edges))
    bar.nothing_lost = not bar.labels and all(float(s.width) < SHOWN_FROM for s in segments[1:])
    return bar


@dataclass(frozen=True)
class AttemptLoss:
    aes: float
    parts: dict[str, float]


@register.simple_tag
def attempt_loss(breakdown: Mapping[str, float], env: str = "") -> AttemptLoss:
    """An attempt's breakdown (fractions of the maximum score) in percent, as the board shows it:
    the AES kept and the lost parts, in the environment's order (a stored JSON object keeps none)."""
    pct = {str(key): 100.0 * float(value or 0.0) for key, value in breakdown.items()}
    aes = pct.pop("aes", 0.0)
    try:
        order = list(get_plugin(env).breakdown_keys)
    except KeyError:
        order = []
    ranked = {key: i for i, key in enumerate(order)}
    parts = dict(sorted(pct.items(), key=lambda item: ranked.get(item[0], len(order))))
    return AttemptLoss(aes=aes, parts=parts)
