"""Server-rendered analysis and comparison pages of one board.

Both are built from finished submissions only (public ones and baselines, the same for every
visitor): their content is kept in the board cache until a write changes the board.
"""
from __future__ import annotations

import math

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from evaluators.base import SUBSETS, get_plugin
from leaderboard.analysis import MatrixRow, TagRow, board_analysis_get, board_compare_get
from leaderboard.cache import CachedPage, board_scope, cached, page_cached
from leaderboard.pairs import PAIR_ORDERS, board_pairs_get
from leaderboard.query_params import AnalysisParams, CompareParams, PairsParams, shows_bad_query
from leaderboard.selectors import board_cached
from leaderboard.selectors.analysis_reads import ANALYSIS_ROWS, analysis_cached, comparison_cached, pairs_cached

#: The plotly.js bundles the charts load: the smallest that draws them (static/vendor/README.md), by
#: the names an analysis panel declares (``evaluators.base.PLOTLY_BUNDLES``).
PLOTLY_BASIC = "vendor/plotly-basic.min.js"
PLOTLY_CARTESIAN = "vendor/plotly-cartesian.min.js"
PLOTLY_BUNDLES = {"basic": PLOTLY_BASIC, "cartesian": PLOTLY_CARTESIAN}


def _nav(env: str) -> dict[str, object]:
    return {"flows": get_plugin(env).flows, "subsets": SUBSETS}


def _title(kind: str, env: str, flow: str, subset: str) -> str:
    return f"{kind}: {get_plugin(env).title} · {flow.title()} · {subset}"


#: Rows of the per-entry tables (errors, lost score, best of N, tags, the per-scenario matrix) on one
#: page: a full board's matrix is 483 cells a row, about 100 bytes each, so 200 entries on one page
#: made 4–7 MB of HTML.
ANALYSIS_ROWS_PER_PAGE = ANALYSIS_ROWS
#: Columns of the per-scenario matrix, and of a tag table with more values than this (WebUI's one
#: per page), on one page: 25 rows of all 483 scenarios were still 1.2 MiB.
ANALYSIS_COLUMNS_PER_PAGE = 40


def _columns(total: int, asked: int) -> slice:
    """The columns a wide table shows on column page ``asked`` (kept within the pages it has)."""
    pages = max(1, math.ceil(total / ANALYSIS_COLUMNS_PER_PAGE))
    page = min(max(asked, 1), pages)
    return slice((page - 1) * ANALYSIS_COLUMNS_PER_PAGE, page * ANALYSIS_COLUMNS_PER_PAGE)


def _column_pager(total: int, columns: slice, asked: int) -> dict[str, object] | None:
    if total <= ANALYSIS_COLUMNS_PER_PAGE:
        return None
    pages = math.ceil(total / ANALYSIS_COLUMNS_PER_PAGE)
    return {"first": columns.start + 1, "last": min(columns.stop, total), "total": total,
            "page": min(max(asked, 1), pages), "pages": range(1, pages + 1)}


@shows_bad_query
def board_analysis(request: HttpRequest, env: str, flow: str, subset: str) -> HttpResponse:
    query = AnalysisParams.read(request)
    suite = query.suite or None
    if query.charts:
        return board_analysis_charts(env, flow, subset, suite)
    asked, asked_columns = query.page, query.cols

    def build() -> CachedPage:
        try:
            # The first page, the one the warm computes, is read from the board cache.
            analysis = analysis_cached(env=env, flow=flow, subset=subset) if suite is None and asked == 1 \
                else board_analysis_get(env=env, flow=flow, subset=subset, suite=suite, page=asked,
                                        per_page=ANALYSIS_ROWS_PER_PAGE)
        except (KeyError, ValueError):
            raise Http404("no such board") from None
        page, pages, shown = analysis.page, analysis.pages, analysis.rows
        columns = _columns(len(analysis.scenarios), asked_columns)
        tag_tables = []
        for breakdown in analysis.tags:
            wide = _columns(len(breakdown.values), asked_columns) if len(breakdown.values) > ANALYSIS_COLUMNS_PER_PAGE \
                else slice(None)
            tag_tables.append({
                "breakdown": breakdown, "values": breakdown.values[wide],
                "rows": [TagRow(model=r.model, means=r.means[wide], counts=r.counts[wide])
                         for r in breakdown.rows],
                "columns": _column_pager(len(breakdown.values), wide, asked_columns)})
        content = render_to_string("leaderboard/analysis/_analysis_content.html", {
            "board": analysis.board, "analysis": analysis,
            "errors_rows": analysis.errors[shown], "lost_rows": analysis.lost[shown],
            "curve_rows": analysis.curve_table()[shown],
            "matrix_scenarios": analysis.scenarios[columns],
            "matrix_rows": [MatrixRow(model=row.model, cells=row.cells[columns]) for row in analysis.matrix],
            "matrix_columns": _column_pager(len(analysis.scenarios), columns, asked_columns),
            "cols": asked_columns if asked_columns > 1 else None,
            "tag_tables": tag_tables,
            "rows_page": page, "rows_pages": range(1, pages + 1) if pages > 1 else (),
            "rows_first": shown.start + 1, "rows_last": min(shown.stop, len(analysis.models)),
            "plotly": PLOTLY_CARTESIAN if any(view.panel.plotly == "cartesian" for view in analysis.panels)
            else PLOTLY_BASIC,
            "panel_scripts": list(dict.fromkeys(view.panel.script for view in analysis.panels)),
            "page": "analysis", **_nav(env),
        })
        # A page number past the last is shown the last page, but not stored under its own key.
        return CachedPage(title=_title("Analysis", env, flow, subset), content=content,
                          charts=bool(analysis.models),
                          cacheable=bool(analysis.board.scenario_count) and page == asked and (
                              asked_columns == 1 or columns.start // ANALYSIS_COLUMNS_PER_PAGE + 1 == asked_columns))

    page = page_cached("analysis", (env, flow, subset, suite or "", asked, asked_columns), build,
                       scope=board_scope(env, flow, subset))
    return render(request, "leaderboard/analysis/analysis.html", {"page": page})


def board_analysis_charts(env: str, flow: str, subset: str, suite: str | None) -> JsonResponse:
    """What the analysis page's charts draw (every entry), fetched by its script once a chart is on
    screen: the page itself carries none of it."""
    def build() -> tuple[dict[str, object], bool]:
        try:
            analysis = board_analysis_get(env=env, flow=flow, subset=subset, suite=suite, matrix=False)
        except (KeyError, ValueError):
            raise Http404("no such board") from None
        return analysis.chart_data(), bool(analysis.board.scenario_count)

    data, _ = cached("analysis-charts", (env, flow, subset, suite or ""), build, keep=lambda built: built[1],
                     scope=board_scope(env, flow, subset))
    return JsonResponse(data)


def _entries(env: str, flow: str, subset: str, suite: str | None) -> tuple[int, ...]:
    """The submissions on the board (its default view, which the warm computes): a comparison naming
    anything else is computed, never cached."""
    try:
        board = board_cached(env=env, flow=flow, subset=subset, suite=suite)
    except (KeyError, ValueError):
        raise Http404("no such board") from None
    return tuple(row.submission_id for row in board.rows if row.submission_id is not None)


@shows_bad_query
def board_compare(request: HttpRequest, env: str, flow: str, subset: str) -> HttpResponse:
    query = CompareParams.read(request)
    suite, a, b = query.suite or None, query.a, query.b

    def build() -> CachedPage:
        try:
            comparison = comparison_cached(env=env, flow=flow, subset=subset) if (suite, a, b) == (None, None, None) \
                else board_compare_get(env=env, flow=flow, subset=subset, suite=suite, a=a, b=b)
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


@shows_bad_query
def board_pairs(request: HttpRequest, env: str, flow: str, subset: str) -> HttpResponse:
    """Every pair of the board's entries, a block of rows against a block of columns (``page``,
    ``cols``), in the ``order`` asked for (the board's when it names none)."""
    query = PairsParams.read(request)
    suite, asked, asked_columns, order = query.suite or None, query.page, query.cols, query.order

    def build() -> CachedPage:
        try:
            pairs = pairs_cached(env=env, flow=flow, subset=subset) if (suite, asked, asked_columns, order) == (
                None, 1, 1, "board") else board_pairs_get(env=env, flow=flow, subset=subset, suite=suite, page=asked,
                                                          cols=asked_columns, order=order)
        except (KeyError, ValueError):
            raise Http404("no such board") from None
        content = render_to_string("leaderboard/analysis/_pairs_content.html", {
            "board": pairs.board, "pairs": pairs, "orders": PAIR_ORDERS, "blocks": range(1, pairs.pages + 1),
            "page": "pairs", **_nav(env)})
        # A block past the last is shown but not stored.
        return CachedPage(title=_title("All pairs", env, flow, subset), content=content,
                          cacheable=bool(pairs.board.scenario_count)
                          and (pairs.page, pairs.cols) == (asked, asked_columns))

    page = page_cached("pairs", (env, flow, subset, suite or "", asked, asked_columns, order), build,
                       scope=board_scope(env, flow, subset))
    return render(request, "leaderboard/analysis/pairs.html", {"page": page})
