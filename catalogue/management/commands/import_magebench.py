from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from catalogue.services import scenarios_check, scenarios_import
from evaluators.agents.official_source import CheckoutError
from evaluators.base import ResourceError, all_plugins


class Command(BaseCommand):
    help = ("Import scenarios from a MageBench checkout or its resources/ directory (idempotent). "
            "Resource files may be Python pickles, which run code when read: only point this at files you "
            "trust. An environment with an import check (its plug-in's scenario_check) then runs it on every "
            "imported scenario, and scenarios that cannot be evaluated as intended are flagged on the scenario "
            "and in this report. "
            "With an official checkout (--official-code, or PATH inside one) the official prompts are read "
            "from its Python files as data and become the suite's prompts.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--suite", default="official",
                            help="scenario suite name: 'official' for MageBench's own resources")
        parser.add_argument("--env", action="append", dest="envs", help="only this environment (repeatable)")
        parser.add_argument("--official-code", type=Path, metavar="CHECKOUT",
                            help="an official MageBench checkout to read the prompts from (read, never run); "
                                 "found by itself when PATH is a checkout or its resources/ folder")
        parser.add_argument("--no-verify", action="store_true", help="skip recomputing upper bounds")
        parser.add_argument("--no-page-check", action="store_true",
                            help="skip the environments' import checks (faster; earlier checks of unchanged "
                                 "scenarios stay)")
        parser.add_argument("--recheck-pages", action="store_true",
                            help="check every scenario again, even unchanged ones already checked")
        parser.add_argument("--page-check-workers", type=int, default=2,
                            help="checks at a time during the import checks")

    def handle(self, *args: Any, path: Path, suite: str, envs: list[str] | None, no_verify: bool,
               no_page_check: bool, recheck_pages: bool, page_check_workers: int, official_code: Path | None,
               **options: Any) -> None:
        try:
            report = scenarios_import(path=path, suite=suite, envs=envs, verify=not no_verify,
                                      official_code=official_code)
        except (ResourceError, CheckoutError, KeyError) as exc:
            raise CommandError(str(exc)) from None
        for line in report.lines():
            self.stdout.write(line)
        imported = {env for counts in (report.created, report.updated, report.unchanged) for env in counts}
        if no_page_check:
            return
        for plugin in all_plugins():
            if plugin.slug in imported and plugin.scenario_check:
                for line in scenarios_check(env=plugin.slug, suite=suite, workers=page_check_workers,
                                            recheck=recheck_pages, progress=self._progress):
                    self.stdout.write(line)

    def _progress(self, text: str) -> None:
        self.stderr.write(text)
