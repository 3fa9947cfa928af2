"""REST API for test calls of an endpoint: start one (202), then read it until it is finished.

The call itself is a worker's (an environment must be reset to build the request, and the model
may take seconds to answer), so the POST only records and queues it.
"""
from __future__ import annotations

from typing import Any, cast

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.selectors import request_access
from evaluators.base import SUBSETS, environment_slugs
from submissions.apis import ErrorOutput, NamedChoiceField, _validated
from submissions.endpoint_checks import endpoint_check_create
from submissions.forms import flow_choices
from submissions.models import EndpointCheck
from submissions.selectors import endpoint_check_shown, endpoint_check_visible
from submissions.services import SubmissionError


class CheckErrorOutput(serializers.Serializer):
    kind = serializers.CharField(help_text="the failure's class, as attempts record it (endpoint_unreachable, "
                                           "auth_error, invalid_request, …)")
    status = serializers.IntegerField(allow_null=True, help_text="the endpoint's HTTP status, if it answered")
    message = serializers.CharField()


class CheckResultOutput(serializers.Serializer):
    """What the one request brought back; empty while the check waits or runs."""

    ok = serializers.BooleanField(help_text="the reply parsed into at least one valid action")
    scenario = serializers.CharField(required=False,
                                     help_text="the board's first scenario, whose first request was sent")
    reachable = serializers.BooleanField(allow_null=True,
                                         help_text="the endpoint answered over HTTP, if only to refuse")
    model = serializers.CharField(allow_null=True, required=False, help_text="the model id the request named")
    listed_models = serializers.ListField(child=serializers.CharField(), allow_null=True, required=False,
                                         help_text="the endpoint's /models list, when no model id was given")
    answer_model = serializers.CharField(allow_null=True, required=False, help_text="the answer's own model field")
    latency_seconds = serializers.FloatField(allow_null=True, required=False)
    prompt_tokens = serializers.IntegerField(allow_null=True, required=False)
    completion_tokens = serializers.IntegerField(allow_null=True, required=False)
    reply = serializers.CharField(allow_null=True, required=False,
                                  help_text="the reply's text, its first 4,000 characters")
    reply_truncated = serializers.BooleanField(required=False)
    finish_reason = serializers.CharField(allow_null=True, required=False)
    refusal = serializers.CharField(allow_null=True, required=False)
    actions = serializers.ListField(child=serializers.CharField(), required=False,
                                    help_text="what the environment's parser read in the reply")
    parse_error = serializers.CharField(allow_null=True, required=False)
    error = CheckErrorOutput(allow_null=True, required=False, help_text="why no reply came back")
    fix = serializers.CharField(allow_null=True, required=False,
                                help_text="the request setting that makes the provider accept a parameter it refused, "
                                          "e.g. token_limit_parameter=max_completion_tokens")


@extend_schema_serializer(component_name="EndpointCheck")
class EndpointCheckOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=EndpointCheck.Status.choices)
    env = serializers.CharField()
    flow = serializers.CharField()
    subset = serializers.CharField()
    suite = serializers.CharField()
    endpoint_url = serializers.CharField()
    endpoint_model = serializers.CharField(allow_blank=True)
    settings = serializers.DictField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    result = CheckResultOutput(allow_null=True)


class EndpointCheckCreateApi(APIView):
    @extend_schema_serializer(component_name="EndpointCheckRequest")
    class InputSerializer(serializers.Serializer):
        team = serializers.CharField(max_length=120, required=False, default="",
                                     help_text="slug or name of one of your teams (a token's own team by default)")
        endpoint_url = serializers.CharField(max_length=500)
        endpoint_model = serializers.CharField(
            max_length=200, required=False, default="", allow_blank=True,
            help_text="blank: the first model the endpoint lists at /models, as the official client does")
        api_key = serializers.CharField(required=False, default="", write_only=True, trim_whitespace=True)
        env = NamedChoiceField(choices=())
        flow = NamedChoiceField(choices=())
        subset = NamedChoiceField(choices=SUBSETS, required=False, default="mini")
        suite = serializers.SlugField(required=False, default=None, allow_null=True)
        settings = serializers.DictField(required=False, default=dict)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            cast(serializers.ChoiceField, self.fields["env"]).choices = environment_slugs()
            cast(serializers.ChoiceField, self.fields["flow"]).choices = flow_choices()

    @extend_schema_serializer(component_name="EndpointCheckQueued")
    class QueuedOutput(serializers.Serializer):
        id = serializers.IntegerField()
        status = serializers.CharField()

    @extend_schema(request=InputSerializer, responses={202: QueuedOutput, 400: ErrorOutput, 401: ErrorOutput,
                                                        403: ErrorOutput, 429: ErrorOutput})
    def post(self, request) -> Response:
        """Test an endpoint with one real request before queueing a submission.

        A worker sends the first request the board's first attempt would send (its prompts, its
        image, the request settings given) and records the answer: whether the endpoint was
        reached, the model id, latency, tokens, the reply, and the actions the environment's parser
        read in it, or the failure's kind and message (with the request setting that fixes a
        refused parameter). The URL and ``settings`` are checked as a submission's are. Answers 202
        with the check's id: read ``GET /api/v1/endpoint-checks/{id}/`` until it is ``finished``.
        Needs a read-write token; a team runs one check at a time, and a limited number per hour
        (429). Uses no submission quota. The API key is used for this request only, then erased.
        """
        data, team = _validated(self.InputSerializer, request)
        try:
            check = endpoint_check_create(
                team=team, env=data["env"], flow=data["flow"], subset=data["subset"], suite=data["suite"],
                endpoint_url=data["endpoint_url"], endpoint_model=data["endpoint_model"], api_key=data["api_key"],
                settings=data["settings"], created_by=request.user.pk)
        except SubmissionError:
            raise
        except (TypeError, ValueError) as exc:
            raise SubmissionError(str(exc)) from None
        return Response({"id": check.id, "status": check.status}, status=status.HTTP_202_ACCEPTED)


class EndpointCheckDetailApi(APIView):
    @extend_schema(responses={200: EndpointCheckOutput, 404: ErrorOutput})
    def get(self, request, check_id: int) -> Response:
        """A test call of an endpoint: ``queued``, ``running``, or ``finished`` with its result.

        Only the team that made it sees it (either token scope, or a member's session).
        """
        check = endpoint_check_visible(request_access(request).team_ids, check_id)
        if check is None:
            raise exceptions.NotFound("no such endpoint check")
        return Response(EndpointCheckOutput(endpoint_check_shown(check)).data)
