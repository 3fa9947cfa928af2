"""The cost page of one board: score against what one run of a scenario cost, with the Pareto frontier.

Built from finished submissions only, the same for every visitor: its content is kept in the board
cache until a write changes the board (a model's new prices change every board).
"""
from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from evaluators.base import get_plugin
from leaderboard.cache import CachedPage, board_scope, page_cached
from leaderboard.selectors import COST_AXES, board_cost_get


def board_cost(request: HttpRequest, env: str, flow: str, subset: str) -> HttpResponse:
    suite = request.GET.get("suite") or None
    asked = request.GET.get("x", "")
    axis = asked if asked in COST_AXES else ""

    def build() -> CachedPage:
        try:
            cost = board_cost_get(env=env, flow=flow, subset=subset, suite=suite, axis=axis)
        except (KeyError, ValueError):
            raise Http404("no such board") from None
        content = render_to_string("leaderboard/analysis/_cost_content.html", {
            "board": cost.board, "cost": cost, "chart_data": cost.chart_data(), "axes": COST_AXES,
            "page": "cost", "flows": get_plugin(env).flows, "subsets": ("mini", "full"),
        })
        return CachedPage(title=f"Cost: {get_plugin(env).title} {flow} {subset}", content=content,
                          charts=bool(cost.placed), cacheable=bool(cost.board.scenario_count))

    page = page_cached("cost", (env, flow, subset, suite or "", axis), build, scope=board_scope(env, flow, subset))
    return render(request, "leaderboard/analysis/cost.html", {"page": page})
