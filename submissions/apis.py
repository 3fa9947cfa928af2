"""REST API for submissions, attempts and trajectories."""
from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView, exception_handler as drf_exception_handler

from submissions.models import Attempt, Submission
from submissions.selectors import attempt_trajectory, queue_item, submission_progress
from submissions.services import (SubmissionError, model_entry_upsert, submission_create_endpoint,
                                  team_get_or_create)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Every API error is {"message": ..., "extra": {...}}; submitter mistakes are 400s."""
    if isinstance(exc, SubmissionError):
        return Response({"message": str(exc), "extra": {}}, status=status.HTTP_400_BAD_REQUEST)
    response = drf_exception_handler(exc, context)
    if response is not None:
        detail = response.data
        message = detail.get("detail", "invalid request") if isinstance(detail, dict) else "invalid request"
        extra = {k: v for k, v in detail.items() if k != "detail"} if isinstance(detail, dict) else {"errors": detail}
        response.data = {"message": str(message), "extra": extra}
    return response


class AttemptOutput(serializers.ModelSerializer):
    scenario = serializers.CharField(source="scenario.key")

    class Meta:
        model = Attempt
        fields = ["id", "scenario", "repeat", "status", "score", "outcome", "steps", "model_calls", "invalid_action",
                  "repeating_action", "parse_errors", "error_kind", "error_message", "tries", "prompt_tokens",
                  "completion_tokens", "started_at", "heartbeat_at", "finished_at", "duration_seconds"]


class SubmissionDetailApi(APIView):
    class OutputSerializer(serializers.ModelSerializer):
        model = serializers.CharField(source="model.name")
        team = serializers.CharField(source="team.name")
        env = serializers.CharField(source="environment_id")
        progress = serializers.SerializerMethodField()

        class Meta:
            model = Submission
            fields = ["id", "model", "team", "env", "flow", "subset", "suite", "source", "settings", "endpoint_url",
                      "endpoint_model", "status", "status_reason", "is_baseline", "created_at", "started_at",
                      "finished_at", "progress"]

        def get_progress(self, submission: Submission) -> dict[str, Any]:
            p = submission_progress(submission)
            place = queue_item(submission) if submission.is_active else None
            return {"total": p.total, "done": p.done, "scored": p.scored, "running": p.running,
                    "retrying": p.retrying, "pending": p.pending, "infra_failed": p.infra_failed,
                    "cancelled": p.cancelled, "queue_position": place.position if place else None,
                    "eta_seconds": place.eta_seconds if place else None,
                    "eta_is_lower_bound": bool(place and place.eta_at_least),
                    "last_error": place.last_error if place else ""}

    def get(self, request, submission_id: int) -> Response:
        submission = get_object_or_404(Submission.objects.select_related("model", "team"), id=submission_id)
        data = self.OutputSerializer(submission).data
        data["attempts"] = AttemptOutput(submission.attempts.select_related("scenario"), many=True).data
        return Response(data)


class SubmissionCreateApi(APIView):
    class InputSerializer(serializers.Serializer):
        team = serializers.CharField(max_length=120)
        model_name = serializers.CharField(max_length=120)
        organisation = serializers.CharField(max_length=120, required=False, default="")
        parameter_count = serializers.IntegerField(required=False, allow_null=True, min_value=1, default=None)
        open_weights = serializers.BooleanField(required=False, default=False)
        link = serializers.URLField(required=False, default="")
        licence = serializers.CharField(max_length=80, required=False, default="")
        env = serializers.CharField()
        flow = serializers.ChoiceField(choices=["global", "online"])
        subset = serializers.ChoiceField(choices=["mini", "full"])
        suite = serializers.SlugField(required=False, default=None, allow_null=True)
        endpoint_url = serializers.CharField(max_length=500)
        endpoint_model = serializers.CharField(max_length=200, required=False, default="")
        api_key = serializers.CharField(required=False, default="", write_only=True, trim_whitespace=True)
        settings = serializers.DictField(required=False, default=dict)

    def post(self, request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        team = team_get_or_create(name=data["team"])
        model = model_entry_upsert(team=team, name=data["model_name"], organisation=data["organisation"],
                                   parameter_count=data["parameter_count"], open_weights=data["open_weights"],
                                   link=data["link"], licence=data["licence"])
        try:
            submission = submission_create_endpoint(
                model=model, env=data["env"], flow=data["flow"], subset=data["subset"], suite=data["suite"],
                endpoint_url=data["endpoint_url"], endpoint_model=data["endpoint_model"], api_key=data["api_key"],
                settings=data["settings"])
        except (TypeError, ValueError) as exc:
            raise SubmissionError(str(exc)) from None
        return Response({"id": submission.id, "status": submission.status,
                         "attempts": submission.attempts.count()}, status=status.HTTP_201_CREATED)


class AttemptTrajectoryApi(APIView):
    def get(self, request, attempt_id: int) -> Response:
        attempt = get_object_or_404(Attempt.objects.select_related("scenario"), id=attempt_id)
        trajectory = attempt_trajectory(attempt)
        if trajectory is None:
            return Response({"message": "this attempt has no stored trajectory", "extra": {}}, status=404)
        return Response({"attempt": AttemptOutput(attempt).data, "trajectory": trajectory})
