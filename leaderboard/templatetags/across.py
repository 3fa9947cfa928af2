"""The summary across environments' intervals as a small SVG forest plot per model: one line per
environment (its normalised score ± 1.96 SE) and one for the mean across them.

Positions are SVG geometry attributes and the colours classes of the site's style sheet, not
``style="…"`` attributes, so the plot draws under a Content-Security-Policy that allows no inline style.
"""
from __future__ import annotations

from dataclasses import dataclass

from django import template

from leaderboard.selectors.summary import Summary, SummaryRow

register = template.Library()

#: The plot's width in its own units (and in CSS pixels: .across-plot), and the score range it shows:
#: a little below the floor and above the ceiling, so that an entry just outside them still shows.
WIDTH = 160.0
LOW, HIGH = -20.0, 120.0
ROW_HEIGHT = 10.0
#: A 95 % normal interval from a standard error.
Z95 = 1.96


def x_of(value: float) -> float:
    """A normalised score's position in the plot, clamped to its edges."""
    return WIDTH * (min(HIGH, max(LOW, value)) - LOW) / (HIGH - LOW)


@dataclass(frozen=True)
class Whisker:
    label: str
    y: str
    x: str
    #: The interval's ends; equal to ``x`` without a standard error.
    x1: str
    x2: str
    #: "mean" for the mean across environments, else the environment's position (its colour).
    kind: str
    text: str


@dataclass(frozen=True)
class Plot:
    height: str
    whiskers: list[Whisker]
    zero: str
    hundred: str


def _whisker(label: str, index: int, mean: float, se: float | None, kind: str) -> Whisker:
    half = Z95 * se if se is not None else 0.0
    text = f"{label}: {mean:.1f}" + (f" (95% interval {mean - half:.1f} to {mean + half:.1f})" if se is not None
                                     else " (no standard error)")
    return Whisker(label=label, y=f"{ROW_HEIGHT * index + ROW_HEIGHT / 2:.1f}", x=f"{x_of(mean):.1f}",
                   x1=f"{x_of(mean - half):.1f}", x2=f"{x_of(mean + half):.1f}", kind=kind, text=text)


@register.simple_tag
def across_plot(summary: Summary, row: SummaryRow) -> Plot:
    """One line per environment the model has a score on (in the summary's order, each its colour),
    then one for its mean across environments where it has one."""
    shown = [(scale.title, cell.mean, cell.se, f"env-{index % 6}")
             for index, (scale, cell) in enumerate(zip(summary.scales, row.cells, strict=True))
             if cell is not None and cell.mean is not None]
    if row.mean is not None:
        shown.append(("Mean across environments", row.mean, row.se, "mean"))
    whiskers = [_whisker(label, index, mean, se, kind) for index, (label, mean, se, kind) in enumerate(shown)]
    return Plot(height=f"{ROW_HEIGHT * max(1, len(whiskers)):.0f}", whiskers=whiskers, zero=f"{x_of(0.0):.1f}",
                hundred=f"{x_of(100.0):.1f}")
