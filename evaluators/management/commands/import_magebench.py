from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluators.base import ResourceError
from leaderboard.services import scenarios_import


class Command(BaseCommand):
    help = ("Import scenarios from a MageBench checkout or its resources/ directory (idempotent). "
            "Sokoban .pkl files are unpickled: only point this at files you trust.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--suite", default="official",
                            help="scenario suite name: 'official' for MageBench's own resources")
        parser.add_argument("--env", action="append", dest="envs", help="only this environment (repeatable)")
        parser.add_argument("--no-verify", action="store_true", help="skip recomputing upper bounds")

    def handle(self, *args, path: Path, suite: str, envs: list[str] | None, no_verify: bool, **options) -> None:
        try:
            report = scenarios_import(path=path, suite=suite, envs=envs, verify=not no_verify)
        except (ResourceError, KeyError) as exc:
            raise CommandError(str(exc)) from None
        for line in report.lines():
            self.stdout.write(line)
