from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from submissions.client_wheel import WheelBuildFailed, build_client_wheel, pinned_digest


class Command(BaseCommand):
    help = ("Build the command-line client's wheel the site serves, with its sha256 beside it, into "
            "MAGEBENCH_CLIENT_WHEEL_DIR (kept when the client's files have not changed since the last build).")

    def handle(self, *args, **options) -> None:
        try:
            path = build_client_wheel()
        except WheelBuildFailed as exc:
            raise CommandError(f"pip could not build the client's wheel:\n{exc}") from exc
        self.stdout.write(f"{path} sha256={pinned_digest()}")
