"""Log lines as one JSON object each (production), and the ids of the work a line is about.

The attempt engine and the Celery task hooks set the ids through context variables, so every line
logged meanwhile carries them, whichever module logs it: an operator filters one attempt's story
out of all the workers' output by its ``attempt_id``.
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

#: The ids a log line carries when known, by their field names in the JSON line.
CONTEXT_FIELDS = ("submission_id", "attempt_id", "task_id")

_context: dict[str, contextvars.ContextVar[str | int | None]] = {
    name: contextvars.ContextVar(f"magebench_log_{name}", default=None) for name in CONTEXT_FIELDS}


def log_context_set(**ids: str | int | None) -> dict[str, contextvars.Token[str | int | None]]:
    """Set some of the ids (``attempt_id=…``); the tokens undo it (``log_context_reset``)."""
    return {name: _context[name].set(value) for name, value in ids.items()}


def log_context_reset(tokens: dict[str, contextvars.Token[str | int | None]]) -> None:
    for name, token in tokens.items():
        with contextlib.suppress(ValueError):  # set in another context: nothing of it is left here
            _context[name].reset(token)


@contextlib.contextmanager
def log_context(**ids: str | int | None) -> Iterator[None]:
    """Lines logged inside carry these ids (and the ones already set outside)."""
    tokens = log_context_set(**ids)
    try:
        yield
    finally:
        log_context_reset(tokens)


def log_context_now() -> dict[str, str | int]:
    """The ids set now."""
    return {name: value for name, var in _context.items() if (value := var.get()) is not None}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (ISO 8601, UTC), level, logger, message, the exception's text
    if any, and the ids of the submission, attempt and Celery task being worked on, when known."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(log_context_now())
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


#: The development format (MAGEBENCH_LOG_FORMAT=plain).
PLAIN_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def formatter_for(log_format: str) -> logging.Formatter:
    return JsonFormatter() if log_format == "json" else logging.Formatter(PLAIN_FORMAT)
