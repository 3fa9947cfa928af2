"""One HTTP request to a team's endpoint, and the names of the ways it can fail.

A request goes through :mod:`evaluators.endpoints.connections` (checked addresses, one deadline for
the whole request), never follows a redirect, reads at most a capped body, and turns every failure
into a classified :class:`InfraError`. The API key only travels in the ``Authorization`` header and
is scrubbed from every message built here, and what a failing endpoint answered is never quoted
beyond its HTTP status and a short, cleaned error message.
"""
from __future__ import annotations

import email.utils
import http
import http.client
import json
import re
import socket
import ssl
from datetime import UTC, datetime
from typing import Any

import requests
import urllib3.exceptions

from evaluators.endpoints.address import AddressPolicy, AddressRefused
from evaluators.endpoints.connections import Deadline, guarded_session
from evaluators.endpoints.credentials import display_url, key_struck, scrub_secrets
from evaluators.endpoints.errors import (
    AUTH_ERROR,
    ENDPOINT_UNREACHABLE,
    INVALID_REQUEST,
    INVALID_RESPONSE,
    NOT_CHAT_API,
    QUOTA_EXHAUSTED,
    RATE_LIMITED,
    REQUEST_TIMEOUT,
    SERVER_ERROR,
    InfraError,
)
from evaluators.endpoints.profile import fixing_setting
from evaluators.endpoints.providers import ProviderError, is_quota_exhausted, read_provider_error

#: A chat completion is a few kilobytes; anything this large is not one, and reading it all would
#: only let a broken endpoint exhaust the worker's memory.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: An endpoint's own error message is kept to this many characters: enough to say what went wrong,
#: too few to carry a page of someone else's data into the attempt's public record.
_REASON_CHARS = 120
#: The longest Retry-After the platform honours by default (seconds); MAGEBENCH_ENDPOINT_MAX_RETRY_AFTER.
MAX_RETRY_AFTER = 600.0
#: What replaces the API key, or any run of ``SHORTEST_KEY_PIECE`` characters of it, or a provider's
#: masked quote of it ("Incorrect API key provided: sk-abc123…"), in the endpoint's words.
_REDACTED = "[redacted]"
_TAG = re.compile(r"<[^>]{0,200}>")


class Transport:
    """Makes the HTTP requests of one client: one deadline of ``timeout`` seconds per request,
    connections only to addresses ``policy`` allows, bodies of at most ``max_response_bytes``."""

    def __init__(self, api_key: str | None, *, timeout: float, policy: AddressPolicy,
                 max_response_bytes: int, max_retry_after: float = MAX_RETRY_AFTER) -> None:
        # Kept private and out of any repr.
        self._api_key = api_key
        self.timeout = timeout
        self.max_retry_after = max_retry_after
        self.policy = policy
        self.max_response_bytes = max_response_bytes
        self._session = guarded_session()

    @property
    def has_key(self) -> bool:
        return bool(self._api_key)

    def close(self) -> None:
        self._session.close()

    def request(self, method: str, url: str, body: bytes | None) -> Any:
        """Make one HTTP request and return its decoded JSON, or raise a classified InfraError."""
        headers = {"Accept": "application/json", "Accept-Encoding": "identity"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        # Errors are raised outside the ``except`` blocks on purpose: a requests exception holds
        # the prepared request, Authorization header included, and must not ride along as the
        # InfraError's __context__ into tracebacks or error trackers.
        failure: InfraError | None = None
        with Deadline(self.timeout, self.policy) as deadline:
            try:
                response = self._session.request(
                    method,
                    url,
                    data=body,
                    headers=headers,
                    timeout=(self.timeout, self.timeout),
                    stream=True,
                    # A redirect could lead anywhere, past the address checks of the
                    # submission; requests would also turn a redirected POST into a GET.
                    allow_redirects=False,
                )
            except AddressRefused as exc:
                failure = InfraError(INVALID_REQUEST, self._redact(str(exc)))
            except requests.RequestException as exc:
                failure = self._transport_error(exc, deadline)
            if failure is not None:
                raise failure
            try:
                raw = self._read_body(response, deadline)
            finally:
                response.close()
        return self._decode(response, raw)

    def _read_body(self, response: requests.Response, deadline: Deadline) -> bytes:
        status = response.status_code
        announced = response.headers.get("Content-Length", "").strip()
        if announced.isdigit() and int(announced) > self.max_response_bytes:
            raise InfraError(INVALID_RESPONSE, f"the response announces {int(announced)} bytes, more than "
                                               f"the {self.max_response_bytes} bytes allowed", status)
        chunks: list[bytes] = []
        size = 0
        failure: InfraError | None = None
        try:
            for chunk in response.iter_content(chunk_size=64 * 1024):
                chunks.append(chunk)
                size += len(chunk)
                if size > self.max_response_bytes:
                    raise InfraError(INVALID_RESPONSE, f"the response is larger than the "
                                                       f"{self.max_response_bytes} bytes allowed", status)
        except requests.RequestException as exc:
            failure = self._transport_error(exc, deadline, status=status)
        if failure is not None:
            raise failure
        if deadline.expired:
            # The deadline hung up on a body without a length, which then just looks finished.
            raise self._timeout_error("cut off while the body was arriving", status)
        return b"".join(chunks)

    def _transport_error(
        self, exc: BaseException, deadline: Deadline, status: int | None = None
    ) -> InfraError:
        if deadline.expired:
            # Whatever broke was the deadline hanging up; the exception only shows its effect.
            return self._timeout_error("cut off at the deadline", status)
        detail = _describe(exc)
        if isinstance(exc, requests.Timeout):
            return self._timeout_error(detail, status)
        # Checked before urllib3's timeouts: urllib3 derives "connection refused" and DNS
        # failures (NewConnectionError) from its connect-timeout class for compatibility.
        if _has_cause(exc, (urllib3.exceptions.NewConnectionError,)):
            return InfraError(
                ENDPOINT_UNREACHABLE, f"could not connect to the endpoint ({detail})", status
            )
        if deadline.passed() or _has_cause(exc, (urllib3.exceptions.TimeoutError, TimeoutError)):
            return self._timeout_error(detail, status)
        if _has_cause(
            exc, (urllib3.exceptions.ProtocolError, ConnectionResetError, ConnectionAbortedError)
        ):
            # The server accepted the connection and then hung up: it is reachable but failed
            # while serving, which is what a 5xx says too.
            return InfraError(
                SERVER_ERROR,
                f"the endpoint closed the connection without answering ({detail})",
                status,
            )
        return InfraError(
            ENDPOINT_UNREACHABLE, f"could not connect to the endpoint ({detail})", status
        )

    def _timeout_error(self, detail: str, status: int | None) -> InfraError:
        return InfraError(REQUEST_TIMEOUT, f"no answer within {self.timeout:g}s ({detail})", status)

    def _decode(self, response: requests.Response, raw: bytes) -> Any:
        status = response.status_code
        retry_after = _parse_retry_after(response.headers.get("Retry-After"))
        if not 200 <= status < 300:
            raise self._refusal(response, raw, retry_after)
        try:
            # json.loads detects UTF-8/16/32 itself, which is all RFC 8259 allows.
            return json.loads(raw)
        except ValueError:
            pass
        # Raised out here: the decoding error keeps the whole body, which may echo the key.
        content_type = self.clean(response.headers.get("Content-Type", "none"), limit=40)
        media = content_type.split(";")[0].strip().lower()
        if media in ("text/html", "application/xhtml+xml", "text/event-stream"):
            # A page or a stream answering a JSON request will answer so every time: a sign-in
            # page, a dashboard, a server streaming by default. Asking again only costs the team.
            what = "an event stream (streaming was not asked for)" if media == "text/event-stream" else "an HTML page"
            raise InfraError(NOT_CHAT_API, f"the endpoint answered with {what}, not a chat completion "
                                           f"({len(raw)} bytes, content type {content_type}); check the URL "
                                           "points at an OpenAI-compatible API", status)
        raise InfraError(
            INVALID_RESPONSE,
            f"the response body is not JSON ({len(raw)} bytes, content type {content_type})",
            status,
        )

    def _refusal(self, response: requests.Response, raw: bytes, retry_after: float | None) -> InfraError:
        """The InfraError for a non-2xx answer: its kind, and the provider's words and code."""
        status = response.status_code
        # The reason phrase is the standard one: the server's own may say anything.
        phrase = _status_phrase(status)
        if 300 <= status < 400:
            location = self.clean(display_url(response.headers.get("Location", "?")))
            return InfraError(_kind_for_status(status), f"{phrase}: the endpoint redirects to {location}; redirects "
                                                        "are not followed, configure that URL instead", status)
        error = read_provider_error(raw, response.headers)
        kind = _kind_for_status(status)
        if is_quota_exhausted(status, error, retry_after, self.max_retry_after):
            kind = QUOTA_EXHAUSTED
        wait = error.retry_delay if retry_after is None else retry_after
        # A wait longer than the platform honours cannot be honoured without asking early.
        too_long = kind == RATE_LIMITED and wait is not None and wait > self.max_retry_after
        explanation = self._explain(error, status) or "the endpoint gave no error message"
        fix = self._fix(error, status)
        if fix:
            explanation += f" — set {fix} in the submission's request settings"
        if too_long:
            explanation += f" (it asks to wait {wait:.0f}s, longer than the {self.max_retry_after:.0f}s allowed)"
        return InfraError(kind, f"{phrase}: {explanation}", status, retry_after=wait, code=self.clean(error.code, 40),
                          permanent=True if too_long else None, fix=fix or "")

    @staticmethod
    def _fix(error: ProviderError, status: int) -> str | None:
        """The profile setting that fixes a refused parameter, when one would."""
        if 400 <= status < 500 and status not in (401, 403, 408, 429):
            return fixing_setting(error.param, error.message)
        return None

    def _explain(self, error: ProviderError, status: int) -> str:
        """``Provider: code — message``, cleaned."""
        message = self.clean(error.message)
        code = self.clean(error.code, limit=40)
        text = " — ".join(part for part in (code if code and code not in message else "", message) if part)
        if text and error.provider:
            text = f"{error.provider}: {text}"
        return text

    def clean(self, text: str, limit: int = _REASON_CHARS) -> str:
        """Foreign text made fit to store and show: one line, no markup, no secrets, short."""
        text = _TAG.sub(" ", text)
        text = "".join(c if c.isprintable() else " " for c in text)
        text = self._redact(" ".join(text.split()))
        return text if len(text) <= limit else text[:limit].rstrip() + "…"

    def _redact(self, text: str) -> str:
        # An error body or exception text may echo request headers back; the key must not follow,
        # nor the secrets of a URL stored before they were refused.
        if self._api_key:
            text = key_struck(text, self._api_key, _REDACTED)
        return scrub_secrets(text)


def _kind_for_status(status: int) -> str:
    if status in (401, 403):
        return AUTH_ERROR
    if status == 429:
        return RATE_LIMITED
    if status == 408:
        return REQUEST_TIMEOUT
    if status >= 500:
        return SERVER_ERROR
    return INVALID_REQUEST


def _parse_retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _has_cause(exc: BaseException, types: tuple[type[BaseException], ...]) -> bool:
    """Whether ``exc`` or anything it wraps (requests and urllib3 nest deeply) is one of ``types``."""
    seen: set[int] = set()
    stack: list[object] = [exc]
    while stack:
        item = stack.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, types):
            return True
        stack.extend(item.args)
        stack.extend([getattr(item, "reason", None), item.__cause__, item.__context__])
    return False


def _status_phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return f"HTTP {status}"


def _describe(exc: BaseException) -> str:
    """What went wrong on the wire, in the platform's words: exception texts quote URLs (with any
    secret they hold) and whatever bytes the endpoint sent instead of a status line."""
    if _has_cause(exc, (ssl.SSLCertVerificationError,)):
        return "the TLS certificate could not be verified"
    if _has_cause(exc, (ssl.SSLError, urllib3.exceptions.SSLError)):
        return "the TLS handshake failed"
    if _has_cause(exc, (urllib3.exceptions.NameResolutionError, socket.gaierror)):
        return "the host name could not be resolved"
    if _has_cause(exc, (ConnectionRefusedError,)):
        return "connection refused"
    if _has_cause(exc, (http.client.RemoteDisconnected,)):
        return "closed without an answer"
    if _has_cause(exc, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)):
        return "connection reset"
    if _has_cause(exc, (TimeoutError, urllib3.exceptions.TimeoutError, requests.Timeout)):
        return "timed out"
    if _has_cause(exc, (http.client.IncompleteRead, urllib3.exceptions.IncompleteRead)):
        return "the body ended early"
    if _has_cause(exc, (http.client.HTTPException, urllib3.exceptions.ProtocolError)):
        return "the answer is not valid HTTP"
    return type(exc).__name__

