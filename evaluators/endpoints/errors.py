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

KINDS: tuple[str, ...] = (
    ENDPOINT_UNREACHABLE,
    AUTH_ERROR,
    RATE_LIMITED,
    REQUEST_TIMEOUT,
    SERVER_ERROR,
    INVALID_RESPONSE,
    INVALID_REQUEST,
)

#: Kinds worth another request. Unreachable, timeouts, 429 and 5xx are usually transient.
#: ``invalid_response`` is retried too: a 200 whose body is not a chat completion almost always
#: comes from something between us and the model (a gateway's HTML page during a restart, a body
#: cut short by a dropped proxy connection), and the model never saw an answer of its own rejected,
#: so a fresh request is fair to it; a permanently misconfigured URL only costs ``max_retries``
#: extra requests. Auth errors and refused requests (other 4xx) would fail identically every time.
RETRYABLE_KINDS: frozenset[str] = frozenset(
    {ENDPOINT_UNREACHABLE, REQUEST_TIMEOUT, RATE_LIMITED, SERVER_ERROR, INVALID_RESPONSE}
)


class InfraError(Exception):
    """The endpoint could not be asked or did not answer; never a model failure.

    ``attempts`` is how many HTTP requests were made before giving up; ``retry_after`` is the
    delay the server asked for (seconds), when it gave one.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        status: int | None = None,
        *,
        attempts: int = 1,
        retry_after: float | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown infrastructure error kind {kind!r}; known: {KINDS}")
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.attempts = attempts
        self.retry_after = retry_after

    def __reduce__(self) -> tuple[Any, ...]:
        # Workers hand exceptions across processes; the default pickling would call
        # InfraError(message) and lose the kind.
        state = {"attempts": self.attempts, "retry_after": self.retry_after}
        return (self.__class__, (self.kind, self.message, self.status), state)

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{self.kind}{status}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"InfraError(kind={self.kind!r}, message={self.message!r}, status={self.status!r}, "
            f"attempts={self.attempts!r})"
        )
