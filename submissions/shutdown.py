"""A worker's clean stop: SIGTERM or Ctrl-C hands its attempts in flight back to the queue within seconds.

Celery's warm shutdown waits for every running task to end, and an attempt against a slow model can
run for many minutes, so a stopped worker used to hang until it was killed. Instead the main process
tells its pool processes to stop, through a flag they share (an event made before the pool forks):
each one hands its attempt back at the attempt's next step (the same check that stops a cancelled
submission), then ends as Celery's warm shutdown asks, with exit code 0. A signal cannot carry the
word: billiard's pool processes take every terminating signal, SIGUSR1 and SIGUSR2 included, as an
order to exit at once, so one sent by the stop made each pool process exit in the middle of its
attempt, and the pool's own SIGTERM after it made each one log "exited with exitcode 70" as an error.
Whatever still runs after MAGEBENCH_WORKER_STOP_GRACE_SECONDS (a model call that hangs) is handed
back by the main process, and a pool process that has not ended a few seconds later is killed. A
handed-back attempt waits for another worker; the try that was stopped can no longer write
(engine._owned), so nothing is scored twice.
"""
from __future__ import annotations

import contextlib
import logging
import multiprocessing
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

STOPPED_KIND = "worker_stopped"
STOPPED_MESSAGE = "the worker running this attempt was stopped; queued again"

#: How long pool processes get to end by themselves, after the grace, before any still there is killed.
STRAGGLER_SECONDS = 4.0

#: Set when this worker stops. A worker's main process replaces it, before its pool forks, with an
#: event its pool processes share (``on_worker_init``); elsewhere (a test, a command) it is this one's own.
_stopping: Any = threading.Event()
_pools: dict[str, Any] = {}
_started: set[str] = set()


def stop_requested() -> bool:
    """Whether this process's worker is stopping (checked by a running attempt between its steps)."""
    return _stopping.is_set()


def on_worker_init(**_: Any) -> None:
    """celery's worker_init, in the main process before its pool starts: every pool process it forks,
    and any it forks later to replace one, reads this process's stop."""
    global _stopping
    _stopping = multiprocessing.get_context("fork").Event()


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
    # The pool processes end by themselves once their tasks have returned (exit code 0, nothing
    # logged): killing one on its way out leaves the pool waiting for it for ever, and on a busy
    # machine an idle one can take longer than the straggler wait to end. Only when an attempt was
    # handed back can one still be there because it is stuck in a call that does not return (its
    # attempt is someone else's now); with none handed back, none is killed.
    if handed:
        _send(_outliving(pids, STRAGGLER_SECONDS), signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether the process still runs (one that has exited but is not reaped yet does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not os.path.isdir("/proc")  # no /proc to tell a zombie: taken as alive only without one


def _outliving(pids: list[int], seconds: float) -> list[int]:
    """Those of ``pids`` still running after waiting up to ``seconds`` for them to end."""
    ends = time.monotonic() + seconds
    alive = [pid for pid in pids if _alive(pid)]
    while alive and time.monotonic() < ends:
        time.sleep(0.1)
        alive = [pid for pid in alive if _alive(pid)]
    return alive


def on_worker_shutting_down(sender: Any = None, **_: Any) -> None:
    """celery's worker_shutting_down (SIGTERM, SIGINT or SIGQUIT), in the main process's signal handler."""
    hostname = str(sender or "")
    if hostname in _started:
        return
    _started.add(hostname)
    pids = _pool_pids(hostname)
    _stopping.set()
    threading.Thread(target=_finish_stop, args=(hostname, pids), name="magebench-worker-stop",
                     daemon=True).start()
