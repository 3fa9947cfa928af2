"""Writes for the benchmark catalogue: environments and scenario imports."""
from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalogue.changes import results_changed
from catalogue.models import Environment, Scenario, SuitePromptSet
from catalogue.prompt_sets import prompt_set_current, prompt_set_texts
from evaluators.agents.checkout import OfficialCheckout
from evaluators.base import (
    ImportedScenario,
    PromptSet,
    ResourceError,
    ScenarioCheck,
    StoredScenario,
    all_plugins,
    get_plugin,
)
from evaluators.checkout_files import link_out_of, links_out_of


def environment_ensure(slug: str) -> Environment:
    plugin = get_plugin(slug)
    environment, _ = Environment.objects.update_or_create(
        slug=plugin.slug,
        defaults={"title": plugin.title, "score_label": plugin.score_label, "position": plugin.position},
    )
    results_changed()
    return environment


@dataclass
class ImportReport:
    suite: str
    created: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)
    unchanged: dict[str, int] = field(default_factory=dict)
    mini: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: One line per prompt set read from an official checkout (none without one).
    prompts: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        for env in sorted(set(self.created) | set(self.updated) | set(self.unchanged)):
            out.append(
                f"{env}: {self.created.get(env, 0)} created, {self.updated.get(env, 0)} updated, "
                f"{self.unchanged.get(env, 0)} unchanged ({self.mini.get(env, 0)} in mini) [suite {self.suite}]"
            )
        out.extend(self.prompts or [f"prompts: the platform's own wording [suite {self.suite}] "
                                    "(no official checkout given)"])
        out.extend(f"warning: {w}" for w in self.warnings)
        return out


def resources_dir(path: Path) -> Path:
    """Accept a MageBench checkout or its resources/ directory."""
    path = path.expanduser().resolve()
    if not path.is_dir():
        raise ResourceError(f"{path} is not a directory")
    if (path / "resources").is_dir():
        path = path / "resources"
    if not any(path.glob("*_all.json")):
        raise ResourceError(f"{path} has no *_all.json scenario list: is it a MageBench resources/ directory?")
    return path


def scenarios_import(*, path: Path, suite: str = "official", envs: list[str] | None = None,
                     verify: bool = True, official_code: Path | None = None) -> ImportReport:
    """Import every environment's scenarios found under ``path``; idempotent by content hash.

    The official prompts come with them from ``official_code`` (an official checkout), or from the
    checkout ``path`` is the resources of; without one the suite keeps the platform's wording.
    Nothing is written unless every environment's files (and the checkout's) read cleanly.
    """
    resources = resources_dir(path)
    _links_inside(path.expanduser().resolve(), resources)
    checkout = OfficialCheckout(official_code.expanduser().resolve()) if official_code else \
        OfficialCheckout.beside(resources)
    report = ImportReport(suite=suite)
    plugins = [p for p in all_plugins() if envs is None or p.slug in envs]
    found: dict[str, list[ImportedScenario]] = {}
    for plugin in plugins:
        if not (resources / f"{plugin.title}_all.json").exists():
            if envs is not None:
                raise ResourceError(f"{resources} has no {plugin.title}_all.json")
            continue
        found[plugin.slug] = plugin.discover(resources, verify=verify)
    if not found:
        raise ResourceError(f"{resources} holds no scenarios of a known environment")
    prompt_sets = _official_prompt_sets(checkout, list(found)) if checkout is not None else {}
    with transaction.atomic():
        for slug, items in found.items():
            _store(slug, suite, items, report)
        if checkout is not None:
            report.prompts = _prompt_sets_store(suite, prompt_sets, checkout)
        results_changed()  # boards count their scenarios, and an official import changes the default suite
    return report


def _links_inside(root: Path, resources: Path) -> None:
    """Refuses, naming it, a symbolic link under ``resources`` that leads out of ``root`` (the folder the
    operator named): its file would be imported, stored and shown as a scenario's."""
    escape = link_out_of(root, resources)
    escapes = [escape] if escape is not None else links_out_of(root, resources)
    if escapes:
        link, target = escapes[0]
        more = f" ({len(escapes) - 1} more such link(s))" if len(escapes) > 1 else ""
        raise ResourceError(f"{link}: a symbolic link that leads out of {root} (to {target}){more}; "
                            "only the checkout's own files are imported, and nothing was")


def _official_prompt_sets(checkout: OfficialCheckout, envs: list[str]) -> dict[tuple[str, str], PromptSet]:
    """Every official prompt set of these environments, read before anything is written (a checkout
    whose flows changed shape raises CheckoutError, a ResourceError, and nothing is stored)."""
    found: dict[tuple[str, str], PromptSet] = {}
    for slug in envs:
        plugin = get_plugin(slug)
        for flow in plugin.flows:
            prompts = plugin.official_prompts(checkout, flow)
            if prompts is not None:
                found[(slug, flow)] = prompts
    return found


def _prompt_sets_store(suite: str, found: dict[tuple[str, str], PromptSet], checkout: OfficialCheckout) -> list[str]:
    lines = []
    for (slug, flow), prompts in sorted(found.items()):
        row, created = SuitePromptSet.objects.get_or_create(
            environment_id=slug, suite=suite, flow=flow, version=prompts.version,
            defaults={"source": prompts.source, "texts": prompt_set_texts(prompts), "source_files": checkout.files(),
                      "checkout_digest": checkout.digest()})
        state = "new" if created else "unchanged"
        if not created and prompt_set_current(slug, suite, flow).version != row.version:
            # Importing an earlier checkout again makes its texts the ones new submissions run with.
            SuitePromptSet.objects.filter(pk=row.pk).update(imported_at=timezone.now())
            state = "current again"
        lines.append(f"prompts: {slug} {flow}: official {prompts.version} ({state}) [suite {suite}]")
    return lines


def _store(slug: str, suite: str, items: list[ImportedScenario], report: ImportReport) -> None:
    environment = environment_ensure(slug)
    target_dir = Path(settings.SCENARIO_ROOT) / slug / suite
    target_dir.mkdir(parents=True, exist_ok=True)
    for item in items:
        report.warnings.extend(item.warnings)
        resource_path = ""
        if item.resource_file is not None:
            # Stored under the content hash so an updated level never overwrites a file in use.
            destination = target_dir / f"{item.content_hash[:16]}-{item.resource_file.name}"
            if item.resource_file.is_dir():
                if not destination.exists():
                    shutil.copytree(item.resource_file, destination)
            elif not destination.exists():
                shutil.copy2(item.resource_file, destination)
            resource_path = str(destination.relative_to(settings.SCENARIO_ROOT))
        existing = Scenario.objects.filter(environment=environment, suite=suite, key=item.key).first()
        fields = dict(in_mini=item.in_mini, in_full=item.in_full, data=item.data, tags=item.tags,
                      content_hash=item.content_hash, resource_path=resource_path)
        if existing is None:
            Scenario.objects.create(environment=environment, suite=suite, key=item.key, **fields)
            report.created[slug] = report.created.get(slug, 0) + 1
        elif existing.content_hash == item.content_hash and existing.in_mini == item.in_mini:
            report.unchanged[slug] = report.unchanged.get(slug, 0) + 1
        else:
            for name, value in fields.items():
                setattr(existing, name, value)
            existing.save()
            report.updated[slug] = report.updated.get(slug, 0) + 1
        if item.in_mini:
            report.mini[slug] = report.mini.get(slug, 0) + 1


def scenarios_check(*, env: str, suite: str, workers: int = 2, recheck: bool = False,
                    progress: Callable[[str], None] | None = None) -> list[str]:
    """Run the environment's import-time check on the suite's scenarios and store each result with
    its scenario (the record in ``data``, the status in ``tags``, under the check's name); returns
    the report's lines ([] for an environment without a check)."""
    plugin = get_plugin(env)
    name = plugin.scenario_check
    if name is None:
        return []
    scenarios = {s.key: s for s in Scenario.objects.filter(environment_id=env, suite=suite).order_by("key")}

    def store(check: ScenarioCheck) -> None:
        scenario = scenarios[check.key]
        scenario.data = {**(scenario.data or {}), name: check.record}
        scenario.tags = {**(scenario.tags or {}), name: check.status}
        scenario.save(update_fields=["data", "tags"])
        if progress is not None and check.message:
            progress(check.message)

    stored = [StoredScenario(key=s.key, path=Path(settings.SCENARIO_ROOT) / s.resource_path,
                             content_hash=s.content_hash, data=s.data or {}, tags=s.tags or {})
              for s in scenarios.values()]
    try:
        return plugin.check_scenarios(stored, workers=workers, recheck=recheck, store=store)
    finally:
        results_changed()  # boards show which scenarios the check flagged
