"""REST API for boards."""
from __future__ import annotations

from typing import Any

from django.http.response import HttpResponseBase
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.selectors import request_access
from evaluators.base import SUBSETS, environment_flows, environment_slugs
from leaderboard.attempt_exports import GenerationUnknown, board_export_spec, payload_entries, submission_export_spec
from leaderboard.board_names import unknown_board_detail
from leaderboard.cache import board_scope, cached
from leaderboard.column_schema import ATTEMPT_EXPORT_RESPONSES, BoardRow
from leaderboard.query_params import BoardExportParams, BoardFilterParams
from leaderboard.selectors import BoardQuery, board_cached, board_storable
from leaderboard.views import board_key
from submissions.apis import ErrorOutput, viewable_submission
from submissions.export_apis import (
    FORMAT_HELP,
    AnyAccept,
    FramesQuery,
    export_format,
    export_response,
    export_unavailable,
    wants_frames,
)
from submissions.exports import FORMATS
from submissions.paging import LIST_PAGE_MAX, PAGE_HEADERS, ListPagination, PageQuery, checked_query


# The four names of a board, first in every answer about one (board, pairs, snapshot). A comment, not a
# docstring: drf-spectacular would print a docstring as each component's description.
class BoardRefOutput(serializers.Serializer):
    env = serializers.CharField()
    flow = serializers.CharField()
    subset = serializers.CharField()
    suite = serializers.CharField()


class BoardRowsQuery(PageQuery):
    """A board's rows: a page holds the most a list's page may unless asked for fewer (a board seldom has
    more entries, so most callers get the whole board in one answer)."""

    limit = serializers.IntegerField(required=False, default=LIST_PAGE_MAX, min_value=1, max_value=LIST_PAGE_MAX,
                                     help_text="how many rows")


class BoardApi(APIView):
    @extend_schema_serializer(component_name="Board")
    class OutputSerializer(BoardRefOutput):
        scenarios = serializers.IntegerField()
        score_label = serializers.CharField()
        prompts = serializers.DictField(help_text="the prompt set the rows ran with: version, source "
                                                  "(official or platform) and whether it is the suite's current one")
        generations = serializers.ListField(child=serializers.DictField(),
                                            help_text="every prompt set the board has entries of (one generation "
                                                      "each, never ranked together): version, source, entries, current")
        count = serializers.IntegerField(help_text="entries on the board with these filters, on every page")
        next = serializers.CharField(allow_null=True, help_text="the next page of rows, or null on the last")
        previous = serializers.CharField(allow_null=True, help_text="the previous page of rows, or null on the first")
        rows = BoardRow(many=True, help_text="one object per entry on this page (limit and offset), in ranking "
                                             "order; the same columns as the CSV export, every column described "
                                             "at /data/columns/")

    @extend_schema(
        parameters=[
            OpenApiParameter("env", str, OpenApiParameter.PATH, enum=environment_slugs()),
            OpenApiParameter("flow", str, OpenApiParameter.PATH, enum=environment_flows()),
            OpenApiParameter("subset", str, OpenApiParameter.PATH, enum=list(SUBSETS)),
            BoardFilterParams,
            BoardRowsQuery,
            *PAGE_HEADERS,
        ],
        responses={200: OutputSerializer, 400: ErrorOutput})
    def get(self, request, env: str, flow: str, subset: str) -> Response:
        """A board's ranked entries.

        The rows of the board page and its CSV export: each entry's mean score with its standard
        error and 95% confidence interval, its rank and the model's metadata. Anonymous callers see
        public entries; a team's token adds the team's private ones. The rows come a page at a time
        (``limit``, at most 200, and ``offset``); ``count``, ``next`` and ``previous`` say where the page
        stands, as do the X-Total-Count and Link headers of every list. A query parameter given a value
        it does not take is a 400 naming it.
        """
        query = BoardFilterParams.read(request)
        return board_rows_page(request, board_payload(request, env, flow, subset, query))


BOARD_PATH = [OpenApiParameter("env", str, OpenApiParameter.PATH, enum=environment_slugs()),
              OpenApiParameter("flow", str, OpenApiParameter.PATH, enum=environment_flows()),
              OpenApiParameter("subset", str, OpenApiParameter.PATH, enum=list(SUBSETS))]


class BoardAttemptsExportApi(APIView):
    content_negotiation_class = AnyAccept

    @extend_schema(
        operation_id="boards_attempts_export",
        parameters=[*BOARD_PATH,
                    OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(FORMATS), description=FORMAT_HELP),
                    BoardExportParams],
        responses={**ATTEMPT_EXPORT_RESPONSES, 400: ErrorOutput})
    def get(self, request, env: str, flow: str, subset: str, fmt: str) -> HttpResponseBase:
        """Every attempt of a board's entries, one row each, or their trajectories.

        The entries are the board's rows for the same query (filters, suite, prompt set), in their
        order; the columns are those of a submission's export. Anonymous callers get the public
        entries and baselines; a team's token or session adds the team's private ones. The file is
        built once per change of the board, by a worker: until it is ready the answer is 202 with
        Retry-After.
        """
        export_format(fmt)
        asked = checked_query(BoardExportParams, request)
        payload = board_payload(request, env, flow, subset, BoardExportParams.query_of(asked))
        try:
            spec = board_export_spec((env, flow, subset), payload_entries(payload), request_access(request).team_ids,
                                     fmt, frames=wants_frames(asked, fmt))
        except GenerationUnknown:
            return export_unavailable(request)
        return export_response(request, spec, f"magebench-{env}-{flow}-{subset}-{payload['suite']}")


class SubmissionExportApi(APIView):
    content_negotiation_class = AnyAccept

    @extend_schema(
        operation_id="submissions_export",
        parameters=[OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(FORMATS), description=FORMAT_HELP),
                    FramesQuery],
        responses={**ATTEMPT_EXPORT_RESPONSES, 400: ErrorOutput})
    def get(self, request, submission_id: int, fmt: str) -> HttpResponseBase:
        """A submission's attempts, one row each, or their trajectories.

        Each row: scenario, repeat, status, score, outcome, error kind and message, the invalid and
        repeated action flags (IA/RA) and parse errors, steps, model calls, tries, prompt and
        completion tokens, the cost at the model's prices (USD), the seconds it took and per model
        call, when it started and finished, and the folder of its trajectory in the zip. An upload's
        tokens and times are empty (``measured`` false): its replies were played back. A private
        submission of another team is a 404, as if it did not exist. The file is built once, by a
        worker: until it is ready the answer is 202 with Retry-After.
        """
        export_format(fmt)
        frames = wants_frames(checked_query(FramesQuery, request), fmt)
        submission = viewable_submission(request_access(request), submission_id)
        try:
            spec = submission_export_spec(submission, fmt, frames=frames)
        except GenerationUnknown:
            return export_unavailable(request)
        return export_response(request, spec, f"magebench-submission-{submission.id}")


class BoardRowsPagination(ListPagination):
    query_class = BoardRowsQuery


def board_rows_page(request: Any, payload: dict[str, Any]) -> Response:
    """The board's answer with the page of its rows the request asks for."""
    paginator = BoardRowsPagination()
    rows = paginator.paginate_queryset(payload["rows"], request) or []
    return paginator.get_paginated_response({
        **{name: value for name, value in payload.items() if name != "rows"},
        "count": paginator.count, "next": paginator.get_next_link(), "previous": paginator.get_previous_link(),
        "rows": rows,
    })


def board_payload(request: Any, env: str, flow: str, subset: str, query: BoardQuery) -> dict[str, Any]:
    """The API's answer for a board and ``query`` (the request's, read), from the board cache (``request``
    is a Django or DRF request), built from the board's cached data (``board_cached``), which the warm fills."""
    filters = query.filters
    key = board_key(request, env, flow, subset, query)

    def build() -> tuple[dict[str, Any], bool]:
        try:
            board = board_cached(env=env, flow=flow, subset=subset, suite=query.suite,
                                 filters=filters, viewer_team_ids=key[-1])
        except (KeyError, ValueError):
            # The valid environments, flows and sets come with it: a client shows them to whoever mistyped.
            raise exceptions.NotFound(unknown_board_detail(env, flow, subset)) from None
        return ({"env": env, "flow": flow, "subset": subset, "suite": board.suite,
                 "scenarios": board.scenario_count, "score_label": board.score_label,
                 "prompts": {"version": filters.prompts or (board.prompts.version if board.prompts else ""),
                             "source": board.prompts.source if board.prompts else "platform",
                             "current": not filters.prompts or any(g.current and g.version == filters.prompts
                                                                   for g in board.generations)},
                 "generations": [{"version": g.version, "source": g.source, "entries": g.entries, "current": g.current}
                                 for g in board.generations],
                 "rows": [row.as_dict() for row in board.rows]}, board_storable(board, filters))

    payload, _ = cached("board-api", key, build, keep=lambda built: built[1], scope=board_scope(env, flow, subset))
    return payload
