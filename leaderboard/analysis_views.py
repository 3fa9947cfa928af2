"""Server-rendered analysis and comparison pages of one board."""
from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from evaluators.base import get_plugin
from leaderboard.analysis import ZONE_LANES, ZONE_THIRDS, board_analysis_get, board_compare_get


def _submission_param(request: HttpRequest, name: str) -> int | None:
    try:
        return int(request.GET.get(name, ""))
    except ValueError:
        return None


def _nav(env: str) -> dict[str, object]:
    return {"flows": get_plugin(env).flows, "subsets": ("mini", "full")}


def board_analysis(request: HttpRequest, env: str, flow: str, subset: str) -> HttpResponse:
    try:
        analysis = board_analysis_get(env=env, flow=flow, subset=subset, suite=request.GET.get("suite") or None)
    except (KeyError, ValueError):
        raise Http404("no such board") from None
    return render(request, "leaderboard/analysis/analysis.html", {
        "board": analysis.board, "analysis": analysis, "chart_data": analysis.chart_data(),
        "zone_lanes": ZONE_LANES, "zone_thirds": ZONE_THIRDS, "page": "analysis", **_nav(env),
    })


def board_compare(request: HttpRequest, env: str, flow: str, subset: str) -> HttpResponse:
    try:
        comparison = board_compare_get(env=env, flow=flow, subset=subset, suite=request.GET.get("suite") or None,
                                       a=_submission_param(request, "a"), b=_submission_param(request, "b"))
    except (KeyError, ValueError):
        raise Http404("no such board") from None
    return render(request, "leaderboard/analysis/compare.html", {
        "board": comparison.board, "cmp": comparison, "chart_data": comparison.chart_data(),
        "fixed_threshold": get_plugin(env).fail_threshold, "page": "compare", **_nav(env),
    })
