"""``manage.py run_worker``: a Celery worker sized to run several attempts at once."""
from __future__ import annotations

import os
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from submissions.worker_sizing import worker_sizing


class Command(BaseCommand):
    help = ("Start a Celery worker for these queues that runs as many attempts at once as keep its cores busy "
            "while the models think, within its memory budget (MAGEBENCH_WORKER_IN_FLIGHT, "
            "MAGEBENCH_WORKER_MEMORY_MB). Arguments after -- go to Celery.")

    def add_arguments(self, parser: Any) -> None:
        queues = [queue.name for queue in settings.CELERY_TASK_QUEUES]
        parser.add_argument("-Q", "--queues", default=",".join(queues),
                            help=f"comma-separated queues to read (default: {','.join(queues)})")
        parser.add_argument("--concurrency", type=int, default=None,
                            help="attempts at once (default: sized from the cores and the memory budget)")
        parser.add_argument("--loglevel", default="INFO")
        parser.add_argument("--dry-run", action="store_true", help="print the sizing and the command, start nothing")
        parser.add_argument("celery_args", nargs="*", help="further arguments for celery worker (after --)")

    def handle(self, *args: Any, queues: str, concurrency: int | None, loglevel: str, dry_run: bool,
               celery_args: list[str], **options: Any) -> None:
        names = [name.strip() for name in queues.split(",") if name.strip()]
        known = {queue.name for queue in settings.CELERY_TASK_QUEUES} | set(settings.MAGEBENCH_QUEUE_ROUTES.values())
        unknown = sorted(set(names) - known)
        if not names or unknown:
            raise CommandError(f"unknown queue(s) {', '.join(unknown) or '(none given)'}; "
                               f"known: {', '.join(sorted(known))}")
        if concurrency is not None and concurrency < 1:
            raise CommandError("--concurrency must be at least 1")
        sizing = worker_sizing(names, in_flight=concurrency)
        argv = [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", ",".join(names),
                f"--concurrency={sizing.concurrency}", f"--max-memory-per-child={sizing.max_memory_per_child_kb}",
                f"--loglevel={loglevel}", *celery_args]
        self.stderr.write(f"run_worker: {sizing.describe()}")
        if dry_run:
            self.stdout.write(" ".join(argv))
            return
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, argv)
