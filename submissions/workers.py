"""The registry of live Celery workers (submissions.LiveWorker), kept by the workers themselves.

A worker's main process records itself when it is ready, a daemon thread refreshes the row while
it lives, and the row goes when it shuts down; a worker killed outright leaves a row that goes stale.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings as django_settings
from django.db import DatabaseError, close_old_connections, connection
from django.db.models import QuerySet
from django.utils import timezone

from config.heartbeat import heartbeat_touch
from submissions.models import LiveWorker

logger = logging.getLogger(__name__)


def worker_seen(*, hostname: str, queues: list[str], concurrency: int) -> None:
    """Record that the worker is up now (an upsert: a restarted worker keeps its row)."""
    now = timezone.now()
    LiveWorker.objects.update_or_create(
        hostname=hostname[:200], defaults={"queues": sorted(queues), "concurrency": max(1, concurrency),
                                           "last_seen": now},
        create_defaults={"queues": sorted(queues), "concurrency": max(1, concurrency), "last_seen": now,
                         "started_at": now})


def worker_gone(*, hostname: str) -> None:
    LiveWorker.objects.filter(hostname=hostname[:200]).delete()


def live_since() -> datetime:
    """The oldest last beat of a worker still taken as up."""
    return timezone.now() - timedelta(seconds=django_settings.MAGEBENCH_WORKER_STALE_AFTER_SECONDS)


def live_workers() -> QuerySet[LiveWorker]:
    """Workers that said they were up recently enough to be taken as up."""
    return LiveWorker.objects.filter(last_seen__gte=live_since()).order_by("hostname")


def _heartbeat_file_touch() -> None:
    """The container's health check reads the file's age (config/heartbeat.py): touched only after the
    row was written, so a worker that cannot record itself goes unhealthy too."""
    try:
        heartbeat_touch(django_settings.MAGEBENCH_WORKER_HEARTBEAT_FILE)
    except OSError as exc:
        logger.warning("could not touch the heartbeat file %s: %s", django_settings.MAGEBENCH_WORKER_HEARTBEAT_FILE,
                       exc)


class _Beat:
    """The daemon thread that keeps a worker's row fresh; its own database connection is closed
    after every write, so nothing of it is inherited by pool processes forked later."""

    def __init__(self, hostname: str, queues: list[str], concurrency: int) -> None:
        self.hostname, self.queues, self.concurrency = hostname, queues, concurrency
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, name="magebench-worker-beat", daemon=True)

    def beat(self) -> None:
        try:
            close_old_connections()
            worker_seen(hostname=self.hostname, queues=self.queues, concurrency=self.concurrency)
            _heartbeat_file_touch()
        except DatabaseError as exc:  # a restarting database: the next beat tries again
            logger.warning("could not record worker %s as live: %s", self.hostname, exc)
        finally:
            with contextlib.suppress(DatabaseError):
                connection.close()

    def run(self) -> None:
        while True:
            self.beat()
            if self.stopped.wait(django_settings.MAGEBENCH_WORKER_BEAT_SECONDS):
                return


_beats: dict[str, _Beat] = {}


def on_worker_ready(sender: Any, **_: Any) -> None:
    """celery's worker_ready: ``sender`` is the worker's consumer, in the worker's main process."""
    hostname = str(sender.hostname)
    queues = sorted(sender.app.amqp.queues.consume_from)
    concurrency = int(getattr(sender.controller, "concurrency", None) or 1)
    beat = _Beat(hostname, queues, concurrency)
    _beats[hostname] = beat
    beat.thread.start()


def on_worker_shutdown(sender: Any, **_: Any) -> None:
    """celery's worker_shutdown: ``sender`` is the WorkController."""
    hostname = str(getattr(sender, "hostname", ""))
    beat = _beats.pop(hostname, None)
    if beat is not None:
        beat.stopped.set()
        beat.thread.join(timeout=2)
    try:
        close_old_connections()
        worker_gone(hostname=hostname)
    except DatabaseError as exc:
        logger.warning("could not remove worker %s from the live workers: %s", hostname, exc)
    finally:
        with contextlib.suppress(DatabaseError):
            connection.close()
