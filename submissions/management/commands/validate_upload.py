from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from evaluators.base import FLOWS
from leaderboard.models import Scenario
from leaderboard.selectors import default_suite
from submissions.uploads import UploadError, parse_upload


class Command(BaseCommand):
    help = ("Check an upload of model outputs (zip of the official output directory, or JSONL) the way the "
            "site does, and list every problem. Scenarios come from the database, or from --scenarios-file "
            "(one key per line) to work without one.")
    # Checking a file needs neither the URL configuration nor the rest of the site to be in order.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="the .zip or .jsonl file")
        parser.add_argument("--env", required=True, help="environment slug: sokoban, football, webui")
        parser.add_argument("--flow", required=True, choices=FLOWS)
        parser.add_argument("--subset", default="full", choices=("mini", "full"))
        parser.add_argument("--suite", help="scenario suite (default: the environment's default suite)")
        parser.add_argument("--scenarios-file", help="valid scenario keys, one per line (no database needed)")
        parser.add_argument("--max-repeats", type=int, help="refuse repeats numbered this or higher")

    def handle(self, *args, file: str, env: str, flow: str, subset: str, suite: str | None,
               scenarios_file: str | None, max_repeats: int | None, **options) -> None:
        try:
            data = Path(file).read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror or exc}") from None
        scenarios = self._scenarios(env=env, subset=subset, suite=suite, scenarios_file=scenarios_file)
        if not scenarios:
            raise CommandError(f"no scenarios known for {env} (subset {subset})")
        try:
            runs = parse_upload(data, env=env, flow=flow, scenarios=scenarios, max_repeats=max_repeats)
        except UploadError as exc:
            for problem in exc.problems:
                self.stderr.write(str(problem))
            raise CommandError(f"{len(exc.problems)} problem(s) found in {file}") from None
        repeats = ", ".join(str(repeat) for repeat in sorted({run.repeat for run in runs}))
        self.stdout.write(f"OK: {len(runs)} runs (scenarios: {len({run.scenario for run in runs})}, "
                          f"repeats: {repeats})")

    @staticmethod
    def _scenarios(*, env: str, subset: str, suite: str | None, scenarios_file: str | None) -> set[str]:
        if scenarios_file:
            try:
                lines = Path(scenarios_file).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"cannot read {scenarios_file}: {exc}") from None
            return {line.strip() for line in lines if line.strip()}
        try:
            queryset = Scenario.objects.filter(environment_id=env, suite=suite or default_suite(env),
                                               **Scenario.subset_filter(subset))
            return set(queryset.values_list("key", flat=True))
        except DatabaseError as exc:
            raise CommandError(f"cannot read the scenarios from the database ({exc}); "
                               f"give them with --scenarios-file") from None
