"""The per-scenario matrix's cells, rendered in Python.

A full board's matrix is entries × 483 cells (about 100,000 for 200 entries); a template loop spends
seconds on that, a string join milliseconds. The markup is the same as a template would write.
"""
from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from leaderboard.analysis import MatrixRow

register = template.Library()

_PLACEHOLDER = 2_147_483_647


def short_number(value: float) -> str:
    """Two decimals, dropped when they are zero (Django's ``floatformat:"-2"``)."""
    text = f"{value:.2f}"
    return text[:-3] if text.endswith(".00") else text


def heat_class(hue: int) -> int:
    """The nearest of the 25 background classes (``heat-0`` … ``heat-120``, every 5°) in site.css:
    a class, not a style attribute, so the cells keep their colour under the site's CSP."""
    return 5 * round(min(120, max(0, hue)) / 5)


@register.simple_tag
def matrix_cells(row: MatrixRow) -> SafeString:
    # One reverse() for the row instead of one per cell: the replay URL differs only by the id.
    pattern = reverse("attempt-replay", args=[_PLACEHOLDER]).replace(str(_PLACEHOLDER), "{id}")
    parts = []
    for cell in row.cells:
        if cell is None:
            parts.append('<td class="num cell missing">—</td>')
            continue
        plural = "" if cell.repeats == 1 else "s"
        parts.append(
            f'<td class="num cell heat-{heat_class(cell.hue)}">'
            f'<a href="{pattern.format(id=cell.attempt_id)}" title="{cell.repeats} scored repeat{plural}">'
            f"{short_number(cell.mean)}</a></td>")
    return mark_safe("".join(parts))
