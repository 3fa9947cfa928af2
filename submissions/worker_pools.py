"""The worker pools a deployment runs, read from the registry: one per queue that work is sent to.

The default queue ("light": the site's own tasks and the environments that declare no kind of work)
has a pool, and so has each queue the configured environments' attempts go to (their plug-ins'
``queue``, as MAGEBENCH_QUEUE_ROUTES routes it). ``manage.py run_worker --other-pools`` serves every
pool that no dedicated service does, one Celery worker each, so that an environment declaring a new
kind of work is served without a new service in the compose files.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from types import FrameType

from django.conf import settings

from config.heartbeat import heartbeat_touch
from evaluators.base import all_plugins
from submissions.selectors import queue_for


@dataclass(frozen=True)
class Pool:
    queue: str
    #: The environments whose attempts it runs, by slug.
    environments: tuple[str, ...]
    #: One of them creates network namespaces (``WorkerPool.network_namespaces``).
    network_namespaces: bool


def declared_pools() -> list[Pool]:
    """Every pool: the default queue's first, then the others by name."""
    default = settings.CELERY_TASK_DEFAULT_QUEUE
    served: dict[str, list[str]] = {default: []}
    namespaces: set[str] = set()
    for plugin in all_plugins():
        queue = queue_for(plugin.slug)
        served.setdefault(queue, []).append(plugin.slug)
        if plugin.worker_pool.network_namespaces:
            namespaces.add(queue)
    order = [default, *sorted(set(served) - {default})]
    return [Pool(queue=queue, environments=tuple(served[queue]), network_namespaces=queue in namespaces)
            for queue in order]


def supervise(commands: Sequence[Sequence[str]]) -> int:
    """Run the commands side by side until the first one ends, then stop the others and return its
    exit status: the container's restart policy then starts them all again.

    SIGTERM (``docker stop``) is passed on to each; SIGINT is not, as a terminal's Ctrl-C already
    reaches every process of the group and a second one would make Celery stop cold.
    """
    children = [subprocess.Popen(list(command)) for command in commands]

    def forward(signum: int, frame: FrameType | None) -> None:
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    handlers = signal.signal(signal.SIGTERM, forward), signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        pid, status = os.wait()
        for child in children:
            if child.pid != pid and child.poll() is None:
                child.terminate()
        for child in children:
            if child.pid != pid:
                child.wait()
    finally:
        for signum, handler in zip((signal.SIGTERM, signal.SIGINT), handlers):
            if handler is not None:  # None: set outside Python, and not ours to put back
                signal.signal(signum, handler)
    return os.waitstatus_to_exitcode(status)


def idle(every: float) -> int:
    """Keep the heartbeat file fresh until SIGTERM or SIGINT: a service with no pool to serve is
    doing all it should, and its health check says so."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    heartbeat_touch(settings.MAGEBENCH_WORKER_HEARTBEAT_FILE)
    while not stop.wait(every):
        heartbeat_touch(settings.MAGEBENCH_WORKER_HEARTBEAT_FILE)
    return 0
