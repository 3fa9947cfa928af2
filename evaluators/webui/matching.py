"""Pairing target elements with generated elements for the WebUI AES metric (reference §2.4).

For a target t and a generated element g the match score is

    s = GIoU(t, g) + filter(t, g) − 1e-5 · descendants(g)

where filter is 0 when the pair passes the pre-filter named by the target's ``data-filter-by``,
−1 when it fails and −0.01 when the values cannot be compared. Pairs with s ≥ −1 cost −s, the
others cost a 1e5 penalty; a minimum-cost assignment (scipy's ``linear_sum_assignment``) pairs
them, and assigned pairs within the threshold are the matches.

Two outcomes besides a match, both as in the release:

* *unmatched*: a target left without any generated element (only possible with more targets than
  generated elements) scores 0 and keeps its full weight;
* *dropped*: a target the assignment could only pair at penalty cost disappears from the state
  altogether (neither score nor weight). So do targets whose ``data-filter-by`` is unknown or
  names a property without a filter function.

The descendant term breaks ties between nested elements sharing a box in favour of the innermost
one. Boxes use the "+1 pixel" area convention, (x2 − x1 + 1)·(y2 − y1 + 1), throughout.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.optimize import linear_sum_assignment

from evaluators.webui import weights
from evaluators.webui.elements import Element
from evaluators.webui.similarity import UnavailableProperty, property_filter

Box = tuple[float, float, float, float]

FILTER_PASS: float = 0.0
FILTER_FAIL: float = -1.0
FILTER_ERROR: float = -0.01
#: Pairs scoring below this are only assignable at PENALTY cost.
MATCH_THRESHOLD: float = -1.0
PENALTY: float = 1e5
DESCENDANT_PENALTY: float = 1e-5

DropReason = Literal["unknown filter method", "no filter function", "penalty-only assignment"]


# ---------------------------------------------------------------------------------------------
# Geometry


def pixel_area(box: Box) -> float:
    x1, y1, x2, y2 = box
    return (x2 - x1 + 1) * (y2 - y1 + 1)


def intersection_area(a: Box, b: Box) -> float:
    # Each side is clamped separately, as in the release: with "+1 pixel" sides, boxes less than
    # one pixel apart still share a sliver of area.
    width = min(a[2], b[2]) - max(a[0], b[0]) + 1
    height = min(a[3], b[3]) - max(a[1], b[1]) + 1
    return max(0, width) * max(0, height)


def _hull(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def giou(a: Box, b: Box) -> float:
    """Generalised IoU: IoU − (hull − union)/hull, in (−1, 1]."""
    inter = intersection_area(a, b)
    union = pixel_area(a) + pixel_area(b) - inter
    hull = pixel_area(_hull(a, b))
    return inter / union - (hull - union) / hull


def position_similarity(target: Box, generated: Box) -> float:
    """The position term P of an element score, in [0, 1].

    Overlapping boxes score 0.5 + 0.5·I/min(area_t, area_g), so an element fully inside the other
    scores 1 whatever their size difference (size is judged by width/height properties); disjoint
    boxes fall back to (GIoU + 1)/2 < 0.5, shrinking with distance.
    """
    inter = intersection_area(target, generated)
    if inter > 0:
        return (inter / min(pixel_area(target), pixel_area(generated))) / 2 + 0.5
    return (giou(target, generated) + 1) / 2


# ---------------------------------------------------------------------------------------------
# Pair scores


def filter_value(target: Element, generated: Element, *, official_quirks: bool | None = None) -> float:
    """0 (pass), −1 (fail) or −0.01 (not comparable) for the target's ``data-filter-by``."""
    name = target.filter_by
    if name is None:
        raise ValueError("the target has no data-filter-by")
    try:
        passed = property_filter(name, target, generated, official_quirks=official_quirks)
    except UnavailableProperty:
        return FILTER_ERROR
    return FILTER_PASS if passed else FILTER_FAIL


def match_score(target: Element, generated: Element, *, official_quirks: bool | None = None) -> float:
    """s = GIoU + filter − 1e-5·descendants(generated)."""
    return (giou(target.box, generated.box) + filter_value(target, generated, official_quirks=official_quirks)
            - generated.descendants * DESCENDANT_PENALTY)


def cost_matrix(targets: Sequence[Element], generated: Sequence[Element], *,
                official_quirks: bool | None = None) -> np.ndarray:
    """T × G costs: −s where s ≥ −1, else PENALTY."""
    cost = np.zeros((len(targets), len(generated)))
    for i, t in enumerate(targets):
        for j, g in enumerate(generated):
            s = match_score(t, g, official_quirks=official_quirks)
            cost[i, j] = -s if s >= MATCH_THRESHOLD else PENALTY
    return cost


# ---------------------------------------------------------------------------------------------
# Target selection and assignment


@dataclass(frozen=True)
class DroppedTarget:
    element: Element
    reason: DropReason


@dataclass
class TargetSelection:
    """The targets of one state: ``candidates`` go to matching; ``excluded`` were left out because
    an interaction did not change them; ``dropped`` cannot be matched by construction."""

    candidates: list[Element]
    excluded: list[Element]
    dropped: list[DroppedTarget]


def select_targets(elements: Iterable[Element], considered: set[str] | None = None) -> TargetSelection:
    """Target candidates among a target page's elements: those with ``data-filter-by`` naming a
    property that has a filter function, restricted to the xpaths in ``considered`` (None = all)."""
    selection = TargetSelection(candidates=[], excluded=[], dropped=[])
    for element in elements:
        name = element.filter_by
        if name is None:
            continue
        if considered is not None and element.xpath not in considered:
            selection.excluded.append(element)
        elif not weights.is_known(name):
            selection.dropped.append(DroppedTarget(element, "unknown filter method"))
        elif not weights.property_spec(name).has_filter:
            selection.dropped.append(DroppedTarget(element, "no filter function"))
        else:
            selection.candidates.append(element)
    return selection


@dataclass(frozen=True)
class Match:
    target: Element
    generated: Element
    #: s = GIoU + filter − 1e-5·descendants.
    score: float
    giou: float
    filter: float


@dataclass
class Matching:
    """Matches in target order, then targets left without a partner, then penalty-only ones."""

    matches: list[Match]
    unmatched: list[Element]
    dropped: list[DroppedTarget]


def match_elements(targets: Sequence[Element], generated: Sequence[Element], *,
                   official_quirks: bool | None = None) -> Matching:
    """Assign target candidates (see :func:`select_targets`) to generated elements."""
    cost = cost_matrix(targets, generated, official_quirks=official_quirks)
    rows, cols = linear_sum_assignment(cost)
    matching = Matching(matches=[], unmatched=[], dropped=[])
    assigned: set[int] = set()
    for i, j in zip(rows.tolist(), cols.tolist()):
        assigned.add(i)
        t, g = targets[i], generated[j]
        # Non-penalty costs are −s with s ≥ −1, i.e. at most 1; the release keeps pairs with
        # cost ≤ −threshold, which selects exactly those.
        if cost[i, j] <= -MATCH_THRESHOLD:
            matching.matches.append(Match(
                target=t, generated=g, score=float(-cost[i, j]), giou=giou(t.box, g.box),
                filter=filter_value(t, g, official_quirks=official_quirks),
            ))
        else:
            matching.dropped.append(DroppedTarget(t, "penalty-only assignment"))
    matching.unmatched = [t for i, t in enumerate(targets) if i not in assigned]
    return matching
