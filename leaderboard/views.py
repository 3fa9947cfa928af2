"""Server-rendered board and metric-card pages.

Boards, exports and the home page are built from finished submissions only: they are kept in the
board cache (``leaderboard.cache``) until a write changes a board.
"""
from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from accounts.selectors import request_access
from catalogue.citations import PAPER, Citation, leaderboard_citation
from catalogue.prompt_sets import prompt_set_current, prompt_set_get, prompt_set_row
from catalogue.selectors import board_suites, default_suite, environments_with_reported_results
from evaluators.base import FLOWS, SUBSETS, all_plugins, get_plugin
from leaderboard.attempt_exports import board_export_links, board_page_export
from leaderboard.cache import HOME, CachedPage, board_scope, cached, page_cached
from leaderboard.context_processors import environments
from leaderboard.data_views import with_snapshot_link
from leaderboard.query_params import (
    BoardFilterParams,
    BoardPageParams,
    HomeParams,
    SuiteOnlyParams,
    shows_bad_query,
)
from leaderboard.selectors import (
    SIZE_BUCKETS,
    UNKNOWN_SIZE,
    Board,
    BoardQuery,
    Overview,
    OverviewRow,
    board_cached,
    board_organisations_cached,
    board_storable,
    home_boards_cached,
    metric_card,
    model_chart_data,
    model_page_get,
    model_summaries,
    overview_of,
    scale_notes,
    summary_get,
)
from magebench_client.csv_safe import write_csv


def _board_or_404(env: str, flow: str, subset: str, query: BoardQuery, viewer_team_ids: tuple[int, ...] = ()) -> Board:
    try:
        return board_cached(env=env, flow=flow, subset=subset, suite=query.suite, filters=query.filters,
                            viewer_team_ids=viewer_team_ids)
    except (KeyError, ValueError):
        raise Http404("no such board") from None


def board_key(request: HttpRequest, env: str, flow: str, subset: str, query: BoardQuery) -> tuple[Any, ...]:
    """What a board depends on: the board, the visitor's suite and filters and the teams whose private
    rows the visitor sees (none for most visitors, who then share one entry)."""
    return (env, flow, subset, query.suite, query.filters, tuple(sorted(request_access(request).team_ids)))


#: The models of the home page's overview: those among the first of any column, and the baselines
#: (its boards show their first ``HOME_BOARD_ROWS`` rows). ``?models=all`` lists every
#: model instead, a page at a time. With 200 entries a board, every row on one page made 1.5 MiB.
OVERVIEW_TOP = 10
OVERVIEW_ROWS_PER_PAGE = 100


@shows_bad_query
def home(request: HttpRequest) -> HttpResponse:
    query = HomeParams.read(request)
    subset, every_model, asked, across_flow = query.overview, query.every_model, query.page, query.across

    def build() -> CachedPage:
        plugins = all_plugins()
        # Every board's stored ranking in one read (each ranked again only where a write made it
        # stale), kept in the board cache: ranking ten boards of 200 entries made most of the page's time.
        ranked = home_boards_cached()
        sections: list[dict[str, Any]] = []
        for plugin in plugins:
            boards = [ranked[(plugin.slug, flow, board_subset)].board
                      for board_subset in SUBSETS for flow in plugin.flows]
            sections.append({"plugin": plugin, "suite": boards[0].suite, "boards": boards})
        overview = overview_of(subset, [ranked[(plugin.slug, flow, subset)] for plugin in plugins
                                        for flow in plugin.flows])
        models = len(overview.rows)
        pager = None
        if every_model:
            pager = Pager.of(models, asked, OVERVIEW_ROWS_PER_PAGE, f"overview={subset}&models=all")
            overview.rows = overview.rows[pager.rows]
        else:
            overview.rows = overview_top(overview, OVERVIEW_TOP)
        across = summary_get(flow=across_flow, subset=subset, ranked=ranked)
        reported = environments_with_reported_results()
        content = render_to_string("leaderboard/_home_content.html", {
            "sections": [] if every_model else sections, "overview": overview, "models": models,
            "every_model": every_model, "pager": pager, "overview_top": OVERVIEW_TOP, **environments(request),
            "across": across, "across_rows": [(across, row) for row in across.rows], "across_flows": FLOWS,
            # The paper's reported rows live on the official suite's boards: one link per environment that has them.
            "official_boards": [(plugin, plugin.flows[0]) for plugin in plugins if plugin.slug in reported]})
        return CachedPage(title="MageBench Leaderboard", content=content,
                          cacheable=pager is None or pager.page == asked)

    page = page_cached("home", (subset, every_model, asked, across_flow), build, scope=HOME)
    return render(request, "leaderboard/home.html", {"page": page})


def overview_top(overview: Overview, top: int) -> list[OverviewRow]:
    """The overview's baselines and every model whose entry is among the ``top`` best of a column."""
    best: set[int] = set()
    for index in range(len(overview.columns)):
        cells = [(cell.mean, position) for position, row in enumerate(overview.rows)
                 if not row.is_baseline and (cell := row.cells[index]) is not None and cell.mean is not None]
        best.update(position for _, position in sorted(cells, key=lambda c: (-(c[0] or 0.0), c[1]))[:top])
    return [row for position, row in enumerate(overview.rows) if row.is_baseline or position in best]


#: Rows of a board on one page: a full board of 200 entries was 250–430 KiB of HTML on one page.
BOARD_ROWS_PER_PAGE = 100


@dataclass(frozen=True)
class Pager:
    """Which rows of a paged table one page shows, and the links to the others."""

    page: int
    pages: int
    first: int
    last: int
    total: int
    #: The page's query without ``page``, for the links to the others.
    query: str

    @property
    def numbers(self) -> range:
        return range(1, self.pages + 1)

    @classmethod
    def of(cls, total: int, asked: int, per_page: int, query: str) -> Pager:
        pages = max(1, math.ceil(total / per_page))
        page = min(asked, pages)
        return cls(page=page, pages=pages, first=(page - 1) * per_page + 1, last=min(page * per_page, total),
                   total=total, query=query)

    @property
    def rows(self) -> slice:
        return slice(self.first - 1, self.last)


#: Where a cached board page's per-attempt export links go (``_with_attempt_exports``).
ATTEMPT_EXPORTS_SLOT = re.compile(r'<span data-attempt-exports-slot data-board="(?P<board>[\w-]+/[\w-]+/[\w-]+)" '
                                  r'data-query="(?P<query>[^"]*)"></span>')


@shows_bad_query
def board(request: HttpRequest, env: str, flow: str, subset: str) -> HttpResponse:
    query = BoardPageParams.read(request)
    # The sort is one of the board's columns: it adds at most a few entries per query.
    filters, order, asked = query.filters, query.sort, query.page
    key = board_key(request, env, flow, subset, query)

    def build() -> CachedPage:
        data = _board_or_404(env, flow, subset, query, viewer_team_ids=key[-1])
        data.rows = order.apply(data.rows)
        shown = filters.query(suite=data.suite)
        if order.column:
            shown += f"&sort={order.column}&dir={order.direction}"
        pager = Pager.of(len(data.rows), asked, BOARD_ROWS_PER_PAGE, shown)
        export = board_page_export((env, flow, subset), [row.submission_id for row in data.rows])
        # Reported rows have no attempts: a board of those alone offers no per-attempt downloads.
        has_attempts = any(row.submission_id is not None for row in data.rows)
        data.rows = data.rows[pager.rows]
        organisations = board_organisations_cached(env=env, flow=flow, subset=subset, suite=data.suite)
        content = render_to_string("leaderboard/_board_content.html", {
            "filters": filters, "order": order, "size_buckets": [b[0] for b in SIZE_BUCKETS] + [UNKNOWN_SIZE],
            "organisations": organisations, "export_query": filters.query(suite=data.suite),
            # Only the environment's own flows get a tab (an environment may have one flow only).
            "board": data, "suites": board_suites(env), "flows": get_plugin(env).flows, "subsets": SUBSETS,
            "pager": pager,
            "has_attempts": has_attempts,
        })
        # A page past the last is shown the last one, but not stored under its own key.
        title = f"{data.title} · {data.flow.title()} · {data.subset} · suite {data.suite}"
        return CachedPage(title=title, content=content,
                          cacheable=board_storable(data, filters, organisations) and pager.page == asked,
                          export=export, suite=data.suite)

    page = page_cached("board", (*key, order, asked), build, scope=board_scope(env, flow, subset))
    content = with_snapshot_link(_with_attempt_exports(page))
    return render(request, "leaderboard/board.html", {"page": page, "content": content,
                                                      "citations": _citations(request, page, env, flow, subset)})


def _citations(request: HttpRequest, page: CachedPage, env: str, flow: str, subset: str) -> list[Citation]:
    """The paper, and this board as this visitor reads it: its address with the view's query, today."""
    board = f"{get_plugin(env).title}, {flow.title()} flow, {subset} set, suite {page.suite or '(default)'}"
    return [PAPER, leaderboard_citation(url=request.build_absolute_uri(), board=board, accessed=timezone.localdate())]


def _with_attempt_exports(page: CachedPage) -> SafeString:
    """The board page's content with its per-attempt export links, which say how big each file is: built
    for this visitor, since the files (and their sizes) are built after the page was cached."""
    match = ATTEMPT_EXPORTS_SLOT.search(page.content)
    if match is None:
        return page.html
    env, flow, subset = match.group("board").split("/")
    links = board_export_links((env, flow, subset), page.export, html.unescape(match.group("query")))
    rendered = render_to_string("leaderboard/_board_attempt_exports.html", {"links": links})
    # Both parts were rendered by Django's templates, which escaped them.
    return mark_safe(page.content[:match.start()] + rendered + page.content[match.end():])


@shows_bad_query
def board_export(request: HttpRequest, env: str, flow: str, subset: str, fmt: str) -> HttpResponse:
    if fmt not in ("csv", "json"):
        raise Http404("a board is exported as csv or json")
    query = BoardFilterParams.read(request)
    filters = query.filters
    key = board_key(request, env, flow, subset, query)

    def build() -> tuple[str, bytes, bool]:
        data = _board_or_404(env, flow, subset, query, viewer_team_ids=key[-1])
        rows = [row.as_dict() for row in data.rows]
        response: HttpResponse
        if fmt == "json":
            response = JsonResponse({"env": env, "flow": flow, "subset": subset, "suite": data.suite, "rows": rows})
        else:
            response = HttpResponse(content_type="text/csv; charset=utf-8")
            write_csv(response, list(rows[0]) if rows else ["rank", "model", "mean", "se"], rows)
        return data.suite, response.content, board_storable(data, filters)

    suite, body, _ = cached(f"export-{fmt}", key, build, keep=lambda built: built[2],
                            scope=board_scope(env, flow, subset))
    response = (HttpResponse(body, content_type="application/json") if fmt == "json"
                else HttpResponse(body, content_type="text/csv; charset=utf-8"))
    # Every part is a slug (the URL's and board_get's patterns): nothing to escape in the header.
    response["Content-Disposition"] = f'attachment; filename="magebench-{env}-{flow}-{subset}-{suite}.{fmt}"'
    return response


@shows_bad_query
def prompt_set_view(request: HttpRequest, env: str, flow: str, version: str) -> HttpResponse:
    """Every text of one prompt set, as the model reads it, and where it was read from."""
    suite = SuiteOnlyParams.read(request)
    try:
        suite = suite or default_suite(env)
        prompts = prompt_set_get(env, suite, flow, version)
    except KeyError:
        raise Http404("no such environment") from None
    if prompts is None:
        raise Http404("no such prompt set")
    row = prompt_set_row(env, suite, flow, version)
    return render(request, "leaderboard/prompt_set.html", {
        "env": env, "title": get_plugin(env).title, "flow": flow, "suite": suite, "prompts": prompts,
        "texts": prompts.texts(), "row": row,
        "current": prompt_set_current(env, suite, flow).version == version})


def favicon(request: HttpRequest) -> HttpResponse:
    """The site's icon where a browser looks for one on its own: pages that name none (the client's
    plain-text page, downloads) would otherwise ask for /favicon.ico and get a 404."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


def metric_card_view(request: HttpRequest, env: str) -> HttpResponse:
    try:
        card = metric_card(env)
    except KeyError:
        raise Http404("no such environment") from None
    return render(request, "leaderboard/metric_card.html", {"card": card})


def model_detail(request: HttpRequest, model_id: int) -> HttpResponse:
    """A model's metadata and its entries on every board, as the boards show them to this visitor."""
    viewer_team_ids = tuple(sorted(request_access(request).team_ids))

    def build() -> CachedPage:
        model = model_page_get(model_id=model_id, viewer_team_ids=viewer_team_ids)
        if model is None:
            return CachedPage(title="", content="", cacheable=False)
        chart = model_chart_data(model.best)
        across = model_summaries(model_id)
        content = render_to_string("leaderboard/_model_content.html", {
            "model": model, "chart": chart, "across_rows": across,
            "across_scales": across[0][0].scales if across else [],
            # Each environment's floor and ceiling once (another flow or set may have another ceiling).
            "across_notes": scale_notes([scale for summary, _ in across for scale in summary.scales])})
        return CachedPage(title=model.name, content=content, charts=bool(chart))

    # Its entries are on any board: the home page's scope moves on with every board's change (and
    # with the models' metadata, which moves everything on).
    page = page_cached("model", (model_id, viewer_team_ids), build, scope=HOME)
    if not page.content:
        raise Http404("no such model")
    return render(request, "leaderboard/model.html", {"page": page})
