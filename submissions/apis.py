"""REST API for submissions, attempts and trajectories.

Reads of public submissions need no credentials. A private submission is visible to its team (a
logged-in member, or the team's token of either scope); writes need a member's session or the
team's read-write token. A submission the caller may not see is a 404, as if it did not exist.
Uploads and checks of files are ``submissions.upload_apis``; test calls of an endpoint
``submissions.check_apis``.
"""
from __future__ import annotations

from typing import Any, cast

from django.db.models import Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from accounts.models import Team
from accounts.selectors import (
    Access,
    can_manage_submission,
    can_publish_submission,
    can_view_submission,
    request_access,
)
from config.snapshot import one_moment
from evaluators.base import SUBSETS, environment_slugs
from evaluators.endpoints.credentials import display_url, scrub_secrets
from evaluators.trajectory import REPLAY_PAGE, document_page
from submissions.effort import submission_reply_counts
from submissions.endpoint_checks import EndpointCheckLimited
from submissions.endpoint_privacy import can_see_endpoint, endpoint_marks, for_viewer, struck
from submissions.forms import flow_choices
from submissions.models import Attempt, ModelEntry, Submission
from submissions.paging import OFFSET_MAX, PAGE_HEADERS, PageQuery, checked_query, paged
from submissions.progress_selectors import (
    QueueItem,
    queue_item,
    queue_seen_by,
    submission_attempt_count,
    submission_progress,
)
from submissions.quotas import QuotaStatus, quota_status
from submissions.selectors import attempt_artifact, attempt_trajectory, visible_entries
from submissions.services import (
    QuotaExceeded,
    SubmissionError,
    model_entry_upsert,
    model_spec_from,
    submission_cancel,
    submission_create_endpoint,
    submission_publish,
    submission_rerun,
    submission_resume,
)
from submissions.upload_services import UploadRejected
from submissions.user_quota import user_quota_status


class ErrorOutput(serializers.Serializer):
    message = serializers.CharField()
    extra = serializers.DictField()


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Every API error is {"message": ..., "extra": {...}}; submitter mistakes are 400s, quotas 429s."""
    if isinstance(exc, UploadRejected):
        return Response({"message": "the upload was refused; nothing was stored", "extra": {"problems": exc.problems}},
                        status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, QuotaExceeded | EndpointCheckLimited):
        return Response({"message": str(exc), "extra": {}}, status=status.HTTP_429_TOO_MANY_REQUESTS)
    if isinstance(exc, SubmissionError):
        return Response({"message": str(exc), "extra": {}}, status=status.HTTP_400_BAD_REQUEST)
    response = drf_exception_handler(exc, context)
    if response is not None:
        detail = response.data
        message = detail.get("detail", "invalid request") if isinstance(detail, dict) else "invalid request"
        extra = {k: v for k, v in detail.items() if k != "detail"} if isinstance(detail, dict) else {"errors": detail}
        response.data = {"message": str(message), "extra": extra}
    return response


def viewable_submission(access: Access, submission_id: int) -> Submission:
    # One answer for "absent" and "private to another team", so a caller cannot probe for private ids.
    submission = Submission.objects.select_related("model", "team").filter(id=submission_id).first()
    if submission is None or not can_view_submission(access, submission):
        raise exceptions.NotFound("no such submission")
    return submission


def writing_team(access: Access, requested: str) -> Team:
    """The team a write acts for: the one named (slug or name) among the caller's, or their only one."""
    if not access.team_ids:
        raise exceptions.NotAuthenticated("submitting needs a team's read-write token or a logged-in member")
    if not access.can_write:
        raise exceptions.PermissionDenied("this token is read-only; create a read-write token to submit")
    teams = Team.objects.filter(id__in=access.team_ids)
    if requested:
        team = teams.filter(slug=requested).first() or teams.filter(name=requested).first()
        if team is None:
            raise exceptions.PermissionDenied(f"you cannot submit for team {requested!r}")
        return team
    if len(access.team_ids) > 1:
        raise SubmissionError("you belong to several teams: name one in 'team'")
    return teams.get()


class DisplayUrlField(serializers.CharField):
    """An endpoint URL as anyone may see it: without user info or secret-looking parameters, which
    URLs stored before they were refused may hold."""

    def to_representation(self, value: Any) -> str:
        return display_url(str(value)) if value else ""


class ScrubbedTextField(serializers.CharField):
    """Free text that may quote such a URL (an error message), with its secrets replaced."""

    def to_representation(self, value: Any) -> str:
        return scrub_secrets(str(value)) if value else ""


class AttemptOutput(serializers.ModelSerializer):
    """An attempt; for anyone outside its team, its error message has the endpoint struck out (the
    caller passes ``marks``, from ``endpoint_marks``, or [] for the team's own)."""

    scenario = serializers.CharField(source="scenario.key")
    error_message = ScrubbedTextField(read_only=True)

    def to_representation(self, instance: Attempt) -> dict[str, Any]:
        data = super().to_representation(instance)
        marks = self.context.get("marks")
        data["error_message"] = struck(data["error_message"],
                                       endpoint_marks(instance.submission) if marks is None else marks)
        return data

    class Meta:
        model = Attempt
        fields = ["id", "scenario", "repeat", "status", "score", "outcome", "steps", "model_calls", "invalid_action",
                  "repeating_action", "parse_errors", "error_kind", "error_message", "tries", "prompt_tokens",
                  "completion_tokens", "started_at", "heartbeat_at", "finished_at", "duration_seconds"]


class ProgressOutput(serializers.Serializer):
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    scored = serializers.IntegerField()
    running = serializers.IntegerField()
    retrying = serializers.IntegerField()
    pending = serializers.IntegerField()
    infra_failed = serializers.IntegerField()
    cancelled = serializers.IntegerField()
    queue_position = serializers.IntegerField(allow_null=True)
    eta_seconds = serializers.FloatField(allow_null=True)
    eta_is_lower_bound = serializers.BooleanField()
    eta_basis = serializers.CharField(allow_blank=True, required=False)
    eta_missing = serializers.CharField(allow_blank=True, required=False,
                                        help_text="why an active submission has no estimate (eta_seconds null)")
    last_error = serializers.CharField(allow_blank=True)
    replies = serializers.IntegerField(help_text="model replies of the scored attempts")
    replies_cut = serializers.IntegerField(help_text="replies the endpoint stopped at the token limit "
                                                     "(finish_reason length)")
    refusals = serializers.IntegerField(help_text="replies the endpoint refused (a refusal, or content_filter)")
    platform_wait_seconds = serializers.FloatField(help_text="seconds lost to retried requests and rate-limit waits, "
                                                             "left out of the model's seconds")


def progress_data(submission: Submission) -> dict[str, Any]:
    p = submission_progress(submission)
    place = queue_item(submission) if submission.is_active else None
    return {"total": p.total, "done": p.done, "scored": p.scored, "running": p.running, "retrying": p.retrying,
            "pending": p.pending, "infra_failed": p.infra_failed, "cancelled": p.cancelled,
            "queue_position": place.position if place else None, "eta_seconds": place.eta_seconds if place else None,
            "eta_is_lower_bound": bool(place and place.eta_at_least), "eta_basis": place.eta_basis if place else "",
            "eta_missing": place.eta_missing if place else "", "last_error": place.last_error if place else "",
            **submission_reply_counts(submission)}


class SubmissionOutput(serializers.ModelSerializer):
    model = serializers.CharField(source="model.name")
    team = serializers.CharField(source="team.name")
    env = serializers.CharField(source="environment_id")
    settings = serializers.JSONField(source="shown_settings", read_only=True)
    endpoint_url = DisplayUrlField(read_only=True, allow_null=True,
                                   help_text="the team's endpoint: null for anyone outside the team")
    endpoint_model = serializers.CharField(read_only=True, allow_null=True,
                                           help_text="the model id asked for at the endpoint: null outside the team")

    class Meta:
        model = Submission
        fields = ["id", "model", "team", "env", "flow", "subset", "suite", "source", "settings", "endpoint_url",
                  "endpoint_model", "status", "status_reason", "is_baseline", "is_public", "verified", "hidden",
                  "hidden_reason", "rerun_of", "created_at", "started_at", "finished_at"]

    def to_representation(self, instance: Submission) -> dict[str, Any]:
        data = super().to_representation(instance)
        access = self.context.get("access")
        if access is None or not can_see_endpoint(access, instance):
            data["endpoint_url"] = data["endpoint_model"] = None
            # A failure reason and the latest error quote the endpoint's own words.
            marks = endpoint_marks(instance)
            data["status_reason"] = struck(data["status_reason"], marks)
            if isinstance(data.get("progress"), dict):
                data["progress"]["last_error"] = struck(data["progress"]["last_error"], marks)
        return data


class OptionalBooleanField(serializers.BooleanField):
    # A multipart body without the field means "not sent", as in JSON, not an unticked checkbox.
    default_empty_html = serializers.empty


class ModelMetadataInput(serializers.Serializer):
    """The team acting, and a model's optional metadata (its name is each caller's own field).

    Only the metadata fields sent change the model; one left out keeps its value, and an empty
    value (or null) sent clears it.
    """

    team = serializers.CharField(max_length=120, required=False, default="",
                                 help_text="slug or name of one of your teams (a token's own team by default)")
    organisation = serializers.CharField(max_length=120, required=False, allow_blank=True)
    parameter_count = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    open_weights = OptionalBooleanField(required=False)
    link = serializers.URLField(required=False, allow_blank=True)
    licence = serializers.CharField(max_length=80, required=False, allow_blank=True)
    price_input_per_mtok = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=1_000_000,
                                                  help_text="USD per million prompt tokens")
    price_output_per_mtok = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=1_000_000,
                                                   help_text="USD per million completion tokens")


class NamedChoiceField(serializers.ChoiceField):
    """A choice among names (an environment, a flow, a set) whose refusal lists the valid ones."""

    def to_internal_value(self, data: Any) -> Any:
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError:
            valid = ", ".join(str(choice) for choice in self.choices)
            raise serializers.ValidationError(f'"{data}" is not one of: {valid}', code="invalid_choice") from None


class ModelAndBoardInput(ModelMetadataInput):
    """What every submission names: the team, the model's metadata and the board."""

    model_name = serializers.CharField(max_length=120)
    env = NamedChoiceField(choices=())
    flow = NamedChoiceField(choices=())
    subset = NamedChoiceField(choices=SUBSETS)
    suite = serializers.SlugField(required=False, default=None, allow_null=True)
    public = serializers.BooleanField(required=False, default=False,
                                      help_text="show on the public boards now (else the team's owner publishes)")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Read when the serializer is made, not imported: the environments are the registry's.
        cast(serializers.ChoiceField, self.fields["env"]).choices = environment_slugs()
        cast(serializers.ChoiceField, self.fields["flow"]).choices = flow_choices()


class SubmissionListQuery(PageQuery):
    mine = serializers.BooleanField(required=False, default=False, help_text="only your teams' submissions")


def _validated(serializer_class: type[serializers.Serializer], request: Any) -> tuple[dict[str, Any], Team]:
    """The body, checked, and the team it acts for (the services enforce the team's quota)."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    data = dict(serializer.validated_data)
    return data, writing_team(request_access(request), data["team"])


class SubmissionListCreateApi(APIView):
    @extend_schema_serializer(component_name="EndpointSubmission")
    class InputSerializer(ModelAndBoardInput):
        endpoint_url = serializers.CharField(max_length=500)
        endpoint_model = serializers.CharField(
            max_length=200, required=False, default="", allow_blank=True,
            help_text="blank: the first model the endpoint lists at /models, as the official client does")
        api_key = serializers.CharField(required=False, default="", write_only=True, trim_whitespace=True)
        endpoint_concurrency = serializers.IntegerField(
            required=False, default=None, allow_null=True, min_value=1,
            help_text="at most this many attempts call the endpoint at once (default: the platform's limit)")
        settings = serializers.DictField(required=False, default=dict)

    @extend_schema_serializer(component_name="SubmissionCreated")
    class CreatedOutput(serializers.Serializer):
        id = serializers.IntegerField()
        status = serializers.CharField()
        attempts = serializers.IntegerField()

    @extend_schema(parameters=[SubmissionListQuery, *PAGE_HEADERS],
                   responses={200: SubmissionOutput(many=True), 400: ErrorOutput})
    def get(self, request) -> Response:
        """Submissions the caller may see, newest first.

        Public ones and the caller's teams' private ones; ``mine=1`` (or ``true``, ``yes``, ``on``) keeps
        only the latter. Paged by ``limit`` (1 to 200, 50 by default) and ``offset``; a value out of range
        is refused with a 400 naming it. The list's length is in X-Total-Count, its next and previous
        pages in Link.
        """
        query = checked_query(SubmissionListQuery, request)
        access = request_access(request)
        # Staff see everything, hidden and private submissions included.
        queryset = Submission.objects.all() if access.is_staff else Submission.objects.filter(
            visible_entries(access.team_ids))
        if query["mine"]:
            queryset = queryset.filter(team_id__in=access.team_ids)
        rows = queryset.select_related("model", "team").order_by("-created_at", "-id")
        return paged(request, rows, lambda page: SubmissionOutput(page, many=True, context={"access": access}).data)

    @extend_schema(request=InputSerializer, responses={201: CreatedOutput, 400: ErrorOutput, 401: ErrorOutput,
                                                        403: ErrorOutput, 429: ErrorOutput})
    def post(self, request) -> Response:
        """Evaluate an OpenAI-compatible endpoint on a board.

        The site calls the endpoint's chat-completions API for every attempt of the board's scenarios
        and scores each episode itself. ``settings`` overrides evaluation settings by name (e.g.
        ``{"repeats": 1}``); an unknown name is refused with the list of valid ones. Needs a read-write
        token; the team's quota applies (429 once reached). The API key is stored encrypted and never
        shown again.
        """
        data, team = _validated(self.InputSerializer, request)
        try:
            submission = submission_create_endpoint(
                model=model_spec_from(team=team, data=data), env=data["env"], flow=data["flow"],
                subset=data["subset"], suite=data["suite"],
                endpoint_url=data["endpoint_url"], endpoint_model=data["endpoint_model"], api_key=data["api_key"],
                endpoint_concurrency=data["endpoint_concurrency"],
                settings=data["settings"], is_public=data["public"], enforce_quota=True, created_by=request.user.pk,
                prepare_in_worker=True)
        except SubmissionError:
            raise  # already meant for the submitter, quota refusals (429) included
        except (TypeError, ValueError) as exc:
            raise SubmissionError(str(exc)) from None
        return Response({"id": submission.id, "status": submission.status,
                         "attempts": submission_attempt_count(submission)}, status=status.HTTP_201_CREATED)


class SubmissionDetailApi(APIView):
    @extend_schema_serializer(component_name="SubmissionDetail")
    class OutputSerializer(SubmissionOutput):
        progress = serializers.SerializerMethodField()
        attempts = serializers.SerializerMethodField()
        as_of = serializers.SerializerMethodField(
            help_text="when the database was read: the status, progress counts and attempts are all as of "
                      "this one moment, so the counts add up to the total and agree with the attempts")

        class Meta(SubmissionOutput.Meta):
            fields = SubmissionOutput.Meta.fields + ["progress", "attempts", "as_of"]

        @extend_schema_field(OpenApiTypes.DATETIME)
        def get_as_of(self, submission: Submission) -> str | None:
            moment = self.context.get("as_of")
            return moment.isoformat() if moment is not None else None

        @extend_schema_field(ProgressOutput)
        def get_progress(self, submission: Submission) -> dict[str, Any]:
            return progress_data(submission)

        @extend_schema_field(AttemptOutput(many=True))
        def get_attempts(self, submission: Submission) -> list[dict[str, Any]]:
            # many=True makes .data a list (ReturnList); the stubs type it as the single object's dict.
            access = self.context.get("access")
            marks = [] if access is not None and can_see_endpoint(access, submission) else endpoint_marks(submission)
            return AttemptOutput(submission.attempts.select_related("scenario"), many=True,  # type: ignore[return-value]
                                 context={"marks": marks}).data

    @extend_schema(responses={200: OutputSerializer, 404: ErrorOutput})
    def get(self, request, submission_id: int) -> Response:
        """A submission with its progress and every attempt.

        Progress counts the attempts by state and, while the submission waits or runs, gives its
        place in the queue and an estimate of the time left. A private submission of another team
        is a 404, as if it did not exist.
        """
        access = request_access(request)
        # One snapshot for every count: read one after another, they would each see a different moment.
        with one_moment() as moment:
            submission = viewable_submission(access, submission_id)
            data = self.OutputSerializer(submission, context={"access": access, "as_of": moment}).data
        return Response(data)


class SubmissionActionApi(APIView):
    ACTIONS = ("cancel", "resume", "rerun", "publish")

    @extend_schema(operation_id="submissions_action", request=None,
                   parameters=[OpenApiParameter("action", str, OpenApiParameter.PATH, enum=ACTIONS)],
                   responses={200: SubmissionOutput, 403: ErrorOutput, 404: ErrorOutput})
    def post(self, request, submission_id: int, action: str) -> Response:
        """Cancel, resume, re-run or publish a submission.

        ``cancel`` stops the attempts not yet run; ``resume`` queues again every attempt that did not
        produce a score; ``rerun`` creates a new submission with the same model, endpoint, board and
        settings (its id is in the answer); ``publish`` shows the submission on the public boards
        (the team's owner only). Needs the team's read-write token or a logged-in member.
        """
        if action not in self.ACTIONS:
            raise exceptions.NotFound(f"unknown action; choose one of {', '.join(self.ACTIONS)}")
        access = request_access(request)
        submission = viewable_submission(access, submission_id)
        if not (can_publish_submission if action == "publish" else can_manage_submission)(access, submission):
            raise exceptions.PermissionDenied("only the team's owner publishes" if action == "publish"
                                              else "only the submission's team, with write access, can do that")
        if action == "publish":
            submission = submission_publish(submission=submission)
        elif action == "cancel":
            submission = submission_cancel(submission=submission)
        elif action == "resume":
            submission = submission_resume(submission=submission, enforce_quota=True, actor_id=request.user.pk,
                                           prepare_in_worker=True)
        else:
            submission = submission_rerun(submission=submission, enforce_quota=True, created_by=request.user.pk,
                                          prepare_in_worker=True)
        submission.refresh_from_db()
        return Response(SubmissionOutput(submission, context={"access": access}).data)


#: The most steps (and calls) one page of a trajectory holds.
PAGE_MAX = 500


class TrajectoryQuery(serializers.Serializer):
    """What of an attempt's trajectory to return: all of it unless ``offset`` or ``limit`` is given."""

    offset = serializers.IntegerField(required=False, min_value=0, max_value=OFFSET_MAX,
                                      help_text="with limit: the first step (and model call) to return")
    limit = serializers.IntegerField(required=False, min_value=1, max_value=PAGE_MAX,
                                     help_text=f"with offset: how many steps and calls (at most {PAGE_MAX})")
    artifact = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False,
                                     help_text="a JSON document stored with the trajectory (one its artefact index "
                                               "names, e.g. an engine's log) instead of the trajectory; offset and "
                                               "limit page its steps")


class AttemptTrajectoryApi(APIView):
    @extend_schema(
        parameters=[TrajectoryQuery],
        responses={200: inline_serializer("AttemptTrajectory", {
            "attempt": AttemptOutput(),
            "trajectory": serializers.DictField(help_text="with offset and limit, its steps and calls cut to that "
                                                          "window, and page: the window and each list's length"),
            "artifact": serializers.DictField(required=False)}), 400: ErrorOutput, 404: ErrorOutput})
    def get(self, request, attempt_id: int) -> Response:
        """An attempt's trajectory, or one of its stored artifacts.

        The trajectory records every step of the episode: what the model was shown, its reply, the
        action read from it and the reward. A long one is read in pages with ``offset`` and
        ``limit``.
        """
        attempt = Attempt.objects.select_related("scenario", "submission").filter(id=attempt_id).first()
        access = request_access(request)
        if attempt is None or not can_view_submission(access, attempt.submission):
            raise exceptions.NotFound("no such attempt")
        marks = [] if can_see_endpoint(access, attempt.submission) else endpoint_marks(attempt.submission)
        shown = AttemptOutput(attempt, context={"marks": marks}).data
        query = checked_query(TrajectoryQuery, request)
        window = _window(query)
        name = query.get("artifact")
        if name is not None:
            document = attempt_artifact(attempt, name)
            if document is None:
                raise exceptions.NotFound("this attempt has no such artifact")
            if window is not None:
                document = document_page(document, ("steps",), offset=window[0], limit=window[1])
            return Response({"attempt": shown, "artifact": struck(document, marks)})
        trajectory = attempt_trajectory(attempt)
        if trajectory is None:
            return Response({"message": "this attempt has no stored trajectory", "extra": {}}, status=404)
        if window is not None:
            trajectory = document_page(trajectory, ("steps", "calls"), offset=window[0], limit=window[1])
        return Response({"attempt": shown, "trajectory": struck(trajectory, marks)})


def _window(query: dict[str, Any]) -> tuple[int, int] | None:
    """(offset, limit) when the caller pages a long trajectory; None for the whole of it."""
    if "offset" not in query and "limit" not in query:
        return None
    return query.get("offset", 0), query.get("limit", REPLAY_PAGE)


class ModelListCreateApi(APIView):
    """Registered models: those with a submission the caller may see, and the caller's teams' own."""

    @extend_schema_serializer(component_name="ModelEntry")
    class OutputSerializer(serializers.ModelSerializer):
        team = serializers.CharField(source="team.name")

        class Meta:
            model = ModelEntry
            fields = ["id", "name", "team", "organisation", "parameter_count", "open_weights", "link", "licence",
                      "price_input_per_mtok", "price_output_per_mtok", "is_baseline", "created_at"]

    @extend_schema_serializer(component_name="ModelRegistration")
    class InputSerializer(ModelMetadataInput):
        name = serializers.CharField(max_length=120)

    @extend_schema(parameters=[PageQuery, *PAGE_HEADERS], responses={200: OutputSerializer(many=True),
                                                                     400: ErrorOutput})
    def get(self, request) -> Response:
        """Registered models.

        Those with a submission the caller may see, and the caller's teams' own, by name. Paged as the
        submissions are.
        """
        access = request_access(request)
        visible = Submission.objects.filter(visible_entries(access.team_ids)).values("model_id")
        rows = (ModelEntry.objects.filter(Q(id__in=visible) | Q(team_id__in=access.team_ids))
                .select_related("team").order_by("name", "id"))
        return paged(request, rows, lambda page: self.OutputSerializer(page, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer, 400: ErrorOutput, 401: ErrorOutput,
                                                        403: ErrorOutput})
    def post(self, request) -> Response:
        """Register a model, or update its metadata.

        A team's model is known by its name: posting a name the team already has changes only the
        metadata fields sent.
        """
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        team = writing_team(request_access(request), data.pop("team"))
        entry = model_entry_upsert(team=team, **data)
        return Response(self.OutputSerializer(entry).data, status=status.HTTP_201_CREATED)


class MeApi(APIView):
    @extend_schema_serializer(component_name="MyTeam")
    class TeamOutput(serializers.Serializer):
        slug = serializers.CharField()
        name = serializers.CharField()
        role = serializers.CharField()
        quota = serializers.DictField()

    @extend_schema(responses={200: inline_serializer("Me", {
        "user": serializers.CharField(allow_null=True), "token_scope": serializers.CharField(allow_null=True),
        "teams": TeamOutput(many=True),
        "quota": serializers.DictField(allow_null=True, help_text=(
            "The user's own quota across all their teams; a team granted more lifts it for that team"))})})
    def get(self, request) -> Response:
        """Who the credentials belong to.

        The user, the token's scope (read or write), the user's own submission quota across all their
        teams, and each of the user's teams with its role and quota; anonymous callers get nulls and no
        teams. A submission must fit both the team's quota and the user's.
        """
        access = request_access(request)
        teams = []
        for team in Team.objects.filter(id__in=access.team_ids).order_by("name"):
            teams.append({"slug": team.slug, "name": team.name,
                          "role": "owner" if team.id in access.owner_team_ids else "member",
                          "quota": _quota_fields(quota_status(team))})
        user = request.user if request.user.is_authenticated else None
        return Response({"user": user.get_username() if user else None,
                         "token_scope": access.token.scope if access.token else None, "teams": teams,
                         "quota": _quota_fields(user_quota_status(user.pk)) if user else None})


def _quota_fields(q: QuotaStatus) -> dict[str, Any]:
    return {"per_day_left": q.per_day_left, "per_day_limit": q.per_day_limit,
            "per_day_resets_at": q.per_day_resets_at, "total_left": q.total_left, "total_limit": q.total_limit,
            "concurrent_left": q.concurrent_left, "concurrent_limit": q.concurrent_limit}


class QueueApi(APIView):
    """The queue page's table: waiting and running submissions in serving order, then the latest
    finished ones. A private submission the caller may not see is its place in the queue alone."""

    @extend_schema_serializer(component_name="QueueEntry")
    class ItemOutput(serializers.Serializer):
        position = serializers.IntegerField(allow_null=True, help_text="1 is served first; null once finished")
        private = serializers.BooleanField()
        id = serializers.IntegerField(required=False)
        model = serializers.CharField(required=False)
        team = serializers.CharField(required=False)
        board = serializers.DictField(child=serializers.CharField(), required=False)
        status = serializers.CharField(required=False)
        progress = ProgressOutput(required=False)

    @extend_schema(responses={200: inline_serializer("Queue", {"active": ItemOutput(many=True),
                                                               "recent": ItemOutput(many=True)})})
    def get(self, request) -> Response:
        """The evaluation queue.

        Waiting and running submissions in serving order, then the latest finished ones.
        """
        access = request_access(request)
        listed: dict[str, list[dict[str, Any]]] = {"active": [], "recent": []}
        for item, visible in queue_seen_by(lambda submission: can_view_submission(access, submission)):
            if visible:  # outside the team, the endpoint is struck out of its errors
                item.last_error = for_viewer(item.last_error, access, item.submission)
            entry = self._entry(item) if visible else {"position": item.position, "private": True}
            listed["active" if item.position is not None else "recent"].append(entry)
        return Response(listed)

    @staticmethod
    def _entry(item: QueueItem) -> dict[str, Any]:
        s, p = item.submission, item.progress
        return {"position": item.position, "private": not (s.is_public or s.is_baseline), "id": s.id,
                "model": s.model.name, "team": s.team.name, "status": s.status,
                "board": {"env": s.environment_id, "flow": s.flow, "subset": s.subset, "suite": s.suite},
                "progress": {"total": p.total, "done": p.done, "scored": p.scored, "running": p.running,
                             "retrying": p.retrying, "pending": p.pending, "infra_failed": p.infra_failed,
                             "cancelled": p.cancelled, "queue_position": item.position,
                             "eta_seconds": item.eta_seconds, "eta_is_lower_bound": item.eta_at_least,
                             "eta_basis": item.eta_basis, "eta_missing": item.eta_missing,
                             "last_error": item.last_error}}
