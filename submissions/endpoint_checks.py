"""A worker makes an endpoint check's one request and records what came back.

The request is the first one the board's first attempt sends (``evaluators.first_request`` runs the
attempt's own flow and stops after the first answer), through a client with the platform's address
policy. Whatever happens, the check ends finished with its result and without its API key.
"""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

from django.utils import timezone

from catalogue.prompt_sets import prompt_sets_for_run
from evaluators.endpoints.credentials import key_struck
from evaluators.endpoints.errors import INVALID_RESPONSE, InfraError
from evaluators.first_request import first_request
from evaluators.runner import EnvironmentFailure
from evaluators.settings import EvaluationSettings
from submissions.crypto import decrypt_secret
from submissions.endpoints import chat_client
from submissions.engine import scenario_spec
from submissions.models import EndpointCheck

logger = logging.getLogger(__name__)

#: The reply's characters kept in the result: enough to read what the model did, not a page of it.
REPLY_CHARS = 4000
#: Model ids of the endpoint's /models list kept in the result.
LISTED_MODELS = 20
REDACTED = "[redacted]"


def endpoint_check_run(*, check_id: int) -> None:
    """Make the check's request, once: a check another worker has taken, or that is done, is left alone."""
    claimed = EndpointCheck.objects.filter(id=check_id, status=EndpointCheck.Status.QUEUED).update(
        status=EndpointCheck.Status.RUNNING, started_at=timezone.now())
    if not claimed:
        return
    check = EndpointCheck.objects.select_related("scenario").get(id=check_id)
    try:
        result = _result_of(check)
    except Exception:  # noqa: BLE001 - the platform's own failure: recorded, never left running
        logger.exception("endpoint check %s failed inside the platform", check_id)
        result = {"ok": False, "reachable": None,
                  "error": {"kind": "platform_error", "status": None,
                            "message": "the platform failed to make the test call; try again later"}}
    # The key was needed for this one request only.
    EndpointCheck.objects.filter(id=check_id).update(status=EndpointCheck.Status.FINISHED, result=result,
                                                     finished_at=timezone.now(), api_key_encrypted="")


def _result_of(check: EndpointCheck) -> dict[str, Any]:
    result: dict[str, Any] = {"ok": False, "scenario": check.scenario.key, "reachable": None,
                              "model": check.endpoint_model or None, "listed_models": None, "answer_model": None,
                              "latency_seconds": None, "prompt_tokens": None, "completion_tokens": None,
                              "reply": None, "reply_truncated": False, "finish_reason": None, "refusal": None,
                              "actions": [], "parse_error": None, "error": None, "fix": None}
    try:
        api_key = decrypt_secret(check.api_key_encrypted)
    except ValueError as exc:
        result["error"] = {"kind": "configuration_error", "status": None, "message": str(exc)}
        return result
    settings = EvaluationSettings.from_mapping(check.settings, check.environment_id, check.flow,
                                               subset=check.subset, platform=True)
    # One request: a check reports the first failure as it is, rather than waiting out retries.
    client = chat_client(check.endpoint_url, check.endpoint_model, api_key, max_retries=0)
    try:
        with client, tempfile.TemporaryDirectory(prefix="endpoint-check-") as folder:
            if not check.endpoint_model:
                # Asked once here to show the list; the request then names the first id, as an attempt's does.
                listed = client.list_models()
                result["reachable"] = True
                result["listed_models"] = listed[:LISTED_MODELS]
                if not listed:
                    raise InfraError(INVALID_RESPONSE,
                                     "no model id was given and the endpoint lists no model at /models")
                client.model = listed[0]
                result["model"] = listed[0]
            answer = first_request(
                scenario=scenario_spec(check.scenario), flow=check.flow, settings=settings, model=client,
                out_dir=Path(folder) / "trajectory",
                prompts=prompt_sets_for_run(check.environment_id, check.suite, check.flow, settings.prompt_version))
    except InfraError as exc:
        # An HTTP status means the endpoint answered, if only to refuse.
        result["reachable"] = bool(result["reachable"] or exc.status is not None)
        result["error"] = {"kind": exc.kind, "status": exc.status, "message": _hidden(exc.message, api_key)}
        result["fix"] = exc.fix or None
        return result
    except EnvironmentFailure as exc:
        result["error"] = {"kind": exc.kind, "status": None, "message": _hidden(exc.message, api_key)}
        return result
    completion, parsed = answer.completion, answer.parsed
    reply = _hidden(completion.text or "", api_key)
    result.update(
        ok=parsed.ok, reachable=True, answer_model=completion.model, latency_seconds=round(completion.latency, 3),
        prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens,
        reply=reply[:REPLY_CHARS], reply_truncated=len(reply) > REPLY_CHARS, finish_reason=completion.finish_reason,
        refusal=_hidden(completion.refusal, api_key) if completion.refusal else None,
        actions=[str(action) for action in parsed.actions], parse_error=parsed.error)
    return result


def _hidden(text: str, api_key: str) -> str:
    """``text`` without the key, whole or in the pieces and masked quotes providers echo of it: an
    endpoint may echo what it was sent, and the result is kept after the key is dropped."""
    return key_struck(text, api_key, REDACTED)
