"""The one check of an endpoint URL, and the client that calls it, from the site's settings.

Every way a URL comes in (the submit page, the API, the command-line client through the API,
the operators' commands) reaches :func:`endpoint_url_validate` through the submission service;
the workers get their client from :func:`endpoint_client`, which checks the addresses again
each time it connects.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from evaluators.endpoints.address import AddressPolicy, check_url
from evaluators.endpoints.client import ChatClient, Pacer, normalise_endpoint_url
from evaluators.endpoints.credentials import url_credentials
from submissions.crypto import decrypt_secret
from submissions.models import Submission

#: How long a submission waits for the endpoint's name to resolve before leaving the check to the
#: worker: a slow resolver must not hold the page.
SUBMISSION_RESOLVE_SECONDS = 2.0


def endpoint_policy(*, trusted: bool = False) -> AddressPolicy:
    """The address policy of the settings; ``trusted`` (an operator vouched) also allows private ones."""
    try:
        return AddressPolicy.parse(allow_private=trusted or settings.MAGEBENCH_ENDPOINT_ALLOW_PRIVATE,
                                   allowed=settings.MAGEBENCH_ENDPOINT_ALLOWED_NETWORKS)
    except ValueError as exc:
        raise ImproperlyConfigured(f"MAGEBENCH_ENDPOINT_ALLOWED_NETWORKS: {exc}") from None


@checks.register(checks.Tags.security)
def endpoint_settings_check(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``manage.py check`` (and every server start) names a malformed allow-list before a submission does."""
    try:
        endpoint_policy()
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), id="submissions.E001")]
    return []


def endpoint_url_validate(url: str, *, trusted: bool = False) -> str:
    """The chat-completions URL for ``url``, or ValueError with a message for the submitter."""
    normalised = normalise_endpoint_url(url)
    found = url_credentials(normalised)
    if found:
        raise ValueError(
            f"the endpoint URL carries credentials ({', '.join(found)}); remove them and put the key in the "
            "API key field (api_key in the API, --api-key-env on the command line): it is stored encrypted and "
            "sent only in the Authorization header, while the URL is shown with the submission")
    check_url(normalised, endpoint_policy(trusted=trusted), resolve_timeout=SUBMISSION_RESOLVE_SECONDS)
    return normalised


def endpoint_client(submission: Submission, *, pacer: Pacer | None = None) -> ChatClient:
    """The client a worker calls ``submission``'s endpoint with; ``pacer`` shares the endpoint's
    Retry-After with the other attempts on it."""
    return chat_client(submission.endpoint_url, submission.endpoint_model,
                       decrypt_secret(submission.api_key_encrypted), trusted=submission.endpoint_trusted, pacer=pacer)


def chat_client(url: str, model: str, api_key: str, *, trusted: bool = False,
                max_retries: int | None = None, pacer: Pacer | None = None) -> ChatClient:
    """A client of a team's endpoint with the site's timeout, retries, address policy and limits;
    ``max_retries`` overrides the site's retries (a test call makes its one request alone)."""
    return ChatClient(
        url, model, api_key,
        timeout=settings.MAGEBENCH_ENDPOINT_TIMEOUT,
        max_retries=settings.MAGEBENCH_ENDPOINT_MAX_RETRIES if max_retries is None else max_retries,
        backoff=settings.MAGEBENCH_ENDPOINT_BACKOFF,
        policy=endpoint_policy(trusted=trusted),
        max_response_bytes=settings.MAGEBENCH_ENDPOINT_MAX_RESPONSE_BYTES,
        max_retry_after=settings.MAGEBENCH_ENDPOINT_MAX_RETRY_AFTER,
        pacer=pacer,
    )
