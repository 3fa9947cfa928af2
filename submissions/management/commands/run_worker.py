"""``manage.py run_worker``: a Celery worker sized to run several attempts at once, or one per pool
that no other service serves (``--other-pools``)."""
from __future__ import annotations

import os
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from submissions.worker_pools import declared_pools, idle, supervise
from submissions.worker_sizing import worker_sizing


class Command(BaseCommand):
    help = ("Start a Celery worker for these queues that runs as many attempts at once as keep its cores busy "
            "while the models think, within its memory budget (MAGEBENCH_WORKER_IN_FLIGHT, "
            "MAGEBENCH_WORKER_MEMORY_MB). With --other-pools, one such worker per declared pool not named "
            "by --except. Arguments after -- go to Celery.")

    def add_arguments(self, parser: Any) -> None:
        queues = [queue.name for queue in settings.CELERY_TASK_QUEUES]
        parser.add_argument("-Q", "--queues", default=",".join(queues),
                            help=f"comma-separated queues to read (default: {','.join(queues)})")
        parser.add_argument("--other-pools", action="store_true",
                            help="serve every declared pool (the default queue and each environment's kind of work) "
                                 "not named by --except, one Celery worker each (hostname QUEUE@%%h)")
        parser.add_argument("--except", dest="excepted", default="",
                            help="with --other-pools: comma-separated queues other services serve")
        parser.add_argument("--network-namespaces", action="store_true",
                            help="with --other-pools: this container may create network namespaces, so pools "
                                 "whose environments need them are served too")
        parser.add_argument("--host", default="%h",
                            help="with --other-pools: the host part of each worker's name (default: the machine's)")
        parser.add_argument("--concurrency", type=int, default=None,
                            help="attempts at once (default: sized from the cores and the memory budget)")
        parser.add_argument("--loglevel", default="INFO")
        parser.add_argument("--dry-run", action="store_true", help="print the sizing and the command, start nothing")
        parser.add_argument("celery_args", nargs="*", help="further arguments for celery worker (after --)")

    def handle(self, *args: Any, queues: str, other_pools: bool, excepted: str, network_namespaces: bool, host: str,
               concurrency: int | None, loglevel: str, dry_run: bool, celery_args: list[str], **options: Any) -> None:
        if concurrency is not None and concurrency < 1:
            raise CommandError("--concurrency must be at least 1")
        if other_pools:
            self._other_pools(_names(excepted), network_namespaces, host, concurrency, loglevel, dry_run, celery_args)
            return
        names = _names(queues)
        _check_known(names)
        argv = self._worker(names, concurrency, loglevel, celery_args)
        if dry_run:
            self.stdout.write(" ".join(argv))
            return
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, argv)

    def _worker(self, names: list[str], concurrency: int | None, loglevel: str, celery_args: list[str]) -> list[str]:
        sizing = worker_sizing(names, in_flight=concurrency)
        self.stderr.write(f"run_worker: {sizing.describe()}")
        return [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", ",".join(names),
                f"--concurrency={sizing.concurrency}", f"--max-memory-per-child={sizing.max_memory_per_child_kb}",
                f"--loglevel={loglevel}", *celery_args]

    def _other_pools(self, excepted: list[str], network_namespaces: bool, host: str, concurrency: int | None,
                     loglevel: str, dry_run: bool, celery_args: list[str]) -> None:
        pools = [pool for pool in declared_pools() if pool.queue not in excepted]
        for pool in pools:
            if pool.network_namespaces and not network_namespaces:
                # Its attempts would fail in a container that forbids namespaces: the queue page shows
                # the queue unread instead, and the operator gives it a service that allows them.
                self.stderr.write(f"run_worker: not serving {pool.queue} ({', '.join(pool.environments)}): it "
                                  "needs network namespaces, which this container is not said to allow "
                                  "(--network-namespaces)")
        served = [pool for pool in pools if network_namespaces or not pool.network_namespaces]
        commands = [self._worker([pool.queue], concurrency, loglevel, [*celery_args, f"--hostname={pool.queue}@{host}"])
                    for pool in served]
        if dry_run:
            self.stdout.write("\n".join(" ".join(argv) for argv in commands))
            return
        sys.stdout.flush()
        sys.stderr.flush()
        if not commands:
            self.stderr.write("run_worker: every declared pool is served by another service; waiting")
            sys.exit(idle(settings.MAGEBENCH_WORKER_BEAT_SECONDS))
        sys.exit(supervise(commands))


def _names(queues: str) -> list[str]:
    return [name.strip() for name in queues.split(",") if name.strip()]


def _check_known(names: list[str]) -> None:
    known = {queue.name for queue in settings.CELERY_TASK_QUEUES} | set(settings.MAGEBENCH_QUEUE_ROUTES.values())
    unknown = sorted(set(names) - known)
    if not names or unknown:
        raise CommandError(f"unknown queue(s) {', '.join(unknown) or '(none given)'}; "
                           f"known: {', '.join(sorted(known))}")
