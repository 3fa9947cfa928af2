"""A small OpenAI-compatible chat-completions client built on ``requests``.

It does three things the platform cannot get wrong: it tells infrastructure failures (raised as
:class:`InfraError`, never scored) from model answers (returned, however odd), it retries the
transient failures with capped exponential backoff, and it never lets the API key out: the key
only travels in the ``Authorization`` header and is scrubbed from every message we build.
"""
from __future__ import annotations

import base64
import dataclasses
import email.utils
import io
import json
import logging
import random
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Mapping, Sequence
from urllib.parse import urlsplit, urlunsplit

import requests
import urllib3.exceptions
from PIL import Image

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

logger = logging.getLogger(__name__)

CHAT_COMPLETIONS_PATH = "/chat/completions"
#: A chat completion is a few kilobytes; anything this large is not one, and reading it all would
#: only let a broken endpoint exhaust the worker's memory.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
#: Enough of an error body to explain it in the attempt's record without storing a whole page.
_SNIPPET_CHARS = 300
_REDACTED = "[redacted]"

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
            f"the endpoint URL must start with http:// or https:// (got {_display_url(url)!r})"
        )
    if not parts.hostname:
        raise ValueError(f"the endpoint URL has no host (got {_display_url(url)!r})")
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


def _display_url(url: str) -> str:
    """The URL without any ``user:password@`` part, for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


_PNG_MODES = frozenset({"1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"})


def image_part(img: Image.Image) -> dict[str, Any]:
    """An ``image_url`` content part carrying the image as PNG bytes in a data URI."""
    if img.mode not in _PNG_MODES:
        # PNG cannot store e.g. CMYK or YCbCr; RGB keeps what the model would see on screen.
        img = img.convert("RGB")
    buffer = io.BytesIO()
    img.save(buffer, format="PNG")
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{encoded}"}}


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
    kind (so at most ``1 + max_retries`` requests). ``timeout`` bounds connecting, each wait for
    data, and the whole response of one request. ``sleep`` and ``rng`` exist so the waits can be
    observed or removed; they default to real time and an unseeded generator.
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
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if max_retries < 0:
            raise ValueError("max_retries cannot be negative")
        if backoff < 0 or max_backoff < 0:
            raise ValueError("backoff delays cannot be negative")
        self.url = normalise_endpoint_url(url)
        self.model = model
        # Kept private and out of __repr__; an empty key means "no key", as in the OpenAI client.
        self._api_key = api_key or None
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self._owns_session = session is None
        self._session = session if session is not None else requests.Session()
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"ChatClient(url={_display_url(self.url)!r}, model={self.model!r}, api_key={key})"

    def close(self) -> None:
        if self._owns_session:
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
            "model": self.model,
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
            return _completion_from(data, latency)

        completion, attempts = self._with_retries(attempt)
        return dataclasses.replace(completion, attempts=attempts)

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
        total = 1 + self.max_retries
        for number in range(1, total + 1):
            try:
                return attempt(), number
            except InfraError as error:
                error.attempts = number
                if not error.retryable or number == total:
                    logger.warning(
                        "chat endpoint %s failed after %d attempt(s): %s",
                        _display_url(self.url),
                        number,
                        error,
                    )
                    raise
                delay = self._delay_before(number + 1, error)
                logger.warning(
                    "chat endpoint %s failed on attempt %d/%d (%s); retrying in %.2fs",
                    _display_url(self.url),
                    number,
                    total,
                    error,
                    delay,
                )
                if delay > 0:
                    self._sleep(delay)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _delay_before(self, next_attempt: int, error: InfraError) -> float:
        if error.retry_after is not None:
            # The server said when; guessing shorter gets another 429, longer wastes time.
            return min(max(error.retry_after, 0.0), self.max_backoff)
        exponential = min(self.max_backoff, self.backoff * 2 ** (next_attempt - 2))
        # Jitter keeps many workers hitting one endpoint from retrying in lock-step.
        return exponential * self._rng.uniform(0.5, 1.0)

    # -- one request --------------------------------------------------------------------------

    def _request(self, method: str, url: str, body: bytes | None) -> Any:
        """Make one HTTP request and return its decoded JSON, or raise a classified InfraError."""
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        deadline = time.monotonic() + self.timeout
        # Errors are raised outside the ``except`` blocks on purpose: a requests exception holds
        # the prepared request, Authorization header included, and must not ride along as the
        # InfraError's __context__ into tracebacks or error trackers.
        failure: InfraError | None = None
        try:
            response = self._session.request(
                method,
                url,
                data=body,
                headers=headers,
                timeout=(self.timeout, self.timeout),
                stream=True,
                # requests turns a redirected POST into a GET; better to say so than to follow.
                allow_redirects=False,
            )
        except requests.RequestException as exc:
            failure = self._transport_error(exc, deadline)
        if failure is not None:
            raise failure
        try:
            raw = self._read_body(response, deadline)
        finally:
            response.close()
        return self._decode(response, raw)

    def _read_body(self, response: requests.Response, deadline: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        failure: InfraError | None = None
        try:
            for chunk in response.iter_content(chunk_size=64 * 1024):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise InfraError(
                        INVALID_RESPONSE,
                        f"the response is larger than {MAX_RESPONSE_BYTES} bytes",
                        response.status_code,
                    )
                if time.monotonic() > deadline:
                    raise InfraError(
                        REQUEST_TIMEOUT,
                        f"the response took longer than {self.timeout:g}s to arrive",
                        response.status_code,
                    )
        except requests.RequestException as exc:
            failure = self._transport_error(exc, deadline, status=response.status_code)
        if failure is not None:
            raise failure
        return b"".join(chunks)

    def _transport_error(
        self, exc: BaseException, deadline: float, status: int | None = None
    ) -> InfraError:
        detail = self._redact(f"{type(exc).__name__}: {exc}")
        if isinstance(exc, requests.Timeout):
            return self._timeout_error(detail, status)
        # Checked before urllib3's timeouts: urllib3 derives "connection refused" and DNS
        # failures (NewConnectionError) from its connect-timeout class for compatibility.
        if _has_cause(exc, (urllib3.exceptions.NewConnectionError,)):
            return InfraError(
                ENDPOINT_UNREACHABLE, f"could not connect to the endpoint ({detail})", status
            )
        if time.monotonic() > deadline or _has_cause(
            exc, (urllib3.exceptions.TimeoutError, TimeoutError)
        ):
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
            kind = _kind_for_status(status)
            explanation = self._error_explanation(raw)
            if 300 <= status < 400:
                location = _display_url(response.headers.get("Location", "?"))
                explanation = f"the endpoint redirects to {location}; configure that URL instead"
            raise InfraError(
                kind,
                self._redact(f"{response.reason or 'error'}: {explanation}"),
                status,
                retry_after=retry_after,
            )
        try:
            # json.loads detects UTF-8/16/32 itself, which is all RFC 8259 allows.
            return json.loads(raw)
        except ValueError:
            pass
        # Raised out here: the decoding error keeps the whole body, which may echo the key.
        raise InfraError(
            INVALID_RESPONSE,
            self._redact(f"the response body is not JSON: {_snippet(raw)}"),
            status,
        )

    def _error_explanation(self, raw: bytes) -> str:
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return _snippet(raw) or "(empty body)"
        if isinstance(data, dict):
            err = data.get("error")
            if isinstance(err, dict) and isinstance(err.get("message"), str):
                return err["message"][:_SNIPPET_CHARS]
            if isinstance(err, str):
                return err[:_SNIPPET_CHARS]
        return _snippet(raw)

    def _redact(self, text: str) -> str:
        # An error body or exception text may echo request headers back; the key must not follow.
        if self._api_key:
            text = text.replace(self._api_key, _REDACTED)
        return text


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
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


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


def _snippet(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").strip()
    if len(text) > _SNIPPET_CHARS:
        text = text[:_SNIPPET_CHARS] + "…"
    return repr(text) if text else ""


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


def _completion_from(data: Any, latency: float) -> Completion:
    if not isinstance(data, dict):
        raise InfraError(INVALID_RESPONSE, "the response is JSON but not an object", 200)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = data.get("error")
        hint = f" (it carries an error: {str(error)[:_SNIPPET_CHARS]})" if error else ""
        raise InfraError(INVALID_RESPONSE, f"the response has no choices{hint}", 200)
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise InfraError(INVALID_RESPONSE, "the first choice has no message object", 200)
    try:
        text = _message_text(message.get("content"))
    except ValueError as exc:
        raise InfraError(INVALID_RESPONSE, str(exc), 200) from None
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
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
