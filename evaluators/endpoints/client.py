"""A small OpenAI-compatible chat-completions client built on ``requests``.

It does four things the platform cannot get wrong: it tells infrastructure failures (raised as
:class:`InfraError`, never scored) from model answers (returned, however odd), it retries the
transient failures with capped exponential backoff, it never lets the API key out (the key only
travels in the ``Authorization`` header and is scrubbed from every message we build), and it
cannot be turned against the network it runs in: every connection goes to an address it resolved
and checked against an :class:`AddressPolicy`, redirects are never followed, one deadline covers
the whole of a request, and what a failing endpoint answered is never quoted beyond its HTTP
status and a short, cleaned error message.
"""
from __future__ import annotations

import base64
import contextlib
import contextvars
import dataclasses
import email.utils
import http
import http.client
import json
import logging
import random
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests
import requests.adapters
import urllib3.connection
import urllib3.connectionpool
import urllib3.exceptions
from PIL import Image

from evaluators.endpoints.address import AddressPolicy, AddressRefused, resolve_checked
from evaluators.endpoints.credentials import display_url, scrub_secrets
from evaluators.endpoints.errors import (
    AUTH_ERROR,
    ENDPOINT_UNREACHABLE,
    INVALID_REQUEST,
    INVALID_RESPONSE,
    RATE_LIMITED,
    REQUEST_TIMEOUT,
    SERVER_ERROR,
    InfraError,
)
from evaluators.images import png_bytes
from evaluators.retry import Backoff, call_with_retries

logger = logging.getLogger(__name__)

CHAT_COMPLETIONS_PATH = "/chat/completions"
#: A chat completion is a few kilobytes; anything this large is not one, and reading it all would
#: only let a broken endpoint exhaust the worker's memory.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: An endpoint's own error message is kept to this many characters: enough to say what went wrong,
#: too few to carry a page of someone else's data into the attempt's public record.
_REASON_CHARS = 120
_REDACTED = "[redacted]"
#: Any run of this many characters of the API key is hidden, so an endpoint echoing a prefix of it
#: ("Incorrect API key provided: sk-abc123…") does not publish that either.
_KEY_FRAGMENT = 8
#: Without a policy the client calls private addresses too, as tools and tests against local servers
#: need; the platform always passes the policy of its settings.
LOCAL_POLICY = AddressPolicy(allow_private=True)

Message = Mapping[str, Any]


# --------------------------------------------------------------------------------------------
# URLs and message parts
# --------------------------------------------------------------------------------------------


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


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_part(img: Image.Image, *, media_type: str = "image/png") -> dict[str, Any]:
    """An ``image_url`` content part carrying the image as PNG bytes in a data URI labelled
    ``media_type`` (the official flows label their PNG bytes ``image/jpeg``)."""
    encoded = base64.b64encode(png_bytes(img)).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{encoded}"}}


# --------------------------------------------------------------------------------------------
# The client
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Completion:
    """One answered request. ``text`` is ``""`` when the model answered with nothing.

    ``latency`` is the duration of the request that succeeded (seconds), not counting earlier
    failed attempts or the waits between them; ``attempts`` counts every request made.
    """

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency: float
    attempts: int
    finish_reason: str | None
    model: str | None = None


class ChatClient:
    """Calls one model on one OpenAI-compatible endpoint.

    ``max_retries`` is the number of extra requests after the first one fails with a retryable
    kind (so at most ``1 + max_retries`` requests). ``timeout`` is one deadline for each request as
    a whole: resolving, connecting, sending, the headers and the body. ``policy`` says which
    addresses may be connected to (:data:`LOCAL_POLICY` when None); ``max_response_bytes`` caps
    a response body. ``sleep`` and ``rng`` exist so the waits can be observed or removed; they
    default to real time and an unseeded generator.
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
        # Kept private and out of __repr__; an empty key means "no key", as in the OpenAI client.
        self._api_key = api_key or None
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.policy = policy if policy is not None else LOCAL_POLICY
        self.max_response_bytes = int(max_response_bytes)
        self._session = _guarded_session()
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()
        # Jitter keeps many workers hitting one endpoint from retrying in lock-step.
        self._backoff = Backoff(first=self.backoff, cap=self.max_backoff, jitter=0.5)

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"ChatClient(url={display_url(self.url)!r}, model={self.model!r}, api_key={key})"

    def close(self) -> None:
        self._session.close()

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
        extra: Mapping[str, Any] | None = None,
    ) -> Completion:
        """Send one chat-completions request, retrying transient failures.

        ``top_p`` and ``frequency_penalty`` are left out of the request when None (the server's
        default then applies). Raises :class:`InfraError` (with ``attempts`` set) when no answer
        could be obtained.
        """
        payload: dict[str, Any] = {
            "model": self.model or self.listed_model(),
            "messages": list(messages),
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        if top_p is not None:
            payload["top_p"] = top_p
        if frequency_penalty is not None:
            payload["frequency_penalty"] = frequency_penalty
        if extra:
            if extra.get("stream"):
                raise ValueError("streaming responses are not supported by this client")
            payload.update(extra)
        body = json.dumps(payload).encode("utf-8")

        def attempt() -> Completion:
            started = time.monotonic()
            data = self._request("POST", self.url, body)
            latency = time.monotonic() - started
            return _completion_from(data, latency, self._clean)

        completion, attempts = self._with_retries(attempt)
        return dataclasses.replace(completion, attempts=attempts)

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
            data = self._request("GET", url, None)
            entries = data.get("data") if isinstance(data, dict) else None
            if not isinstance(entries, list):
                raise InfraError(INVALID_RESPONSE, "the /models answer has no 'data' list")
            return [str(e["id"]) for e in entries if isinstance(e, dict) and "id" in e]

        models, _ = self._with_retries(attempt)
        return models

    # -- retries ------------------------------------------------------------------------------

    def _with_retries(self, attempt: Callable[[], Any]) -> tuple[Any, int]:
        """``attempt()`` under the client's retry policy, and how many requests it took."""
        total = 1 + self.max_retries
        made = 0

        def counted() -> Any:
            nonlocal made
            made += 1
            try:
                return attempt()
            except InfraError as error:
                error.attempts = made
                raise

        def retrying(error: Exception, failures: int, delay: float) -> None:
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
                retry_if=lambda error: isinstance(error, InfraError) and error.retryable,
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

    def _server_wait(self, error: Exception, failures: int) -> float | None:
        if isinstance(error, InfraError) and error.retry_after is not None:
            # The server said when; guessing shorter gets another 429, longer wastes time.
            return min(max(error.retry_after, 0.0), self.max_backoff)
        return None

    # -- one request --------------------------------------------------------------------------

    def _request(self, method: str, url: str, body: bytes | None) -> Any:
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
        with _Deadline(self.timeout, self.policy) as deadline:
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

    def _read_body(self, response: requests.Response, deadline: _Deadline) -> bytes:
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
        self, exc: BaseException, deadline: _Deadline, status: int | None = None
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
            # The reason phrase is the standard one: the server's own may say anything.
            phrase = _status_phrase(status)
            if 300 <= status < 400:
                location = self._clean(display_url(response.headers.get("Location", "?")))
                explanation = (f"the endpoint redirects to {location}; redirects are not followed, "
                               "configure that URL instead")
            else:
                explanation = self._error_reason(raw) or "the endpoint gave no error message"
            raise InfraError(
                _kind_for_status(status), f"{phrase}: {explanation}", status, retry_after=retry_after
            )
        try:
            # json.loads detects UTF-8/16/32 itself, which is all RFC 8259 allows.
            return json.loads(raw)
        except ValueError:
            pass
        # Raised out here: the decoding error keeps the whole body, which may echo the key.
        content_type = self._clean(response.headers.get("Content-Type", "none"), limit=40)
        raise InfraError(
            INVALID_RESPONSE,
            f"the response body is not JSON ({len(raw)} bytes, content type {content_type})",
            status,
        )

    def _error_reason(self, raw: bytes) -> str:
        """The endpoint's own short explanation (OpenAI's ``error.message``), cleaned; else ""."""
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return ""
        return self._clean(_error_text(data.get("error") if isinstance(data, dict) else None)
                           or (_error_text(data) if isinstance(data, dict) else ""))

    def _clean(self, text: str, limit: int = _REASON_CHARS) -> str:
        """Foreign text made fit to store and show: one line, no markup, no secrets, short."""
        text = _TAG.sub(" ", text)
        text = "".join(c if c.isprintable() else " " for c in text)
        text = self._redact(" ".join(text.split()))
        return text if len(text) <= limit else text[:limit].rstrip() + "…"

    def _redact(self, text: str) -> str:
        # An error body or exception text may echo request headers back; the key must not follow,
        # nor the secrets of a URL stored before they were refused.
        key = self._api_key
        if key:
            text = text.replace(key, _REDACTED)
            if len(key) >= _KEY_FRAGMENT:
                text = _hide_fragments(text, key)
        return scrub_secrets(text)


# --------------------------------------------------------------------------------------------
# Connections: checked addresses and one deadline
# --------------------------------------------------------------------------------------------


_CURRENT_DEADLINE: contextvars.ContextVar[_Deadline | None] = contextvars.ContextVar(
    "endpoint_deadline", default=None
)


class _Deadline:
    """One request's deadline and address policy, for the connections made while it runs.

    Socket timeouts bound each wait for data, not the whole: an endpoint sending one byte just
    before each timeout could hold a worker indefinitely. When the deadline passes, a timer shuts
    down every connection the request used, which ends whatever read or write is blocked on it.
    """

    def __init__(self, seconds: float, policy: AddressPolicy) -> None:
        self.policy = policy
        self.at = time.monotonic() + seconds
        self.expired = False
        self._connections: list[urllib3.connection.HTTPConnection] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._token: contextvars.Token[_Deadline | None] | None = None

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def watch(self, connection: urllib3.connection.HTTPConnection) -> None:
        with self._lock:
            if connection not in self._connections:
                self._connections.append(connection)
            expired = self.expired
        if expired:
            _hang_up(connection)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            connections = list(self._connections)
        for connection in connections:
            _hang_up(connection)

    def __enter__(self) -> _Deadline:
        self._token = _CURRENT_DEADLINE.set(self)
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()
        if self._token is not None:
            _CURRENT_DEADLINE.reset(self._token)


def _current_deadline() -> _Deadline:
    deadline = _CURRENT_DEADLINE.get()
    if deadline is None:
        # Only ChatClient._request uses these connections; anything else has no policy to apply.
        raise RuntimeError("an endpoint connection was opened outside a client request")
    return deadline


def _hang_up(connection: urllib3.connection.HTTPConnection) -> None:
    sock = connection.sock
    if sock is None:
        return
    # The plain socket's shutdown, also for a TLS socket: it acts on the descriptor and wakes a
    # read blocked in another thread without touching the TLS state that read is using.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _connect_checked(connection: urllib3.connection.HTTPConnection) -> socket.socket:
    """Resolve the host once, check every address, and connect to a checked one.

    The socket goes to the address checked here, never to a fresh lookup of the name, so a name
    cannot answer one way for the check and another for the connection. The Host header and TLS
    (SNI and certificate) still use the name.
    """
    deadline = _current_deadline()
    host, port = connection._dns_host, int(connection.port or connection.default_port)
    try:
        infos = resolve_checked(host, port, deadline.policy, deadline.remaining())
    except socket.gaierror as exc:
        raise urllib3.exceptions.NameResolutionError(connection.host, connection, exc) from exc
    except TimeoutError as exc:
        raise urllib3.exceptions.ConnectTimeoutError(connection, "resolving the host name timed out") from exc
    last: OSError | None = None
    for family, kind, proto, _, address in infos:
        remaining = deadline.remaining()
        if remaining <= 0:
            break
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(remaining)
            for option in connection.socket_options or ():
                sock.setsockopt(*option)
            sock.connect(address)
        except OSError as exc:
            sock.close()
            last = exc
            continue
        return sock
    if last is None or isinstance(last, TimeoutError):
        raise urllib3.exceptions.ConnectTimeoutError(connection, "connecting timed out")
    raise urllib3.exceptions.NewConnectionError(connection, "Failed to establish a new connection") from last


class _Checked:
    """What both connection classes do besides urllib3's work: connect through the check, and put
    themselves under the deadline of the request that uses them."""

    sock: socket.socket | None

    def _new_conn(self) -> socket.socket:
        return _connect_checked(self)  # type: ignore[arg-type]

    def connect(self) -> None:
        _current_deadline().watch(self)  # type: ignore[arg-type]
        super().connect()  # type: ignore[misc]

    def request(self, *args: Any, **kwargs: Any) -> None:
        # A kept-alive connection is reused without connect(): this request must watch it too.
        _current_deadline().watch(self)  # type: ignore[arg-type]
        super().request(*args, **kwargs)  # type: ignore[misc]


class _CheckedHTTPConnection(_Checked, urllib3.connection.HTTPConnection):
    pass


class _CheckedHTTPSConnection(_Checked, urllib3.connection.HTTPSConnection):
    pass


class _CheckedHTTPPool(urllib3.connectionpool.HTTPConnectionPool):
    ConnectionCls = _CheckedHTTPConnection


class _CheckedHTTPSPool(urllib3.connectionpool.HTTPSConnectionPool):
    ConnectionCls = _CheckedHTTPSConnection


class _CheckedAdapter(requests.adapters.HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _CheckedHTTPPool, "https": _CheckedHTTPSPool}


def _guarded_session() -> requests.Session:
    session = requests.Session()
    # No proxy from the environment (it would resolve the name itself, unchecked) and no .netrc
    # credentials added to a stranger's host.
    session.trust_env = False
    adapter = _CheckedAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


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


_TAG = re.compile(r"<[^>]{0,200}>")


def _status_phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return f"HTTP {status}"


def _error_text(error: Any) -> str:
    """The message of an error object as OpenAI-compatible servers (and FastAPI) write it."""
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        for field in ("message", "detail", "error"):
            if isinstance(error.get(field), str):
                return error[field]
    return ""


def _hide_fragments(text: str, key: str) -> str:
    """``text`` with every run of at least :data:`_KEY_FRAGMENT` characters of ``key`` hidden."""
    windows = {key[i : i + _KEY_FRAGMENT] for i in range(len(key) - _KEY_FRAGMENT + 1)}
    hidden = [False] * len(text)
    for start in range(len(text) - _KEY_FRAGMENT + 1):
        if text[start : start + _KEY_FRAGMENT] in windows:
            hidden[start : start + _KEY_FRAGMENT] = [True] * _KEY_FRAGMENT
    out: list[str] = []
    for index, char in enumerate(text):
        if not hidden[index]:
            out.append(char)
        elif index == 0 or not hidden[index - 1]:
            out.append(_REDACTED)
    return "".join(out)


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


def _message_text(content: Any) -> str:
    """The text of a message's ``content``; ``None`` (an empty answer) gives ``""``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_part_texts(content))
    raise ValueError(f"message content is a {type(content).__name__}, not a string or a list")


def _part_texts(parts: Iterable[Any]) -> Iterable[str]:
    for part in parts:
        if isinstance(part, str):
            yield part
        elif isinstance(part, dict):
            # Non-text parts (images, audio, refusals) carry nothing the parser could use.
            if part.get("type", "text") in ("text", "output_text") and isinstance(
                part.get("text"), str
            ):
                yield part["text"]
        else:
            raise ValueError(f"a content part is a {type(part).__name__}, not an object")


def _completion_from(data: Any, latency: float, clean: Callable[[str], str]) -> Completion:
    if not isinstance(data, dict):
        raise InfraError(INVALID_RESPONSE, "the response is JSON but not an object", 200)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = data.get("error")
        text = clean(_error_text(error)) if error else ""
        hint = f" (it carries an error: {text})" if text else (" (it carries an error)" if error else "")
        raise InfraError(INVALID_RESPONSE, f"the response has no choices{hint}", 200)
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise InfraError(INVALID_RESPONSE, "the first choice has no message object", 200)
    try:
        text = _message_text(message.get("content"))
    except ValueError as exc:
        raise InfraError(INVALID_RESPONSE, str(exc), 200) from None
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    finish_reason = choice.get("finish_reason")
    model = data.get("model")
    return Completion(
        text=text,
        prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
        completion_tokens=_int_or_none(usage.get("completion_tokens")),
        latency=latency,
        attempts=1,
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        model=model if isinstance(model, str) else None,
    )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
