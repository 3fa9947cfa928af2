from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from evaluators.base import ResourceError
from leaderboard.services import scenarios_import

WEBUI = "webui"


class Command(BaseCommand):
    help = ("Import scenarios from a MageBench checkout or its resources/ directory (idempotent). "
            "Sokoban .pkl files are unpickled: only point this at files you trust. Every WebUI page is "
            "then run once (initial state and scripted actions, against a perfect copy of itself) and "
            "pages that cannot be evaluated as intended are flagged on the scenario and in this report.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--suite", default="official",
                            help="scenario suite name: 'official' for MageBench's own resources")
        parser.add_argument("--env", action="append", dest="envs", help="only this environment (repeatable)")
        parser.add_argument("--no-verify", action="store_true", help="skip recomputing upper bounds")
        parser.add_argument("--no-page-check", action="store_true",
                            help="skip running the WebUI pages (faster; earlier checks of unchanged pages stay)")
        parser.add_argument("--recheck-pages", action="store_true",
                            help="run every WebUI page again, even unchanged pages already checked")
        parser.add_argument("--page-check-workers", type=int, default=2,
                            help="WebUI renders at a time during the page check (each page needs two)")

    def handle(self, *args: Any, path: Path, suite: str, envs: list[str] | None, no_verify: bool,
               no_page_check: bool, recheck_pages: bool, page_check_workers: int, **options: Any) -> None:
        try:
            report = scenarios_import(path=path, suite=suite, envs=envs, verify=not no_verify)
        except (ResourceError, KeyError) as exc:
            raise CommandError(str(exc)) from None
        for line in report.lines():
            self.stdout.write(line)
        webui_imported = any(WEBUI in counts for counts in (report.created, report.updated, report.unchanged))
        if webui_imported and not no_page_check:
            for line in check_webui_pages(suite, workers=page_check_workers, recheck=recheck_pages,
                                          progress=self._progress):
                self.stdout.write(line)

    def _progress(self, text: str) -> None:
        self.stderr.write(text)


def check_webui_pages(suite: str, *, workers: int = 2, recheck: bool = False,
                      progress: Any = None) -> list[str]:
    """Run the page check on the suite's WebUI scenarios and store each result with its scenario:
    the full check in ``data["page_check"]``, "ok"/"flagged" in ``tags["page_check"]``.

    A page keeps an earlier check when its content and the check itself are unchanged.
    """
    from evaluators.webui.page_check import CHECK_VERSION, PageCheck, check_pages, summary_lines
    from leaderboard.models import Scenario

    scenarios = {s.key: s for s in Scenario.objects.filter(environment_id=WEBUI, suite=suite).order_by("key")}
    kept: list[PageCheck] = []
    todo: list[tuple[str, Path, str]] = []
    for key, scenario in scenarios.items():
        stored = (scenario.data or {}).get("page_check")
        if (not recheck and isinstance(stored, dict) and stored.get("content_hash") == scenario.content_hash
                and stored.get("version") == CHECK_VERSION and scenario.tags.get("page_check")):
            kept.append(PageCheck.from_dict(stored))
        else:
            todo.append((key, Path(settings.SCENARIO_ROOT) / scenario.resource_path, scenario.content_hash))

    def store(check: PageCheck) -> None:
        scenario = scenarios[check.page]
        scenario.data = {**(scenario.data or {}), "page_check": check.as_dict()}
        scenario.tags = {**(scenario.tags or {}), "page_check": check.status}
        scenario.save(update_fields=["data", "tags"])
        if progress is not None:
            progress(f"webui page check: {check.page} {check.status} ({check.seconds:.1f} s)")

    checked = check_pages(todo, workers=workers, progress=store)
    order = {key: index for index, key in enumerate(scenarios)}
    return summary_lines(sorted(kept + checked, key=lambda c: order[c.page]), reused=len(kept))
