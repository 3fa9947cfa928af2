"""A worker's clean stop: SIGTERM or Ctrl-C hands its attempts in flight back to the queue within seconds.

Celery's warm shutdown waits for every running task to end, and an attempt against a slow model can
run for many minutes, so a stopped worker used to hang until it was killed. Instead the main process
tells its pool processes to stop: each one hands its attempt back at the attempt's next step (the
same check that stops a cancelled submission). Whatever still runs after
MAGEBENCH_WORKER_STOP_GRACE_SECONDS (a model call that hangs) is handed back by the main process and
its pool process is killed. A handed-back attempt waits for another worker; the try that was stopped
can no longer write (engine._owned), so nothing is scored twice.
"""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from typing import Any

from django.conf import settings as django_settings
from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from submissions.models import Attempt

logger = logging.getLogger(__name__)

#: What the main process sends its pool processes (Celery leaves it alone unless CELERY_RDBSIG is set).
STOP_SIGNAL = signal.SIGUSR2
STOPPED_KIND = "worker_stopped"
STOPPED_MESSAGE = "the worker running this attempt was stopped; queued again"

#: How long pool processes that handed their attempts back get for their last writes before being killed.
STRAGGLER_SECONDS = 2.0

_stopping = threading.Event()
_pools: dict[str, Any] = {}
_started: set[str] = set()


def stop_requested() -> bool:
    """Whether this process's worker is stopping (checked by a running attempt between its steps)."""
    return _stopping.is_set()


def on_pool_process_init(**_: Any) -> None:
    """celery's worker_process_init, in each new pool process."""
    signal.signal(STOP_SIGNAL, lambda *_: _stopping.set())


def remember_pool(hostname: str, controller: Any) -> None:
    """Keep the worker's controller, whose pool knows the processes to tell (from worker_ready)."""
    _pools[hostname] = controller


def attempts_hand_back(*, worker: str) -> list[int]:
    """Give the attempts this worker still runs back to the queue; the ids handed back (already sent).

    The try count stays, so the stopped try's own writes (which name it) find nothing to write over.
    """
    from submissions.services import attempts_enqueue

    running = Attempt.objects.filter(worker=worker[:200], status=Attempt.Status.RUNNING)
    ids = list(running.values_list("id", flat=True))
    Attempt.objects.filter(id__in=ids, status=Attempt.Status.RUNNING).update(
        status=Attempt.Status.RETRYING, next_try_at=None, heartbeat_at=timezone.now(),
        error_kind=STOPPED_KIND, error_message=STOPPED_MESSAGE)
    if ids:
        attempts_enqueue(ids)
    return ids


def _pool_pids(hostname: str) -> list[int]:
    controller = _pools.get(hostname)
    pool = getattr(controller, "pool", None)
    with contextlib.suppress(Exception):  # a pool that has not started or has already gone
        return [int(pid) for pid in pool.info.get("processes", [])]  # type: ignore[union-attr]
    return []


def _send(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _running_here(hostname: str) -> bool:
    return Attempt.objects.filter(worker=hostname[:200], status=Attempt.Status.RUNNING).exists()


def _finish_stop(hostname: str, pids: list[int]) -> None:
    """In the main process: wait for the pool to hand its attempts back, then take back the rest."""
    deadline = time.monotonic() + django_settings.MAGEBENCH_WORKER_STOP_GRACE_SECONDS
    handed: list[int] = []
    try:
        close_old_connections()
        while time.monotonic() < deadline and _running_here(hostname):
            time.sleep(0.2)
        handed = attempts_hand_back(worker=hostname)
        if handed:
            logger.warning("worker %s stopping: attempts %s were still running; queued again", hostname, handed)
    except DatabaseError as exc:  # the watchdog queues them again once their heartbeat is stale
        logger.warning("worker %s stopping: could not hand its attempts back: %s", hostname, exc)
    finally:
        with contextlib.suppress(DatabaseError):
            connection.close()
    if not handed:
        # Every attempt stopped at a step: the pool ends after its last writes, and this thread with
        # the process; a pool process still there after that is stuck in something else.
        time.sleep(STRAGGLER_SECONDS)
    # A pool process still busy is in a call that does not return: its attempt is someone else's now.
    _send(pids, signal.SIGKILL)


def on_worker_shutting_down(sender: Any = None, **_: Any) -> None:
    """celery's worker_shutting_down (SIGTERM, SIGINT or SIGQUIT), in the main process's signal handler."""
    hostname = str(sender or "")
    if hostname in _started:
        return
    _started.add(hostname)
    pids = _pool_pids(hostname)
    _send(pids, STOP_SIGNAL)
    threading.Thread(target=_finish_stop, args=(hostname, pids), name="magebench-worker-stop",
                     daemon=True).start()
