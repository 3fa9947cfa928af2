"""Where an environment's attempts run: the kind of work (its queue), what one attempt costs a
worker, and the settings an operator gives its workers."""
from __future__ import annotations

from typing import ClassVar

from evaluators.declarations import OperatorSettings, WorkerPool


class WorkerDeclarations:
    #: The kind of work an attempt is, which names its Celery queue ("browser", "engine"); None is
    #: the default queue (attempts that mostly wait on model calls). The settings may route a kind
    #: to another queue (MAGEBENCH_QUEUE_ROUTES).
    queue: ClassVar[str | None] = None
    #: What this environment's workers do, in the words of the queue page.
    queue_work: ClassVar[str] = ""
    #: The most memory one attempt takes in a worker process (its engine, browser or renderer
    #: included), in MiB: a worker runs as many attempts at once as its memory budget holds.
    attempt_memory_mb: ClassVar[int] = 200
    #: Attempts in flight per core that keep the core busy while their models think (an attempt
    #: mostly waits on model calls; one whose own work is heavier needs fewer to fill a core).
    attempts_per_core: ClassVar[int] = 4
    #: What its pool's processes need from the machine beyond their memory (network namespaces).
    worker_pool: ClassVar[WorkerPool] = WorkerPool()
    #: Settings an operator gives this environment through the process environment (limits of its
    #: workers), and the function their values are handed to as each process starts.
    operator_settings: ClassVar[OperatorSettings] = OperatorSettings()
