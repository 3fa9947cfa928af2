"""A small OpenAI-compatible chat-completions client built on ``requests``.

It does four things the platform cannot get wrong: it tells infrastructure failures (raised as
:class:`InfraError`, never scored) from model answers (returned, however odd), it retries the
transient failures with capped exponential backoff, it never lets the API key out, and it cannot
be turned against the network it runs in. The last two are the work of its
:class:`~evaluators.endpoints.transport.Transport`; the messages it sends and the answers it
reads are in :mod:`evaluators.endpoints.messages`.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from evaluators.endpoints.address import AddressPolicy
from evaluators.endpoints.credentials import display_url
from evaluators.endpoints.errors import INVALID_RESPONSE, InfraError
from evaluators.endpoints.messages import Completion, Message, completion_from
from evaluators.endpoints.profile import OFFICIAL_PROFILE, RequestProfile
from evaluators.endpoints.transport import MAX_RESPONSE_BYTES, MAX_RETRY_AFTER, Transport
from evaluators.retry import Backoff, call_with_retries

logger = logging.getLogger(__name__)

CHAT_COMPLETIONS_PATH = "/chat/completions"
#: Without a policy the client calls private addresses too, as tools and tests against local servers
#: need; the platform always passes the policy of its settings.
LOCAL_POLICY = AddressPolicy(allow_private=True)


def normalise_endpoint_url(url: str) -> str:
    """Return the chat-completions URL for a base URL (``…/v1``) or the full URL.

    The base URL is used as the OpenAI client uses ``base_url``: ``/chat/completions`` is appended
    and nothing else is guessed (no ``/v1`` is added), since some gateways serve the API elsewhere.
    """
    if not isinstance(url, str) or not url.strip():
        raise ValueError("the endpoint URL is empty")
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError(
            f"the endpoint URL must start with http:// or https:// (got {display_url(url)!r})"
        )
    if not parts.hostname:
        raise ValueError(f"the endpoint URL has no host (got {display_url(url)!r})")
    path = parts.path.rstrip("/")
    if not path.endswith(CHAT_COMPLETIONS_PATH):
        path += CHAT_COMPLETIONS_PATH
    # The fragment is never sent to a server; the query is kept for gateways that need one.
    return urlunsplit((parts.scheme.lower(), parts.netloc, path, parts.query, ""))


def models_url(url: str) -> str:
    """The ``/models`` URL beside an endpoint's chat-completions URL."""
    chat = normalise_endpoint_url(url)
    parts = urlsplit(chat)
    base = parts.path[: -len(CHAT_COMPLETIONS_PATH)]
    return urlunsplit((parts.scheme, parts.netloc, base + "/models", parts.query, ""))


class Pacer(Protocol):
    """Shares an endpoint's "come back later" between every client calling it, in every process.

    ``wait`` is called before each request and returns once the endpoint may be asked again (the
    seconds it waited); ``hold`` passes on a wait the endpoint asked for (Retry-After)."""

    def wait(self) -> float: ...

    def hold(self, seconds: float) -> None: ...


class ChatClient:
    """Calls one model on one OpenAI-compatible endpoint.

    ``max_retries`` is the number of extra requests after the first one fails with a retryable
    kind (so at most ``1 + max_retries`` requests). ``timeout`` is one deadline for each request as
    a whole: resolving, connecting, sending, the headers and the body. ``policy`` says which
    addresses may be connected to (:data:`LOCAL_POLICY` when None); ``max_response_bytes`` caps
    a response body. A server's Retry-After is waited out here up to ``max_backoff`` seconds; a
    longer one, up to ``max_retry_after``, ends the call with the error carrying the wait, for the
    caller to come back then without holding anything meanwhile; a longer one still is refused as
    permanent. ``pacer`` shares those waits with the other clients of the endpoint. ``sleep`` and
    ``rng`` exist so the waits can be observed or removed; they default to real time and an
    unseeded generator.
    """

    def __init__(
        self,
        url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        policy: AddressPolicy | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        max_retry_after: float = MAX_RETRY_AFTER,
        pacer: Pacer | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if max_retries < 0:
            raise ValueError("max_retries cannot be negative")
        if backoff < 0 or max_backoff < 0:
            raise ValueError("backoff delays cannot be negative")
        if max_response_bytes <= 0:
            raise ValueError("max_response_bytes must be positive")
        self.url = normalise_endpoint_url(url)
        self.model = model
        self._listed: str | None = None
        #: What the endpoint listed at ``/models`` the last time it was asked; None until it is.
        self.listed_models: list[str] | None = None
        self._paced = 0.0
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        # An empty key means "no key", as in the OpenAI client.
        self._transport = Transport(
            api_key or None,
            timeout=float(timeout),
            policy=policy if policy is not None else LOCAL_POLICY,
            max_response_bytes=int(max_response_bytes),
            max_retry_after=float(max_retry_after),
        )
        self._pacer = pacer
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()
        # Jitter keeps many workers hitting one endpoint from retrying in lock-step.
        self._backoff = Backoff(first=self.backoff, cap=self.max_backoff, jitter=0.5)

    @property
    def timeout(self) -> float:
        return self._transport.timeout

    @property
    def policy(self) -> AddressPolicy:
        return self._transport.policy

    @property
    def max_response_bytes(self) -> int:
        return self._transport.max_response_bytes

    def __repr__(self) -> str:
        key = "set" if self._transport.has_key else "none"
        return f"ChatClient(url={display_url(self.url)!r}, model={self.model!r}, api_key={key})"

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- public calls -------------------------------------------------------------------------

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float,
        max_tokens: int,
        top_p: float | None = None,
        frequency_penalty: float | None = None,
        profile: RequestProfile = OFFICIAL_PROFILE,
    ) -> Completion:
        """Send one chat-completions request, retrying transient failures.

        ``top_p`` and ``frequency_penalty`` are left out of the request when None (the server's
        default then applies); ``profile`` says under which name the token limit goes, which
        sampling parameters are left out and what is merged into the body. Raises
        :class:`InfraError` (with ``attempts`` set) when no answer could be obtained.
        """
        if profile.extra_body.get("stream"):
            raise ValueError("streaming responses are not supported by this client")
        payload: dict[str, Any] = {
            "model": self.model or self.listed_model(),
            "messages": list(messages),
            **profile.body(temperature=temperature, max_tokens=max_tokens, top_p=top_p,
                           frequency_penalty=frequency_penalty),
        }
        body = json.dumps(payload).encode("utf-8")

        def attempt() -> Completion:
            started = time.monotonic()
            data = self._transport.request("POST", self.url, body)
            latency = time.monotonic() - started
            return completion_from(data, latency, self._transport.clean)

        began = time.monotonic()
        self._paced = 0.0
        completion, attempts = self._with_retries(attempt)
        # Failed requests and the waits around them: the platform's time, not the model's.
        platform = attempts > 1 or self._paced > 0
        waited = max(0.0, time.monotonic() - began - completion.latency) if platform else 0.0
        return dataclasses.replace(completion, attempts=attempts, waited=round(waited, 4))

    def listed_model(self) -> str:
        """The first model the endpoint lists at ``/models``: the model the official client calls when
        none is named. Asked once per client (the official client asks before every request)."""
        if self._listed is None:
            models = self.list_models()
            if not models:
                raise InfraError(INVALID_RESPONSE, "no model id was given and the endpoint lists no model at /models")
            self._listed = models[0]
        return self._listed

    def list_models(self) -> list[str]:
        """The model ids the endpoint lists at ``/models`` (a cheap reachability check)."""
        url = models_url(self.url)

        def attempt() -> list[str]:
            data = self._transport.request("GET", url, None)
            entries = data.get("data") if isinstance(data, dict) else None
            if not isinstance(entries, list):
                raise InfraError(INVALID_RESPONSE, "the /models answer has no 'data' list")
            return [str(e["id"]) for e in entries if isinstance(e, dict) and "id" in e]

        models, _ = self._with_retries(attempt)
        self.listed_models = models
        return models

    # -- retries ------------------------------------------------------------------------------

    def _with_retries(self, attempt: Callable[[], Any]) -> tuple[Any, int]:
        """``attempt()`` under the client's retry policy, and how many requests it took."""
        total = 1 + self.max_retries
        made = 0

        def counted() -> Any:
            nonlocal made
            if self._pacer is not None:
                # Another client of this endpoint may have been told to come back later.
                self._paced += self._pacer.wait()
            made += 1
            try:
                return attempt()
            except InfraError as error:
                error.attempts = made
                raise

        def retrying(error: Exception, failures: int, delay: float) -> None:
            if self._pacer is not None and isinstance(error, InfraError) and error.retry_after:
                self._pacer.hold(error.retry_after)
            logger.warning(
                "chat endpoint %s failed on attempt %d/%d (%s); retrying in %.2fs",
                display_url(self.url),
                failures,
                total,
                error,
                delay,
            )

        try:
            result = call_with_retries(
                counted,
                retry_if=self._retry_here,
                backoff=self._backoff,
                max_tries=total,
                wait_for=self._server_wait,
                on_retry=retrying,
                sleep=self._sleep,
                rng=self._rng,
            )
        except InfraError as error:
            logger.warning("chat endpoint %s failed after %d attempt(s): %s", display_url(self.url), made, error)
            raise
        return result, made

    def _retry_here(self, error: Exception) -> bool:
        """Whether to ask again from this call: a transient failure whose wait, if the server named
        one, is short enough to spend holding the caller."""
        if not isinstance(error, InfraError) or not error.retryable:
            return False
        return error.retry_after is None or error.retry_after <= self.max_backoff

    def _server_wait(self, error: Exception, failures: int) -> float | None:
        if isinstance(error, InfraError) and error.retry_after is not None:
            # The server said when; asking sooner gets another refusal, and counts against the team.
            return max(error.retry_after, 0.0)
        return None

