"""A team's test call of an endpoint: the request checks, records and queues it; a worker makes its
one request and records what came back.

A check is no submission (no attempts, no place on a board, limits of its own): it shares only the
checks of what it would run (``services.endpoint_run_checked``), so that it is refused with the same
messages. The worker's request is the first one the board's first attempt sends (``evaluators.first_request`` runs the
attempt's own flow and stops after the first answer), through a client with the platform's address
policy. Whatever happens, the check ends finished with its result and without its API key.
"""
from __future__ import annotations

import logging
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from celery import current_app
from django.conf import settings as django_settings
from django.db import transaction
from django.utils import timezone

from accounts.models import Team
from catalogue.prompt_sets import prompt_sets_for_run
from evaluators.endpoints.credentials import key_struck
from evaluators.endpoints.errors import INVALID_RESPONSE, InfraError
from evaluators.first_request import first_request
from evaluators.runner import EnvironmentFailure
from evaluators.settings import EvaluationSettings
from submissions.crypto import decrypt_secret, encrypt_secret
from submissions.endpoints import chat_client
from submissions.engine import scenario_spec
from submissions.models import EndpointCheck
from submissions.selectors import endpoint_checks_active, endpoint_checks_in_window, queue_for
from submissions.services import SubmissionError, endpoint_run_checked

logger = logging.getLogger(__name__)

#: The task that makes a check's one request (``submissions.tasks``), sent by name like the others.
RUN_ENDPOINT_CHECK_TASK = "submissions.run_endpoint_check"
#: The reply's characters kept in the result: enough to read what the model did, not a page of it.
REPLY_CHARS = 4000
#: Model ids of the endpoint's /models list kept in the result.
LISTED_MODELS = 20
REDACTED = "[redacted]"


class EndpointCheckLimited(SubmissionError):
    """The team has a check running, or has used its checks for now; the message says which."""


def endpoint_check_create(*, team: Team, env: str, flow: str, endpoint_url: str, endpoint_model: str = "",
                          api_key: str = "", settings: Mapping[str, Any] | None = None, subset: str = "mini",
                          suite: str | None = None, created_by: int | None = None) -> EndpointCheck:
    """Record a test call of an endpoint and queue it on its environment's workers.

    The URL, the board and the settings are checked exactly as ``services.submission_create_endpoint``
    checks them (same messages), and the settings frozen the same way, so the request the worker
    sends is the first one the board's first attempt would send. A team makes one check at a time
    and at most MAGEBENCH_ENDPOINT_CHECKS_PER_WINDOW per window. A refusal writes nothing.
    """
    url, environment, suite, scenarios, frozen = endpoint_run_checked(
        env=env, flow=flow, subset=subset, suite=suite, endpoint_url=endpoint_url, settings=settings)
    with transaction.atomic():
        # The team's row is locked for the count and the write: two requests at once cannot both
        # take the last check of the window, nor both start while none is running.
        Team.objects.select_for_update().filter(id=team.id).first()
        _endpoint_check_limits(team)
        check = EndpointCheck.objects.create(
            team=team, created_by_id=created_by, environment=environment, flow=flow, subset=subset, suite=suite,
            scenario=scenarios[0], settings=frozen.to_dict(), endpoint_url=url, endpoint_model=endpoint_model,
            api_key_encrypted=encrypt_secret(api_key))
        check_id = check.id
        transaction.on_commit(lambda: endpoint_check_enqueue(check_id=check_id, env=env))
    return check


def _endpoint_check_limits(team: Team) -> None:
    now = timezone.now()
    if endpoint_checks_active(team.id, now):
        raise EndpointCheckLimited("a test call of this team is still running; wait for its result")
    used, frees_at = endpoint_checks_in_window(team.id, now)
    allowed = django_settings.MAGEBENCH_ENDPOINT_CHECKS_PER_WINDOW
    if used >= allowed:
        minutes = django_settings.MAGEBENCH_ENDPOINT_CHECK_WINDOW_SECONDS / 60
        wait = max(1, round((frees_at - now).total_seconds())) if frees_at else 0
        raise EndpointCheckLimited(f"test calls: {used} of {allowed} per {minutes:g} min used; "
                                   f"the next one is possible in {wait} s")


def endpoint_check_enqueue(*, check_id: int, env: str) -> None:
    """Send the check to its environment's queue, whose workers can reset that environment. A broker
    that cannot be reached ends the check at once, saying so, rather than leaving it waiting."""
    from kombu.exceptions import KombuError
    from kombu.exceptions import OperationalError as BrokerError

    try:
        current_app.signature(RUN_ENDPOINT_CHECK_TASK).apply_async((check_id,), queue=queue_for(env))
    except (BrokerError, KombuError, OSError) as exc:
        logger.warning("could not queue endpoint check %s: %s", check_id, exc)
        EndpointCheck.objects.filter(id=check_id, status=EndpointCheck.Status.QUEUED).update(
            status=EndpointCheck.Status.FINISHED, finished_at=timezone.now(), api_key_encrypted="",
            result={"ok": False, "reachable": None, "error": {
                "kind": "platform_error", "status": None,
                "message": "the platform could not queue the test call; try again in a minute"}})


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
