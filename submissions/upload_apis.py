"""REST API for uploads of outputs produced offline, and for checks of a file before it is uploaded.

Apart from ``submissions.apis``, whose views read and write JSON: these take a multipart file, share
one budget per user and per address (``upload_throttle``), and a large file's check is answered
later, once a worker has read it (``upload_checks``).
"""
from __future__ import annotations

from typing import Any, cast

from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import Team
from accounts.selectors import Access, request_access
from evaluators.base import SUBSETS, environment_slugs
from submissions.apis import ErrorOutput, ModelAndBoardInput, NamedChoiceField, SubmissionListCreateApi, _validated
from submissions.forms import flow_choices
from submissions.models import UploadFileCheck
from submissions.progress_selectors import submission_attempt_count
from submissions.selectors import upload_check_shown, upload_check_visible
from submissions.services import SubmissionError, model_spec_from
from submissions.upload_checks import upload_check_create, upload_check_is_deferred
from submissions.upload_services import submission_create_upload, upload_check, upload_read
from submissions.upload_throttle import UPLOAD_THROTTLES


class UploadCreateApi(APIView):
    parser_classes = [MultiPartParser]
    throttle_classes = [*APIView.throttle_classes, *UPLOAD_THROTTLES]

    @extend_schema_serializer(component_name="UploadSubmission")
    class InputSerializer(ModelAndBoardInput):
        file = serializers.FileField(help_text="zip of the MageBench output folder, or per-sample JSONL")

    @extend_schema(request={"multipart/form-data": InputSerializer},
                   responses={201: SubmissionListCreateApi.CreatedOutput, 400: ErrorOutput, 401: ErrorOutput,
                              403: ErrorOutput, 429: ErrorOutput})
    def post(self, request) -> Response:
        """Submit model outputs produced offline.

        A zip of the MageBench output folder, or per-sample JSONL. The site checks every sample and
        scores it itself; a refused upload stores nothing and lists every problem found.
        """
        data, team = _validated(self.InputSerializer, request)
        submission = submission_create_upload(model=model_spec_from(team=team, data=data), env=data["env"],
                                              flow=data["flow"], subset=data["subset"], suite=data["suite"],
                                              data=upload_read(data["file"]), is_public=data["public"],
                                              enforce_quota=True, created_by=request.user.pk,
                                              prepare_in_worker=True)
        return Response({"id": submission.id, "status": submission.status,
                         "attempts": submission_attempt_count(submission)}, status=status.HTTP_201_CREATED)


class UploadCheckApi(APIView):
    """Check a file of outputs as an upload would be checked, storing nothing and using no quota."""

    parser_classes = [MultiPartParser]
    throttle_classes = [*APIView.throttle_classes, *UPLOAD_THROTTLES]

    @extend_schema_serializer(component_name="UploadCheckRequest")
    class InputSerializer(serializers.Serializer):
        team = serializers.CharField(max_length=120, required=False, default="",
                                     help_text="slug or name of one of your teams, which may read a check made "
                                               "by a worker (a token's own team by default)")
        env = NamedChoiceField(choices=())
        flow = NamedChoiceField(choices=())
        subset = NamedChoiceField(choices=SUBSETS)
        suite = serializers.SlugField(required=False, default=None, allow_null=True)
        file = serializers.FileField(help_text="zip of the MageBench output folder, or per-sample JSONL")

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            cast(serializers.ChoiceField, self.fields["env"]).choices = environment_slugs()
            cast(serializers.ChoiceField, self.fields["flow"]).choices = flow_choices()

    @extend_schema_serializer(component_name="UploadCheck")
    class OutputSerializer(serializers.Serializer):
        valid = serializers.BooleanField()
        suite = serializers.CharField()
        runs = serializers.IntegerField()
        scenarios = serializers.IntegerField(help_text="scenarios with at least one run")
        repeats = serializers.IntegerField()
        missing_scenarios = serializers.ListField(child=serializers.CharField())

    @extend_schema_serializer(component_name="UploadCheckDeferred")
    class DeferredOutput(serializers.Serializer):
        id = serializers.IntegerField()
        status = serializers.CharField()
        url = serializers.CharField(help_text="the stored check to read until it is valid or invalid")

    @extend_schema(request={"multipart/form-data": InputSerializer},
                   responses={200: OutputSerializer, 202: DeferredOutput, 400: ErrorOutput, 401: ErrorOutput,
                              429: ErrorOutput})
    def post(self, request) -> Response:
        """Check a file of outputs as an upload would be checked, storing nothing and using no quota.

        The same file and fields as an upload. The answer says what the file holds (runs, scenarios,
        repeats, scenarios of the subset it lacks); a file with problems gets a 400 listing every one.
        A file larger than MAGEBENCH_UPLOAD_CHECK_ASYNC_BYTES is checked by a worker: the answer is a
        202 with the stored check's URL (also in Location), to read until it is ``valid`` or
        ``invalid``. Checks and uploads share one budget per user and per address (429 past it).
        A read-only token may ask: nothing of the submissions is written.
        """
        access = request_access(request)
        # Parsing a large archive costs the site time: only members of a team (either token scope) may ask.
        if not access.team_ids:
            raise exceptions.NotAuthenticated("checking a file needs a team's token or a logged-in member")
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if upload_check_is_deferred(data["file"].size):
            stored = upload_check_create(team=_checking_team(access, data["team"]), env=data["env"],
                                         flow=data["flow"], subset=data["subset"], suite=data["suite"],
                                         data=upload_read(data["file"]), created_by=request.user.pk)
            url = reverse("api-upload-check-detail", args=[stored.id])
            return Response({"id": stored.id, "status": stored.status, "url": url},
                            status=status.HTTP_202_ACCEPTED, headers={"Location": url})
        check = upload_check(env=data["env"], flow=data["flow"], subset=data["subset"], suite=data["suite"],
                             data=upload_read(data["file"]))
        return Response(self.OutputSerializer({"valid": True, "suite": check.suite, "runs": check.runs,
                                               "scenarios": check.scenarios, "repeats": check.repeats,
                                               "missing_scenarios": check.missing_scenarios}).data)


def _checking_team(access: Access, requested: str) -> Team:
    """The team that may read a stored check: the one named among the caller's, or their only one."""
    teams = Team.objects.filter(id__in=access.team_ids)
    if requested:
        team = teams.filter(slug=requested).first() or teams.filter(name=requested).first()
        if team is None:
            raise exceptions.PermissionDenied(f"you are not a member of team {requested!r}")
        return team
    if len(access.team_ids) > 1:
        raise SubmissionError("you belong to several teams: name one in 'team'")
    return teams.get()


@extend_schema_serializer(component_name="StoredUploadCheck")
class UploadCheckStoredOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=UploadFileCheck.Status.choices)
    valid = serializers.BooleanField()
    env = serializers.CharField()
    flow = serializers.CharField()
    subset = serializers.CharField()
    suite = serializers.CharField()
    file_bytes = serializers.IntegerField()
    problems = serializers.ListField(child=serializers.CharField(), help_text="every problem found (invalid)")
    result = UploadCheckApi.OutputSerializer(allow_null=True, help_text="what a valid file holds")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class UploadCheckDetailApi(APIView):
    @extend_schema(responses={200: UploadCheckStoredOutput, 404: ErrorOutput})
    def get(self, request, check_id: int) -> Response:
        """A check of a large file, made by a worker.

        ``pending`` while a worker reads the file, then ``valid`` with what the file holds, or
        ``invalid`` with every problem. Only the team it was made for sees it (either token scope).
        """
        check = upload_check_visible(request_access(request).team_ids, check_id)
        if check is None:
            raise exceptions.NotFound("no such upload check")
        shown = upload_check_shown(check)
        if shown["result"] is not None:
            shown["result"] = {"valid": True, **shown["result"]}
        return Response(UploadCheckStoredOutput(shown).data)
