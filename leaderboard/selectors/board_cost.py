"""A board's cost view: each entry's score against what a run of a scenario cost it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluators.base import all_plugins
from leaderboard.selectors.boards import board_get
from leaderboard.selectors.rows import Board, BoardRow
from scoring.cost import CostAxis, CostPoint, cost_axis, pareto_frontier

#: The cost page's x axes: USD per scenario at the models' prices, or the tokens measured.
COST_AXES = {"usd": "Cost per scenario (USD)", "tokens": "Tokens per scenario"}


@dataclass
class CostEntry:
    row: BoardRow
    cost: float | None
    on_frontier: bool
    #: Why the entry has no place on the chart ("" when it has one).
    excluded: str = ""


@dataclass
class BoardCost:
    """A board's entries placed by score against what one run of a scenario cost them, with the
    Pareto frontier: the entries no other beats on both (``scoring.cost.pareto_frontier``)."""

    board: Board
    axis: str
    #: Entries with a cost in USD (the page offers USD only when there are any).
    priced: int
    entries: list[CostEntry]

    @property
    def axis_label(self) -> str:
        return COST_AXES[self.axis]

    @property
    def placed(self) -> list[CostEntry]:
        return [entry for entry in self.entries if not entry.excluded]

    @property
    def x_axis(self) -> CostAxis | None:
        """The chart's cost axis, fitted to the placed entries' costs (``scoring.cost.cost_axis``)."""
        return cost_axis([entry.cost for entry in self.placed if entry.cost is not None])

    @property
    def free(self) -> int:
        """Placed entries that cost nothing, when the axis is a log one: it has no 0, so the chart
        draws them at its floor (a linear axis draws them at 0)."""
        axis = self.x_axis
        if axis is None or not axis.log:
            return 0
        return sum(1 for entry in self.placed if entry.cost == 0)

    @property
    def frontier(self) -> list[CostEntry]:
        return sorted((e for e in self.entries if e.on_frontier), key=lambda e: (e.cost, -(e.row.mean or 0.0)))

    def chart_data(self) -> dict[str, Any]:
        def point(entry: CostEntry) -> dict[str, Any]:
            row = entry.row
            return {"label": row.model, "team": row.team, "x": entry.cost, "y": row.mean,
                    "low": row.ci_low, "high": row.ci_high, "frontier": entry.on_frontier,
                    "baseline": row.is_baseline, "submission": row.submission_id}

        axis = self.x_axis
        return {"axis": self.axis, "x_label": self.axis_label, "y_label": self.board.score_label,
                "x_axis": {"log": axis.log, "range": [axis.low, axis.high], "floor": axis.floor} if axis else None,
                "points": [point(e) for e in self.placed], "frontier": [[e.cost, e.row.mean] for e in self.frontier]}


@dataclass
class CostOverview:
    """Every board of one subset (each environment's default suite, each flow it plays) in its cost view."""

    subset: str
    axis: str
    boards: list[BoardCost]


def cost_overview_get(*, subset: str, axis: str = "") -> CostOverview:
    """The cost view of every board of ``subset``: one per environment and flow, in the environments'
    order; each keeps its own score scale. Unknown subsets raise ValueError like ``board_get``."""
    boards = [board_cost_get(env=plugin.slug, flow=flow, subset=subset, axis=axis)
              for plugin in sorted(all_plugins(), key=lambda p: (p.position, p.slug)) for flow in plugin.flows]
    return CostOverview(subset=subset, axis=axis, boards=boards)


def board_cost_get(*, env: str, flow: str, subset: str, suite: str | None = None, axis: str = "") -> BoardCost:
    """The cost view of a board's public entries and baselines (the platform's own runs: published
    numbers carry no measured effort). ``axis`` "" is USD when any entry has a price, else tokens."""
    board = board_get(env=env, flow=flow, subset=subset, suite=suite)
    rows = [row for row in board.rows if row.submission_id is not None]
    priced = sum(1 for row in rows if row.cost_per_scenario is not None)
    if axis not in COST_AXES:
        axis = "usd" if priced else "tokens"

    def cost_of(row: BoardRow) -> float | None:
        return row.cost_per_scenario if axis == "usd" else row.tokens_per_scenario

    def why_not(row: BoardRow) -> str:
        if row.mean is None:
            return "no scored attempt"
        if not row.effort_attempts:
            return "not measured (uploaded outputs)"
        if row.tokens_per_scenario is None:
            return "the endpoint reported no token counts"
        return "the model has no prices" if axis == "usd" else ""

    frontier = pareto_frontier([CostPoint(key=row.submission_id, score=row.mean, cost=cost_of(row)) for row in rows])
    entries = [CostEntry(row=row, cost=cost_of(row), on_frontier=row.submission_id in frontier.keys,
                         excluded="" if cost_of(row) is not None and row.mean is not None else why_not(row))
               for row in rows]
    entries.sort(key=lambda e: (bool(e.excluded), e.cost if e.cost is not None else 0.0, -(e.row.mean or 0.0)))
    return BoardCost(board=board, axis=axis, priced=priced, entries=entries)
