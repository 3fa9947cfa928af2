"""What an entry's runs cost, and which entries no other beats on both score and cost.

Plain Python (no Django): the board, its exports and the cost page all read these.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

TOKENS_PER_PRICE_UNIT = 1_000_000


def token_cost(prompt_tokens: float | None, completion_tokens: float | None, price_input_per_mtok: float | None,
               price_output_per_mtok: float | None) -> float | None:
    """The USD cost of these tokens at these prices per million tokens; None unless all four are known
    (a model with one price only would be costed as if its other tokens were free)."""
    if None in (prompt_tokens, completion_tokens, price_input_per_mtok, price_output_per_mtok):
        return None
    assert prompt_tokens is not None and completion_tokens is not None  # for the type checker
    assert price_input_per_mtok is not None and price_output_per_mtok is not None
    return (prompt_tokens * price_input_per_mtok + completion_tokens * price_output_per_mtok) / TOKENS_PER_PRICE_UNIT


@dataclass(frozen=True)
class CostPoint:
    """One entry as the frontier sees it: higher ``score`` is better, lower ``cost`` is better."""

    key: Hashable
    score: float | None
    cost: float | None


@dataclass(frozen=True)
class Frontier:
    #: The entries no other entry dominates, cheapest first (ties in cost: best score first).
    frontier: list[CostPoint]
    #: The entries with a score and a cost that some other entry dominates.
    dominated: list[CostPoint]
    #: The entries without a score or without a cost: not placed, listed as such.
    excluded: list[CostPoint]

    @property
    def keys(self) -> set[Hashable]:
        return {point.key for point in self.frontier}


def dominates(a: CostPoint, b: CostPoint) -> bool:
    """``a`` scores at least as high as ``b`` at no higher cost, and is strictly better on one of them."""
    assert a.score is not None and a.cost is not None and b.score is not None and b.cost is not None
    return a.score >= b.score and a.cost <= b.cost and (a.score > b.score or a.cost < b.cost)


def pareto_frontier(points: Sequence[CostPoint]) -> Frontier:
    """Split entries into the Pareto frontier of score against cost, the dominated ones and those that
    cannot be placed. Two entries with the same score and cost do not dominate each other: both are
    on the frontier when nothing else beats them."""
    placed = [p for p in points if p.score is not None and p.cost is not None]
    excluded = [p for p in points if p.score is None or p.cost is None]
    frontier: list[CostPoint] = []
    dominated: list[CostPoint] = []
    for point in placed:
        beaten = any(dominates(other, point) for other in placed if other is not point)
        (dominated if beaten else frontier).append(point)
    frontier.sort(key=lambda p: (p.cost, -(p.score or 0.0)))
    return Frontier(frontier=frontier, dominated=dominated, excluded=excluded)


#: Costs whose highest is at least this many times the lowest above zero get a log axis: they span an
#: order of magnitude. Closer costs (one model's runs at 355–391 tokens) get a linear one.
LOG_AXIS_RATIO = 10.0
#: Room on each side of the costs, as a share of their span (in decades on a log axis).
AXIS_PADDING = 0.08
#: The least room on a log axis (in decades), and on a linear one around a single cost (a share of it).
MIN_LOG_PADDING = 0.05
MIN_LINEAR_PADDING = 0.05


@dataclass(frozen=True)
class CostAxis:
    """The cost axis of a chart: the range it spans fits the costs drawn on it, with a little room."""

    log: bool
    #: The range in costs (on a log axis too: plotly takes their log10).
    low: float
    high: float
    #: Where a cost of 0 is drawn: at 0 on a linear axis; a log axis has no 0, so a decade below the
    #: cheapest other cost.
    floor: float


def cost_axis(costs: Sequence[float]) -> CostAxis | None:
    """The axis the costs are drawn on (None for no cost): log only when they span an order of
    magnitude, its range the costs' own with ``AXIS_PADDING`` on each side (never below 0 on a
    linear axis when nothing costs 0)."""
    if not costs:
        return None
    positive = [cost for cost in costs if cost > 0]
    free = len(positive) < len(costs)
    if not positive:
        return CostAxis(log=False, low=-1.0, high=1.0, floor=0.0)
    lowest, highest = min(positive), max(positive)
    if highest / lowest >= LOG_AXIS_RATIO:
        floor = 10.0 ** (math.floor(math.log10(lowest)) - 1) if free else lowest
        low, high = math.log10(floor), math.log10(highest)
        padding = max(AXIS_PADDING * (high - low), MIN_LOG_PADDING)
        return CostAxis(log=True, low=10.0 ** (low - padding), high=10.0 ** (high + padding), floor=floor)
    start = 0.0 if free else lowest
    span = highest - start
    padding = AXIS_PADDING * span if span > 0 else MIN_LINEAR_PADDING * highest
    low = start - padding
    return CostAxis(log=False, low=low if free or low > 0 else 0.0, high=highest + padding, floor=0.0)
