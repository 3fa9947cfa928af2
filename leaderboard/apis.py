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
from leaderboard.selectors import BoardFilter, board_cached, board_storable
from leaderboard.views import board_key
from submissions.apis import viewable_submission
from submissions.export_apis import (
    FORMAT_HELP,
    FRAMES,
    AnyAccept,
    export_format,
    export_response,
    export_unavailable,
    wants_frames,
)
from submissions.exports import FORMATS


# The four names of a board, first in every answer about one (board, pairs, snapshot). A comment, not a
# docstring: drf-spectacular would print a docstring as each component's description.
class BoardRefOutput(serializers.Serializer):
    env = serializers.CharField()
    flow = serializers.CharField()
    subset = serializers.CharField()
    suite = serializers.CharField()


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
        rows = BoardRow(many=True, help_text="one object per entry, the same columns as the CSV export; every "
                                             "column is described at /data/columns/")

    @extend_schema(
        parameters=[
            OpenApiParameter("env", str, OpenApiParameter.PATH, enum=environment_slugs()),
            OpenApiParameter("flow", str, OpenApiParameter.PATH, enum=environment_flows()),
            OpenApiParameter("subset", str, OpenApiParameter.PATH, enum=list(SUBSETS)),
        ] + [OpenApiParameter(name, str, required=False, description=text) for name, text in (
            ("suite", "scenario suite (default: official once imported, else fixture)"),
            ("open", "1: open-weight models only"), ("size", "parameter bucket: <10B, 10-40B, 40-100B, >100B, unknown"),
            ("org", "organisation"), ("best", "1: one best entry per team"), ("verified", "1: verified entries only"),
            ("reported", "1: rank published results too"),
            ("incomplete", "1: rank entries whose scored scenarios do not cover the board's (unranked by default)"),
            ("q", "search: only rows whose model or team name contains this text (ranks stay the board's)"),
            ("prompts", "another generation of the board: the version of the prompt set its entries ran with "
                        "(default: the suite's current one)"))],
        responses={200: OutputSerializer})
    def get(self, request, env: str, flow: str, subset: str) -> Response:
        """A board's ranked entries.

        The rows of the board page and its CSV export: each entry's mean score with its standard
        error and 95% confidence interval, its rank and the model's metadata. Anonymous callers see
        public entries; a team's token adds the team's private ones.
        """
        return Response(board_payload(request, env, flow, subset))


BOARD_PATH = [OpenApiParameter("env", str, OpenApiParameter.PATH, enum=environment_slugs()),
              OpenApiParameter("flow", str, OpenApiParameter.PATH, enum=environment_flows()),
              OpenApiParameter("subset", str, OpenApiParameter.PATH, enum=list(SUBSETS))]


class BoardAttemptsExportApi(APIView):
    content_negotiation_class = AnyAccept

    @extend_schema(
        operation_id="boards_attempts_export",
        parameters=[*BOARD_PATH,
                    OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(FORMATS), description=FORMAT_HELP),
                    FRAMES,
                    *(OpenApiParameter(name, str, required=False, description=f"as for the board: {name}")
                      for name in ("suite", "open", "size", "org", "best", "verified", "incomplete", "q", "prompts"))],
        responses=ATTEMPT_EXPORT_RESPONSES)
    def get(self, request, env: str, flow: str, subset: str, fmt: str) -> HttpResponseBase:
        """Every attempt of a board's entries, one row each, or their trajectories.

        The entries are the board's rows for the same query (filters, suite, prompt set), in their
        order; the columns are those of a submission's export. Anonymous callers get the public
        entries and baselines; a team's token or session adds the team's private ones. The file is
        built once per change of the board, by a worker: until it is ready the answer is 202 with
        Retry-After.
        """
        export_format(fmt)
        payload = board_payload(request, env, flow, subset)
        try:
            spec = board_export_spec((env, flow, subset), payload_entries(payload), request_access(request).team_ids,
                                     fmt, frames=wants_frames(request, fmt))
        except GenerationUnknown:
            return export_unavailable(request)
        return export_response(request, spec, f"magebench-{env}-{flow}-{subset}-{payload['suite']}")


class SubmissionExportApi(APIView):
    content_negotiation_class = AnyAccept

    @extend_schema(
        operation_id="submissions_export",
        parameters=[OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(FORMATS), description=FORMAT_HELP),
                    FRAMES],
        responses=ATTEMPT_EXPORT_RESPONSES)
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
        submission = viewable_submission(request_access(request), submission_id)
        try:
            spec = submission_export_spec(submission, fmt, frames=wants_frames(request, fmt))
        except GenerationUnknown:
            return export_unavailable(request)
        return export_response(request, spec, f"magebench-submission-{submission.id}")


def board_payload(request: Any, env: str, flow: str, subset: str) -> dict[str, Any]:
    """The API's answer for a board and the request's query, from the board cache (``request`` is a
    Django or DRF request), built from the board's cached data (``board_cached``), which the warm fills."""
    filters = BoardFilter.from_query(request.GET)
    key = board_key(request, env, flow, subset)

    def build() -> tuple[dict[str, Any], bool]:
        try:
            board = board_cached(env=env, flow=flow, subset=subset, suite=request.GET.get("suite"),
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
