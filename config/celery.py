from __future__ import annotations

import os
from typing import Any

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("magebench")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.worker_ready.connect
def _worker_ready(sender: Any = None, **kwargs: Any) -> None:
    # Workers record themselves, so the queue page and time-left estimates know what serves each queue.
    from submissions.workers import on_worker_ready

    on_worker_ready(sender, **kwargs)


@signals.worker_shutdown.connect
def _worker_shutdown(sender: Any = None, **kwargs: Any) -> None:
    from submissions.workers import on_worker_shutdown

    on_worker_shutdown(sender, **kwargs)
