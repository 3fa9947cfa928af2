"""A deadline for every web request, below the application server's worker timeout.

gunicorn kills a sync worker whose request runs past its ``--timeout`` (30 s, its default, which
the Dockerfile keeps): the client's connection is reset, and a request cut off in the middle of its
writes leaves them half done. A request that runs long is waiting on the database, so that is where
the deadline is kept: PostgreSQL cancels a statement that would run past it (``statement_timeout``,
set to the time the request has left), a statement due after it is refused before it is sent, and
the request is answered 503 with Retry-After, its transaction rolled back, the worker alive.

Only web requests carry a deadline: migrations, management commands and Celery workers never pass
through this middleware, and the session setting is reset before the connection serves anything
else. A streamed response (a CSV export) is read after the view returns and is not cut short.
"""
from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import DatabaseError, OperationalError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

#: PostgreSQL's SQLSTATE for a statement cancelled, by its statement_timeout here.
QUERY_CANCELED = "57014"
#: What a refused client is told to wait: long enough for whatever held the database to pass.
RETRY_AFTER_SECONDS = 30
#: The statement timeout is set again only once it exceeds the time left by more than this, so a
#: request of many short queries sets it a few times, not once a query.
SLACK_MS = 1000
#: Statements that end or undo a transaction: always sent, or a refused request could not roll back.
_CLEANUP = ("ROLLBACK", "RELEASE", "COMMIT")


class RequestDeadlineExceeded(OperationalError):
    """The request ran past MAGEBENCH_REQUEST_DEADLINE before its next statement."""


def deadline_passed(exc: BaseException) -> bool:
    """Whether ``exc`` is the request's deadline: a statement refused, or one PostgreSQL cancelled."""
    if isinstance(exc, RequestDeadlineExceeded):
        return True
    return isinstance(exc, OperationalError) and getattr(exc.__cause__, "sqlstate", None) == QUERY_CANCELED


class _Deadline:
    """The execute wrapper that keeps one request's statements within its deadline."""

    def __init__(self, seconds: float) -> None:
        self.ends_at = time.monotonic() + seconds
        #: The statement_timeout this request set on the connection (ms); None: none yet.
        self.set_ms: int | None = None

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        if sql.lstrip()[:8].upper().startswith(_CLEANUP):
            return execute(sql, params, many, context)
        left_ms = math.ceil((self.ends_at - time.monotonic()) * 1000)
        if left_ms <= 0:
            raise RequestDeadlineExceeded("the request ran past its deadline")
        if self.set_ms is None or self.set_ms > left_ms + SLACK_MS:
            self._set(context["connection"], left_ms)
        return execute(sql, params, many, context)

    def _set(self, wrapper: Any, ms: int) -> None:
        # Through the driver's own connection: Django's cursor would count it as one of the request's
        # queries. In a transaction the setting is undone with it, leaving the longer one set before.
        if wrapper.in_atomic_block and wrapper.needs_rollback:
            return
        try:
            wrapper.connection.execute("SELECT set_config('statement_timeout', %s, false)", [f"{ms}ms"])
        except Exception as exc:  # the statement about to run fails the same way, and is reported
            logger.warning("could not set the request's statement timeout: %s", exc)
            return
        self.set_ms = ms

    def lift(self) -> None:
        """Give the connection back with the server's own statement timeout."""
        if self.set_ms is None or connection.connection is None:
            return
        try:
            connection.connection.execute("RESET statement_timeout")
        except Exception as exc:
            # A connection that keeps a short timeout must serve nothing else.
            logger.warning("could not reset the statement timeout, closing the connection: %s", exc)
            if not connection.in_atomic_block:
                with contextlib.suppress(DatabaseError):
                    connection.close()


class RequestDeadlineMiddleware:
    """Answer 503 with Retry-After, rather than have the worker killed, once a request runs past
    MAGEBENCH_REQUEST_DEADLINE seconds (0: no deadline). PostgreSQL only: on SQLite, a development
    database, a request runs to its end."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        seconds = settings.MAGEBENCH_REQUEST_DEADLINE
        if seconds <= 0 or connection.vendor != "postgresql":
            return self.get_response(request)
        deadline = _Deadline(seconds)
        try:
            with connection.execute_wrapper(deadline):
                return self.get_response(request)
        finally:
            deadline.lift()

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not deadline_passed(exception):
            return None
        logger.warning("%s %s ran past its deadline of %ss: answered 503", request.method, request.path,
                       settings.MAGEBENCH_REQUEST_DEADLINE)
        message = "The site is busy and could not answer in time; try again shortly."
        response: HttpResponse
        if request.path_info.startswith("/api/"):
            response = JsonResponse({"detail": message}, status=503)
        else:
            response = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
