"""REST API for a board's matrix of all pairs (the page ``board-pairs`` shows)."""
from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.apis import BOARD_PATH, BoardRefOutput
from leaderboard.cache import board_scope, cached
from leaderboard.pairs import PAIR_ORDERS, board_pairs_get
from leaderboard.query_params import PairsParams
from leaderboard.selectors import PairsQuery
from leaderboard.selectors.analysis_reads import pairs_cached
from submissions.apis import ErrorOutput

_ENTRY: dict[str, serializers.Field] = {
    "submission": serializers.IntegerField(help_text="the entry's submission id"),
    "model": serializers.CharField(), "team": serializers.CharField(),
    "label": serializers.CharField(help_text="the model's name, with the submission id where a model has two entries"),
    "baseline": serializers.BooleanField(),
    "mean": serializers.FloatField(help_text="the entry's mean on the board"),
}


class BoardPairsApi(APIView):
    @extend_schema_serializer(component_name="BoardPairs")
    class OutputSerializer(BoardRefOutput):
        entries = serializers.IntegerField(help_text="the board's ranked entries and baselines: the matrix's size")
        per_page = serializers.IntegerField(help_text="entries in a block: a page is at most this many rows by "
                                                      "this many columns")
        pages = serializers.IntegerField(help_text="blocks of rows (and of columns)")
        page = serializers.IntegerField()
        cols = serializers.IntegerField()
        order = serializers.ChoiceField(choices=list(PAIR_ORDERS))
        alpha = serializers.FloatField(help_text="the p-value below which a pair is separable (the board's tie level)")
        rows = inline_serializer("PairRow", {
            **_ENTRY, "position": serializers.IntegerField(help_text="place in the board's order, from 1"),
            "rank": serializers.IntegerField(allow_null=True, help_text="the board's rank (null: a baseline)"),
            "mean_win_rate": serializers.FloatField(allow_null=True, help_text="mean of the entry's win rates "
                                                                               "against the page's other entries"),
        }, many=True)
        columns = inline_serializer("PairColumn", _ENTRY, many=True)
        cells = serializers.ListField(
            child=serializers.ListField(child=inline_serializer("PairCell", {
                "a": serializers.IntegerField(help_text="the row's submission"),
                "b": serializers.IntegerField(help_text="the column's submission"),
                "shared_scenarios": serializers.IntegerField(help_text="scenarios both have a scored mean for"),
                "mean_difference": serializers.FloatField(allow_null=True, help_text="mean over the shared scenarios "
                                                          "of A's per-scenario mean minus B's"),
                "p_value": serializers.FloatField(allow_null=True, help_text="two-sided paired t-test over the "
                                                  "shared scenarios (null: fewer than two), as on the compare page"),
                "significant": serializers.BooleanField(help_text="p_value below alpha"),
                "win_rate": serializers.FloatField(allow_null=True, help_text="share of shared scenarios where A's "
                                                   "mean is above B's, a tie counting half"),
            }, allow_null=True)),
            help_text="one list per row, one object per column; null where the row and the column are one entry")

    @extend_schema(parameters=[*BOARD_PATH, PairsParams], responses={200: OutputSerializer, 400: ErrorOutput})
    def get(self, request, env: str, flow: str, subset: str) -> Response:
        """Every pair of a board's entries.

        Row A against column B for the board's ranked entries and baselines, on the scenarios both
        ran: the mean paired difference A − B, the paired t-test's p-value, and A's win rate over
        those scenarios. At most ``per_page`` × ``per_page`` cells per call; ``page`` and ``cols``
        pick the blocks. Public entries only, the same for every caller.
        """
        query = PairsParams.read(request)
        return Response(board_pairs_payload(env, flow, subset, query))


def board_pairs_payload(env: str, flow: str, subset: str, query: PairsQuery) -> dict[str, Any]:
    """The API's answer, from the board cache (a block past the last is answered, not stored)."""
    suite, page, cols, order = query.suite, query.page, query.cols, query.order

    def build() -> tuple[dict[str, Any], bool]:
        try:
            # The first block in the board's order is the page's default, which the warm computes.
            pairs = pairs_cached(env=env, flow=flow, subset=subset) if (suite, page, cols, order) == (
                "", 1, 1, "board") else board_pairs_get(env=env, flow=flow, subset=subset, suite=suite or None,
                                                        page=page, cols=cols, order=order)
        except (KeyError, ValueError):
            raise Http404("no such board") from None
        return pairs.as_dict(), bool(pairs.board.scenario_count) and (pairs.page, pairs.cols) == (page, cols)

    payload, _ = cached("pairs-api", (env, flow, subset, suite, page, cols, order), build,
                        keep=lambda built: built[1], scope=board_scope(env, flow, subset))
    return payload
