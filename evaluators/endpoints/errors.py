"""Infrastructure failures of a model endpoint.

An :class:`InfraError` means the platform could not obtain an answer from the model: the attempt
is recorded with this kind as its reason and is never scored as a model failure. Anything the
endpoint *did* answer (including an empty or nonsensical message) is the model's reply and goes
to the parser instead.
"""
from __future__ import annotations

from typing import Any

ENDPOINT_UNREACHABLE = "endpoint_unreachable"
AUTH_ERROR = "auth_error"
RATE_LIMITED = "rate_limited"
REQUEST_TIMEOUT = "request_timeout"
SERVER_ERROR = "server_error"
INVALID_RESPONSE = "invalid_response"
INVALID_REQUEST = "invalid_request"
#: A spent quota, a billing problem or a spend limit: the provider will refuse until a person acts.
QUOTA_EXHAUSTED = "quota_exhausted"
#: A 200 that is no chat completion and never will be: an HTML page (a sign-in page, a dashboard)
#: or an event stream nobody asked for. The URL, or the server, is not an OpenAI-compatible API.
NOT_CHAT_API = "not_chat_api"

KINDS: tuple[str, ...] = (
    ENDPOINT_UNREACHABLE,
    AUTH_ERROR,
    RATE_LIMITED,
    REQUEST_TIMEOUT,
    SERVER_ERROR,
    INVALID_RESPONSE,
    INVALID_REQUEST,
    QUOTA_EXHAUSTED,
    NOT_CHAT_API,
)

#: Kinds worth another request. Unreachable, timeouts, 429 and 5xx are usually transient.
#: ``invalid_response`` is retried too: a 200 whose body is not a chat completion almost always
#: comes from something between us and the model (a gateway's HTML page during a restart, a body
#: cut short by a dropped proxy connection), and the model never saw an answer of its own rejected,
#: so a fresh request is fair to it; a permanently misconfigured URL only costs ``max_retries``
#: extra requests. Auth errors, refused requests (other 4xx), spent quotas and answers that are not
#: an API at all would fail identically every time.
RETRYABLE_KINDS: frozenset[str] = frozenset(
    {ENDPOINT_UNREACHABLE, REQUEST_TIMEOUT, RATE_LIMITED, SERVER_ERROR, INVALID_RESPONSE}
)


class InfraError(Exception):
    """The endpoint could not be asked or did not answer; never a model failure.

    ``attempts`` is how many HTTP requests were made before giving up; ``retry_after`` is the
    delay the server asked for (seconds), when it gave one; ``code`` is the provider's own name for
    the failure (OpenAI's ``error.code``), which tells two failures of one kind and status apart.
    ``permanent`` overrides the kind's own retryability (a rate limit whose wait is longer than the
    platform allows is as good as permanent). ``fix`` is the request-profile setting that would make
    the provider accept a request it refused (``token_limit_parameter=max_completion_tokens``), when
    one would: the message says it too, this is it for a program to read.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        status: int | None = None,
        *,
        attempts: int = 1,
        retry_after: float | None = None,
        code: str = "",
        permanent: bool | None = None,
        fix: str = "",
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown infrastructure error kind {kind!r}; known: {KINDS}")
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.attempts = attempts
        self.retry_after = retry_after
        self.code = code
        self.fix = fix
        self.permanent = kind not in RETRYABLE_KINDS if permanent is None else permanent

    def __reduce__(self) -> tuple[Any, ...]:
        # Workers hand exceptions across processes; the default pickling would call
        # InfraError(message) and lose the kind.
        state = {"attempts": self.attempts, "retry_after": self.retry_after, "code": self.code,
                 "permanent": self.permanent, "fix": self.fix}
        return (self.__class__, (self.kind, self.message, self.status), state)

    @property
    def retryable(self) -> bool:
        return not self.permanent

    @property
    def cause_key(self) -> str:
        """What makes two failures the same cause: their kind, status and provider code, not the
        wording (which may carry a request id or a time)."""
        return f"{self.kind}:{self.status or ''}:{self.code}"[:64]

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{self.kind}{status}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"InfraError(kind={self.kind!r}, message={self.message!r}, status={self.status!r}, "
            f"attempts={self.attempts!r})"
        )
