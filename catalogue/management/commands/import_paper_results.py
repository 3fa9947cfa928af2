from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from catalogue.paper_results import PAPER_URL, PaperResultsError, paper_results_import, paper_results_load


class Command(BaseCommand):
    help = ("Show the MageBench paper's results (Tables 1, 2 and 4) as reported rows on the official suite's "
            f"boards, marked as reported and never ranked, linking to {PAPER_URL}. Idempotent: importing again "
            "updates the rows. PATH is a JSON file in the form of fixtures/paper-results.json (the default).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", nargs="?", type=Path,
                            default=Path(settings.BASE_DIR) / "fixtures" / "paper-results.json")

    def handle(self, *args: Any, path: Path, **options: Any) -> None:
        try:
            results = paper_results_load(path)
        except PaperResultsError as error:
            raise CommandError(str(error)) from None
        report = paper_results_import(results)
        skipped = f", {report.skipped} skipped (environment not installed)" if report.skipped else ""
        self.stdout.write(f"paper results from {path}: {report.created} created, {report.updated} updated, "
                          f"{report.unchanged} unchanged{skipped}")
