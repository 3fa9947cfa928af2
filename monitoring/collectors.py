"""The platform's state as Prometheus gauges, counted when scraped (a custom Collector).

The numbers come from the database and the broker, where the workers of every container record
what they do. They are counted at most once every MAGEBENCH_METRICS_CACHE_SECONDS per web process,
so a storm of scrapes costs the database a few GROUP BYs every few seconds, never one per scrape.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator

from django.conf import settings
from django.db import DatabaseError, close_old_connections
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from redis import RedisError

from monitoring.broker import broker_depths
from monitoring.selectors import attempt_groups, submission_counts, worker_beats
from submissions.workers import live_since

logger = logging.getLogger(__name__)


def _gauge(name: str, documentation: str, labels: list[str], values: Iterable[tuple[Iterable[str], float]],
           ) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=labels)
    for label_values, value in values:
        family.add_metric(list(label_values), value)
    return family


def _queue_names() -> list[str]:
    routed = settings.MAGEBENCH_QUEUE_ROUTES.values()
    return list(dict.fromkeys([*(queue.name for queue in settings.CELERY_TASK_QUEUES), *routed]))


def database_families() -> list[GaugeMetricFamily]:
    groups = attempt_groups()
    by_status: dict[tuple[str, str], int] = defaultdict(int)
    calls: dict[str, int] = defaultdict(int)
    errors: dict[tuple[str, str], int] = defaultdict(int)
    for group in groups:
        by_status[(group.env, group.status)] += group.attempts
        calls[group.env] += group.model_calls
        if group.error_kind:
            errors[(group.env, group.error_kind)] += group.attempts
    submissions = submission_counts()
    beats = worker_beats()
    now, live_after = timezone.now(), live_since()
    live: dict[str, int] = dict.fromkeys(_queue_names(), 0)
    for beat in beats:
        if beat.last_seen >= live_after:
            for queue in beat.queues:
                live[queue] = live.get(queue, 0) + 1
    per_queue = [(beat, queue) for beat in beats for queue in beat.queues]
    return [
        _gauge("magebench_attempts", "Attempts by environment and status.", ["env", "status"],
               (((env, status), n) for (env, status), n in sorted(by_status.items()))),
        _gauge("magebench_submissions", "Submissions by status.", ["status"],
               (((status,), n) for status, n in sorted(submissions.items()))),
        _gauge("magebench_model_calls",
               "Model calls made by attempts (the sum of Attempt.model_calls), by environment.", ["env"],
               (((env,), n) for env, n in sorted(calls.items()))),
        _gauge("magebench_attempt_errors",
               "Attempts whose latest try ended in a provider or infrastructure failure, by environment and kind "
               "(Attempt.error_kind; cleared when a later try scores).", ["env", "kind"],
               (((env, kind), n) for (env, kind), n in sorted(errors.items()))),
        _gauge("magebench_worker_last_seen_seconds",
               "Seconds since each registered worker last refreshed its LiveWorker row, per queue it reads.",
               ["hostname", "queue"], (((beat.hostname, queue), max(0.0, (now - beat.last_seen).total_seconds()))
                                       for beat, queue in per_queue)),
        _gauge("magebench_worker_concurrency", "Attempts each registered worker runs at once, per queue it reads.",
               ["hostname", "queue"], (((beat.hostname, queue), beat.concurrency) for beat, queue in per_queue)),
        _gauge("magebench_live_workers",
               "Workers that refreshed their row within MAGEBENCH_WORKER_STALE_AFTER_SECONDS, per queue they read.",
               ["queue"], (((queue,), n) for queue, n in sorted(live.items()))),
    ]


def broker_families() -> list[GaugeMetricFamily]:
    queues = _queue_names()
    up = GaugeMetricFamily("magebench_broker_up", "1 when the broker answered the queue-length reads, else 0.")
    try:
        depths = broker_depths(settings.CELERY_BROKER_URL, queues, dict(settings.CELERY_BROKER_TRANSPORT_OPTIONS),
                               timeout=settings.MAGEBENCH_READY_TIMEOUT_SECONDS)
    except (RedisError, OSError) as exc:
        logger.warning("metrics: the broker's queues could not be read: %s", exc)
        up.add_metric([], 0)
        return [up]
    up.add_metric([], 1)
    if depths is None:  # a broker whose queues this cannot read
        return [up]
    families = [up, _gauge("magebench_queue_messages",
                           "Messages waiting in each Celery queue of the broker (all priority steps).", ["queue"],
                           (((queue,), n) for queue, n in depths.queues.items()))]
    if depths.unacked is not None:
        families.append(_gauge("magebench_broker_unacked_messages",
                               "Messages delivered to a worker and not yet acknowledged (a running task holds one).",
                               [], [((), depths.unacked)]))
    return families


class PlatformCollector(Collector):
    """The database's and the broker's gauges, counted afresh at most every few seconds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._families: list[GaugeMetricFamily] = []
        self._counted_at: float | None = None

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self._lock:
            fresh_for = settings.MAGEBENCH_METRICS_CACHE_SECONDS
            if self._counted_at is None or time.monotonic() - self._counted_at >= fresh_for:
                self._families = self._count()
                self._counted_at = time.monotonic()
            families = list(self._families)
        yield from families

    def _count(self) -> list[GaugeMetricFamily]:
        database = GaugeMetricFamily("magebench_database_up", "1 when the database answered the counts, else 0.")
        families: list[GaugeMetricFamily] = []
        try:
            families = database_families()
            database.add_metric([], 1)
        except DatabaseError as exc:
            logger.warning("metrics: the database's counts could not be read: %s", exc)
            close_old_connections()
            database.add_metric([], 0)
        return [database, *families, *broker_families()]


#: One per process: its counts are shared by the scrapes that come within the cache's few seconds.
PLATFORM = PlatformCollector()
