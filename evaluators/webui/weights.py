"""The constants and property tables of the WebUI AES metric (reference §2.4).

Every target element names the properties it is judged on in ``data-evalby`` (entries separated by
``|``) and one property used to pre-filter candidate matches in ``data-filter-by``. This module
says, for each such name, how much it weighs (α), which kind of similarity compares it, and which
computed-style value it reads; and how shorthand entries expand into sub-properties.

Official quirks reproduced by default (``OFFICIAL_QUIRKS = True`` or ``official_quirks=True``):

* ``border-top-width`` reads the computed ``border-left-width`` (a copy-paste slip in the release);
* the ``border-bottom`` shorthand is not expanded (the release spells it ``border-down``), so it
  contributes nothing.

With ``official_quirks=False`` both behave as their names suggest. Everything else in the tables
(including odd choices such as ``outline-width`` being compared as a keyword, or ``src``/``type``
being read as CSS properties, which are always empty) is how the benchmark defines the metric
and is not switchable.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from evaluators.webui.elements import Element

#: Module-wide default for the quirk switch; functions take ``official_quirks=None`` to mean "use this".
OFFICIAL_QUIRKS: bool = True

#: Weight of the position term in every element score.
POSITION_WEIGHT: float = 46.0

#: Element weight = (width·height of the target) ** BETA.
BETA: float = 0.8987018465995789

Kind = Literal["px", "colour", "choice", "text", "special"]

#: Per-property weight α, exactly as in the official property table.
ALPHA: dict[str, float] = {
    "has_text": 44.0,
    "text": 6.8,
    "placeholder": 6.8,
    "value": 6.8,
    "text-shadow": 83.0,
    "color": 30.0,
    "background-color": 59.0,
    "background-image": 12.6,
    "background-repeat": 24.5,
    "background-size": 14.3,
    "background-linear-gradient": 18.0,
    "src": 12.6,
    "type": 18.9,
    "border-bottom-color": 16.9,
    "border-bottom-width": 2.1,
    "border-bottom-style": 79.2,
    "border-bottom-left-radius": 100.0,
    "border-bottom-right-radius": 100.0,
    "border-right-color": 16.9,
    "border-right-style": 79.2,
    "border-right-width": 2.1,
    "border-left-color": 16.9,
    "border-left-style": 79.2,
    "border-left-width": 2.1,
    "border-top-color": 16.9,
    "border-top-width": 2.1,
    "border-top-style": 79.2,
    "border-top-left-radius": 100.0,
    "border-top-right-radius": 100.0,
    "outline-style": 79.2,
    "outline-width": 2.1,
    "outline-color": 16.9,
    "font-family": 94.6,
    "font-size": 9.8,
    "font-style": 94.6,
    "font-weight": 2.1,
    "height": 31.92,
    "width": 31.92,
    "tab-size": 50.8,
    "class": 66.6,
    "letter-spacing": 67.0,
    "box-shadow": 56.7,
    "display": 51.0,
}

_SIDES = ("top", "right", "bottom", "left")
_CORNERS = ("top-left", "top-right", "bottom-right", "bottom-left")

#: Similarity kind of each property. "special" ones have a dedicated function named after them.
KIND: dict[str, Kind] = {
    "has_text": "special",
    "text": "text",
    "placeholder": "text",
    "value": "text",
    "text-shadow": "special",
    "color": "colour",
    "background-color": "colour",
    "background-image": "choice",
    "background-repeat": "choice",
    "background-size": "special",
    "background-linear-gradient": "special",
    "src": "choice",
    "type": "choice",
    **{f"border-{side}-color": "colour" for side in _SIDES},
    **{f"border-{side}-width": "px" for side in _SIDES},
    **{f"border-{side}-style": "choice" for side in _SIDES},
    **{f"border-{corner}-radius": "px" for corner in _CORNERS},
    "outline-style": "choice",
    # The release compares outline-width as a keyword, not as a length.
    "outline-width": "choice",
    "outline-color": "colour",
    "font-family": "choice",
    "font-size": "px",
    "font-style": "choice",
    "font-weight": "choice",
    "height": "px",
    "width": "px",
    "tab-size": "choice",
    "class": "special",
    "letter-spacing": "px",
    "box-shadow": "special",
    "display": "choice",
}

#: Properties that may be named in ``data-evalby`` but have no pre-filter: a target whose
#: ``data-filter-by`` names one of them is dropped before matching.
NO_FILTER: frozenset[str] = frozenset({"text-shadow", "background-size", "background-linear-gradient", "box-shadow"})

#: Properties that only pre-filter: naming them in ``data-evalby`` contributes nothing, because
#: the release has no similarity function for them (the call fails and the entry is skipped).
FILTER_ONLY: frozenset[str] = frozenset({"class"})

#: ``data-evalby`` names skipped outright (layout properties the benchmark chose not to score).
IGNORED_NAMES: frozenset[str] = frozenset({
    "padding", "margin", "left", "position", "transition", "top", "z-index", "flex-wrap",
    "justify-content", "text-transform", "transform", "cursor", "align-items", "overflow",
    "margin-right", "margin-left", "margin-top", "margin-bottom",
    "padding-right", "padding-left", "padding-top", "padding-bottom",
})


@dataclass(frozen=True)
class PropertySpec:
    """How one property is compared. ``style_key`` is the computed-style name read (None when the
    property compares text or attributes instead of a style)."""

    name: str
    kind: Kind
    weight: float
    style_key: str | None
    has_filter: bool
    scored: bool


def quirks_enabled(official_quirks: bool | None) -> bool:
    return OFFICIAL_QUIRKS if official_quirks is None else official_quirks


def is_known(name: str) -> bool:
    return name in ALPHA


def style_key(name: str, official_quirks: bool | None = None) -> str | None:
    """The computed-style property that ``name`` reads, or None if it reads no style."""
    if name not in ALPHA:
        raise KeyError(f"unknown property {name!r}")
    if name == "border-top-width" and quirks_enabled(official_quirks):
        return "border-left-width"
    if KIND[name] in ("px", "colour", "choice"):
        return name
    if name in ("text-shadow", "box-shadow", "background-size"):
        return name
    if name == "background-linear-gradient":
        return "background"
    return None


def property_spec(name: str, official_quirks: bool | None = None) -> PropertySpec:
    """The full description of a known property; KeyError for names outside the table."""
    if name not in ALPHA:
        raise KeyError(f"unknown property {name!r}")
    return PropertySpec(
        name=name,
        kind=KIND[name],
        weight=ALPHA[name],
        style_key=style_key(name, official_quirks),
        has_filter=name not in NO_FILTER,
        scored=name not in FILTER_ONLY,
    )


def background_value(element: Element) -> str:
    """The computed ``background`` shorthand when the browser layer recorded it, else
    ``background-image``.

    The release reads the shorthand; its gradient stops also appear in ``background-image``, which
    is what :data:`evaluators.webui.elements.CSS_PROPERTIES` records. The two differ only when an
    opaque ``rgb()`` background colour sits in front of a gradient in the shorthand, where the
    release pairs that colour with the first stop.
    """
    if "background" in element.styles:
        return element.styles["background"]
    return element.styles.get("background-image", "")


def expand(entry: str, target: Element, official_quirks: bool | None = None) -> list[str]:
    """Sub-properties that a ``data-evalby`` entry stands for.

    Names that are neither shorthands nor in the table come back unchanged; the scorer then finds
    them unknown and they contribute nothing. The background rule looks at the *target* only.
    """
    if entry == "background":
        if "linear-gradient" in background_value(target):
            return ["background-linear-gradient", "background-color", "background-repeat"]
        return []
    if entry == "border-radius":
        return [f"border-{corner}-radius" for corner in _CORNERS]
    if entry == "border":
        return [f"border-{side}-width" for side in _SIDES]
    sided = {"border-top", "border-left", "border-right", "border-down"}
    if not quirks_enabled(official_quirks):
        sided = {"border-top", "border-left", "border-right", "border-bottom"}
    if entry in sided:
        return [f"{entry}-width", f"{entry}-color"]
    if entry == "outline":
        return ["outline-style", "outline-width", "outline-color"]
    return [entry]


def element_weight(target: Element) -> float:
    """area ** BETA with area = width·height of the target's rect (no "+1 pixel" here).

    Computed with numpy's power, as the release does: Python's ``**`` differs from it in the last
    bit for a few percent of inputs, enough to make sums disagree with the release's.
    """
    return float(np.power(target.area, BETA))
