"""The cost page of one board: score against what one run of a scenario cost, with the Pareto frontier.

Built from finished submissions only, the same for every visitor: its content is kept in the board
cache until a write changes the board (a model's new prices change every board).
"""
from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from evaluators.base import SUBSETS, get_plugin
from leaderboard.cache import HOME, CachedPage, board_scope, page_cached
from leaderboard.query_params import CostOverviewParams, CostParams, shows_bad_query
from leaderboard.selectors import COST_AXES, board_cost_get
from leaderboard.selectors.analysis_reads import cost_cached
from leaderboard.selectors.board_cost import cost_overview_get


@shows_bad_query
def board_cost(request: HttpRequest, env: str, flow: str, subset: str) -> HttpResponse:
    query = CostParams.read(request)
    suite, axis = query.suite or None, query.axis

    def build() -> CachedPage:
        try:
            # The board's own axis, the view the warm computes, is read from the board cache.
            cost = cost_cached(env=env, flow=flow, subset=subset) if (suite, axis) == (None, "") \
                else board_cost_get(env=env, flow=flow, subset=subset, suite=suite, axis=axis)
        except (KeyError, ValueError):
            raise Http404("no such board") from None
        content = render_to_string("leaderboard/analysis/_cost_content.html", {
            "board": cost.board, "cost": cost, "chart_data": cost.chart_data(), "axes": COST_AXES,
            "page": "cost", "flows": get_plugin(env).flows, "subsets": SUBSETS,
        })
        return CachedPage(title=f"Cost: {get_plugin(env).title} {flow} {subset}", content=content,
                          charts=bool(cost.placed), cacheable=bool(cost.board.scenario_count))

    page = page_cached("cost", (env, flow, subset, suite or "", axis), build, scope=board_scope(env, flow, subset))
    return render(request, "leaderboard/analysis/cost.html", {"page": page})


@shows_bad_query
def cost_overview(request: HttpRequest) -> HttpResponse:
    """Every environment's score-against-cost chart for one subset, each board on its own score scale.
    Cached with the home page, which every board's change moves on."""
    query = CostOverviewParams.read(request)
    subset, axis = query.subset, query.axis

    def build() -> CachedPage:
        overview = cost_overview_get(subset=subset, axis=axis)
        content = render_to_string("leaderboard/analysis/_cost_overview_content.html", {
            "overview": overview, "axes": COST_AXES, "subsets": SUBSETS,
            "charts": [(cost, f"cost-data-{cost.board.env}-{cost.board.flow}", cost.chart_data())
                       for cost in overview.boards],
        })
        return CachedPage(title=f"Cost across environments: {subset}", content=content,
                          charts=any(cost.placed for cost in overview.boards), cacheable=True)

    page = page_cached("cost-overview", (subset, axis), build, scope=HOME)
    return render(request, "leaderboard/analysis/cost.html", {"page": page})
