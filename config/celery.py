from __future__ import annotations

import contextvars
import logging
import os
from typing import Any

from celery import Celery, signals

from config.logs import JsonFormatter, log_context_reset, log_context_set

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("magebench")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The apps' tasks, and the workers' own start and stop hooks (submissions' app config connects them).
app.autodiscover_tasks()


def _site_log_format(logger: logging.Logger | None = None, **_: Any) -> None:
    """Celery's own lines (its handlers and its task logger's) in the site's format when that is JSON;
    plain lines keep Celery's own format, with its task names and ids."""
    from django.conf import settings

    if logger is None or settings.MAGEBENCH_LOG_FORMAT != "json":
        return
    for handler in logger.handlers:
        handler.setFormatter(JsonFormatter())


def _task_started(task_id: str | None = None, **_: Any) -> None:
    _task_log_ids[task_id] = log_context_set(task_id=task_id)


def _task_ended(task_id: str | None = None, **_: Any) -> None:
    tokens = _task_log_ids.pop(task_id, None)
    if tokens is not None:
        log_context_reset(tokens)


#: The log context each running task set as it started, undone as it ends.
_task_log_ids: dict[str | None, dict[str, contextvars.Token[str | int | None]]] = {}

signals.after_setup_logger.connect(_site_log_format, dispatch_uid="magebench.site_log_format")
signals.after_setup_task_logger.connect(_site_log_format, dispatch_uid="magebench.site_task_log_format")
# Every line a task logs carries its id (config.logs).
signals.task_prerun.connect(_task_started, dispatch_uid="magebench.task_log_ids")
signals.task_postrun.connect(_task_ended, dispatch_uid="magebench.task_log_ids_end")
