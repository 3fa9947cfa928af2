"""How many attempts one worker runs at once: enough to keep its cores busy while models think,
no more than its memory budget holds.

A worker process plays one attempt at a time and waits through each of its model calls, so a
worker runs several processes per core (its plug-ins' ``attempts_per_core``). Each process holds
one attempt's engine or browser, so their number is also bounded by the memory budget
(``MAGEBENCH_WORKER_MEMORY_MB``) over the largest ``attempt_memory_mb`` among the environments the
worker's queues serve; a process that grows past one and a half times that is replaced after its
attempt (Celery's ``--max-memory-per-child``).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from evaluators.base import all_plugins
from submissions.selectors import queue_for

#: A process above this share of its attempt's memory is replaced after the attempt.
GROWTH_ALLOWED = 1.5


@dataclass(frozen=True)
class WorkerSizing:
    queues: tuple[str, ...]
    cores: int
    attempts_per_core: int
    attempt_memory_mb: int
    memory_budget_mb: int
    concurrency: int

    @property
    def max_memory_per_child_kb(self) -> int:
        return int(self.attempt_memory_mb * GROWTH_ALLOWED * 1024)

    def describe(self) -> str:
        return (f"{self.concurrency} attempts at once on {', '.join(self.queues)}: {self.cores} core(s) × "
                f"{self.attempts_per_core} per core, within {self.memory_budget_mb} MiB at "
                f"{self.attempt_memory_mb} MiB an attempt")


def machine_memory_mb() -> int:
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 20)


def worker_sizing(queues: Sequence[str], *, cores: int | None = None, memory_budget_mb: int | None = None,
                  in_flight: int | None = None) -> WorkerSizing:
    """The sizing of a worker reading ``queues`` (``in_flight`` fixes the number, as
    MAGEBENCH_WORKER_IN_FLIGHT does; the memory budget still bounds it)."""
    served = [plugin for plugin in all_plugins() if queue_for(plugin.slug) in queues]
    cores = cores or os.cpu_count() or 1
    per_core = min((plugin.attempts_per_core for plugin in served), default=1)
    memory = max((plugin.attempt_memory_mb for plugin in served), default=200)
    budget = memory_budget_mb or settings.MAGEBENCH_WORKER_MEMORY_MB or machine_memory_mb() // 2
    wanted = in_flight or settings.MAGEBENCH_WORKER_IN_FLIGHT or cores * per_core
    return WorkerSizing(queues=tuple(sorted(queues)), cores=cores, attempts_per_core=per_core,
                        attempt_memory_mb=memory, memory_budget_mb=budget,
                        concurrency=max(1, min(wanted, budget // memory)))
