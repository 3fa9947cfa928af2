"""Server-rendered analysis and comparison pages of one board.

Both are built from finished submissions only (public ones and baselines, the same for every
visitor): their content is kept in the board cache until a write changes the board.
"""
from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from evaluators.base import get_plugin
from leaderboard.analysis import ZONE_LANES, ZONE_THIRDS, board_analysis_get, board_compare_get
from leaderboard.cache import CachedPage, board_scope, cached, page_cached
from leaderboard.selectors import board_get


def _submission_param(request: HttpRequest, name: str) -> int | None:
    try:
        return int(request.GET.get(name, ""))
    except ValueError:
        return None


def _nav(env: str) -> dict[str, object]:
    return {"flows": get_plugin(env).flows, "subsets": ("mini", "full")}


def _title(kind: str, env: str, flow: str, subset: str) -> str:
    return f"{kind}: {get_plugin(env).title} {flow} {subset}"


#: Rows of the per-scenario matrix and the tag tables on one page: a full board's matrix is 483
#: cells a row, about 100 bytes each, so 200 entries on one page made 4–7 MB of HTML.
ANALYSIS_ROWS_PER_PAGE = 25


def board_analysis(request: HttpRequest, env: str, flow: str, subset: str) -> HttpResponse:
    suite = request.GET.get("suite") or None
    asked = _submission_param(request, "page") or 1

    def build() -> CachedPage:
        try:
            analysis = board_analysis_get(env=env, flow=flow, subset=subset, suite=suite, page=asked,
                                          per_page=ANALYSIS_ROWS_PER_PAGE)
        except (KeyError, ValueError):
            raise Http404("no such board") from None
        page, pages, shown = analysis.page, analysis.pages, analysis.rows
        content = render_to_string("leaderboard/analysis/_analysis_content.html", {
            "board": analysis.board, "analysis": analysis, "chart_data": analysis.chart_data(),
            "matrix_rows": analysis.matrix,
            "tag_tables": [{"breakdown": t, "rows": t.rows[shown]} for t in analysis.tags],
            "rows_page": page, "rows_pages": range(1, pages + 1) if pages > 1 else (),
            "rows_first": shown.start + 1, "rows_last": min(shown.stop, len(analysis.models)),
            "zone_lanes": ZONE_LANES, "zone_thirds": ZONE_THIRDS, "page": "analysis", **_nav(env),
        })
        # A page number past the last is shown the last page, but not stored under its own key.
        return CachedPage(title=_title("Analysis", env, flow, subset), content=content,
                          charts=bool(analysis.models),
                          cacheable=bool(analysis.board.scenario_count) and page == asked)

    page = page_cached("analysis", (env, flow, subset, suite or "", asked), build,
                       scope=board_scope(env, flow, subset))
    return render(request, "leaderboard/analysis/analysis.html", {"page": page})


def _entries(env: str, flow: str, subset: str, suite: str | None) -> tuple[int, ...]:
    """The submissions on the board: a comparison naming anything else is computed, never cached."""
    def build() -> tuple[int, ...]:
        try:
            board = board_get(env=env, flow=flow, subset=subset, suite=suite)
        except (KeyError, ValueError):
            raise Http404("no such board") from None
        return tuple(row.submission_id for row in board.rows if row.submission_id is not None)

    return cached("board-entries", (env, flow, subset, suite or ""), build, scope=board_scope(env, flow, subset))


def board_compare(request: HttpRequest, env: str, flow: str, subset: str) -> HttpResponse:
    suite = request.GET.get("suite") or None
    a, b = _submission_param(request, "a"), _submission_param(request, "b")

    def build() -> CachedPage:
        try:
            comparison = board_compare_get(env=env, flow=flow, subset=subset, suite=suite, a=a, b=b)
        except (KeyError, ValueError):
            raise Http404("no such board") from None
        content = render_to_string("leaderboard/analysis/_compare_content.html", {
            "board": comparison.board, "cmp": comparison, "chart_data": comparison.chart_data(),
            "fixed_threshold": get_plugin(env).fail_threshold, "page": "compare", **_nav(env),
        })
        entries = _entries(env, flow, subset, suite)
        return CachedPage(title=_title("Compare", env, flow, subset), content=content,
                          charts=bool(comparison.test and comparison.test.n_shared),
                          cacheable=bool(comparison.board.scenario_count) and all(
                              ref is None or ref in entries for ref in (a, b)))

    page = page_cached("compare", (env, flow, subset, suite or "", a, b), build,
                       scope=board_scope(env, flow, subset))
    return render(request, "leaderboard/analysis/compare.html", {"page": page})
