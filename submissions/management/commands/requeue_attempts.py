from __future__ import annotations

from django.core.management.base import BaseCommand
from django.db import transaction

from submissions.watchdog import attempts_requeue_stalled


class Command(BaseCommand):
    help = ("Queue again attempts that no worker is running: running ones whose heartbeat is older than "
            "--stalled-after seconds, and every waiting one. Safe to repeat: attempts are claimed atomically.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--stalled-after", type=float, default=600.0)

    def handle(self, *args, stalled_after: float, **options) -> None:
        with transaction.atomic():
            counts = attempts_requeue_stalled(stalled_after_seconds=stalled_after)
        self.stdout.write(f"{counts['stalled']} stalled attempt(s) released, {counts['failed']} failed after their "
                          f"last try, {counts['queued']} attempt(s) queued")
