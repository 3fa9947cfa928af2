"""Server-rendered board and metric-card pages."""
from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from accounts.selectors import request_access
from evaluators.base import all_plugins, get_plugin
from leaderboard.catalogue import default_suite, suites_for
from leaderboard.selectors import (
    SIZE_BUCKETS,
    UNKNOWN_SIZE,
    BoardFilter,
    board_get,
    board_organisations,
    metric_card,
    overview_get,
)
from submissions.csv_safe import write_csv


def _board_or_404(request: HttpRequest, env: str, flow: str, subset: str, filters: BoardFilter | None = None):
    try:
        return board_get(env=env, flow=flow, subset=subset, suite=request.GET.get("suite"), filters=filters,
                         viewer_team_ids=request_access(request).team_ids)
    except (KeyError, ValueError):
        raise Http404("no such board") from None


def home(request: HttpRequest) -> HttpResponse:
    sections: list[dict[str, Any]] = []
    for plugin in all_plugins():
        suite = default_suite(plugin.slug)
        boards = [board_get(env=plugin.slug, flow=flow, subset=subset, suite=suite)
                  for subset in ("mini", "full") for flow in plugin.flows]
        sections.append({"plugin": plugin, "suite": suite, "boards": boards})
    subset = request.GET.get("overview", "mini")
    # The sections already built every board of the default suites: the overview reuses them.
    overview = overview_get(subset=subset if subset in ("mini", "full") else "mini",
                            boards=[board for section in sections for board in section["boards"]])
    return render(request, "leaderboard/home.html", {"sections": sections, "overview": overview})


def board(request: HttpRequest, env: str, flow: str, subset: str) -> HttpResponse:
    filters = BoardFilter.from_query(request.GET)
    data = _board_or_404(request, env, flow, subset, filters)
    organisations = board_organisations(env=env, flow=flow, subset=subset, suite=data.suite)
    return render(request, "leaderboard/board.html", {
        "filters": filters, "size_buckets": [b[0] for b in SIZE_BUCKETS] + [UNKNOWN_SIZE],
        "organisations": organisations,
        # Only the environment's own flows get a tab (an environment may have one flow only).
        "board": data, "suites": suites_for(env), "flows": get_plugin(env).flows, "subsets": ("mini", "full"),
    })


def board_export(request: HttpRequest, env: str, flow: str, subset: str, fmt: str) -> HttpResponse:
    if fmt not in ("csv", "json"):
        raise Http404("a board is exported as csv or json")
    data = _board_or_404(request, env, flow, subset, BoardFilter.from_query(request.GET))
    rows = [row.as_dict() for row in data.rows]
    # Every part is a slug (the URL's and board_get's patterns): nothing to escape in the header.
    name = f"magebench-{env}-{flow}-{subset}-{data.suite}"
    response: HttpResponse
    if fmt == "json":
        response = JsonResponse({"env": env, "flow": flow, "subset": subset, "suite": data.suite, "rows": rows})
    else:
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        write_csv(response, list(rows[0]) if rows else ["rank", "model", "mean", "se"], rows)
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


def metric_card_view(request: HttpRequest, env: str) -> HttpResponse:
    try:
        card = metric_card(env)
    except KeyError:
        raise Http404("no such environment") from None
    return render(request, "leaderboard/metric_card.html", {"card": card})
