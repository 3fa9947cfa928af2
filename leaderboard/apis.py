"""REST API for boards."""
from __future__ import annotations

from django.http import Http404
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.selectors import BoardFilter, board_get


class BoardApi(APIView):
    def get(self, request, env: str, flow: str, subset: str) -> Response:
        try:
            board = board_get(env=env, flow=flow, subset=subset, suite=request.query_params.get("suite"),
                              filters=BoardFilter.from_query(request.query_params))
        except (KeyError, ValueError):
            raise Http404("no such board") from None
        return Response({"env": env, "flow": flow, "subset": subset, "suite": board.suite,
                         "scenarios": board.scenario_count, "score_label": board.score_label,
                         "rows": [row.as_dict() for row in board.rows]})
