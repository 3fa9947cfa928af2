from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from catalogue.models import Scenario
from catalogue.selectors import suites_for
from evaluators.base import FLOWS, SUBSETS, ResourceError, ScenarioSpec, environment_slugs, get_plugin
from submissions.uploads import UploadedRun, UploadError, parse_upload


class Command(BaseCommand):
    help = ("Check an upload of model outputs (a zip of the official output directory, or JSONL) the way the "
            "site does, and list every problem; with --rescore, also score every run offline through the "
            "site's re-scoring code. Scenarios come from the database, from --resources (an official "
            "resources/ directory, no database needed) or from --scenarios-file (keys only, no re-scoring).")
    # Checking a file needs neither the URL configuration nor the rest of the site to be in order.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="the .zip or .jsonl file")
        parser.add_argument("--env", required=True, help="environment slug: " + ", ".join(environment_slugs()))
        parser.add_argument("--flow", required=True, choices=FLOWS)
        parser.add_argument("--subset", default="full", choices=SUBSETS)
        parser.add_argument("--suite", help="scenario suite in the database (needed when there are several)")
        parser.add_argument("--resources", type=Path,
                            help="read the scenarios from this MageBench checkout or resources/ directory")
        parser.add_argument("--scenarios-file", help="valid scenario keys, one per line (no database needed)")
        parser.add_argument("--max-repeats", type=int, help="refuse repeats numbered this or higher")
        parser.add_argument("--rescore", action="store_true",
                            help="replay every run and print the platform's score beside the reported one")
        parser.add_argument("--json", action="store_true", dest="as_json",
                            help="print one JSON object per run, one per line")
        parser.add_argument("--seed", type=int,
                            help="engine seed of every replayed run of a stochastic environment (default: a "
                                 "new one per run, as on the site)")
        parser.add_argument("--out", type=Path, help="keep the re-scored runs' trajectories in this folder")

    def handle(self, *args: Any, file: str, env: str, flow: str, subset: str, suite: str | None,
               resources: Path | None, scenarios_file: str | None, max_repeats: int | None, rescore: bool,
               as_json: bool, seed: int | None, out: Path | None, **options: Any) -> None:
        try:
            plugin = get_plugin(env)
        except KeyError as exc:
            raise CommandError(str(exc.args[0])) from None
        if flow not in plugin.flows:
            raise CommandError(f"{plugin.title} has no {flow} flow; choose {', '.join(plugin.flows)}")
        if sum(option is not None for option in (resources, scenarios_file, suite)) > 1:
            raise CommandError("give at most one of --suite, --resources and --scenarios-file")
        if rescore and scenarios_file:
            raise CommandError("--rescore needs the scenarios themselves: use the database or --resources")
        try:
            data = Path(file).read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror or exc}") from None
        if scenarios_file:
            specs: dict[str, ScenarioSpec | None] = dict.fromkeys(self._keys_from_file(scenarios_file))
            if not specs:
                raise CommandError(f"{scenarios_file} lists no scenario keys")
        elif resources is not None:
            specs = dict(self._from_resources(env=env, subset=subset, resources=resources))
        else:
            specs = dict(self._from_database(env=env, subset=subset, suite=suite))
        try:
            runs = parse_upload(data, env=env, flow=flow, scenarios=set(specs), max_repeats=max_repeats)
        except UploadError as exc:
            for problem in exc.problems:
                self.stderr.write(str(problem))
            raise CommandError(f"{len(exc.problems)} problem(s) found in {file}") from None
        if not rescore:
            if as_json:
                for run in runs:
                    self._print_json({"scenario": run.scenario, "repeat": run.repeat, "score": None,
                                      "reported": run.self_score, "agrees": None, "error": None})
                return
            repeats = ", ".join(str(repeat) for repeat in sorted({run.repeat for run in runs}))
            self.stdout.write(f"OK: {len(runs)} runs (scenarios: {len({run.scenario for run in runs})}, "
                              f"repeats: {repeats})")
            return
        self._rescore(runs, env=env, flow=flow, subset=subset, specs=specs, as_json=as_json, seed=seed, out=out)

    def _rescore(self, runs: list[UploadedRun], *, env: str, flow: str, subset: str,
                 specs: dict[str, ScenarioSpec | None], as_json: bool, seed: int | None, out: Path | None) -> None:
        from submissions.rescoring import rescore_runs, upload_settings

        settings = upload_settings(env, flow, subset=subset, overrides={"seed": seed} if seed is not None else None)
        scenarios = {key: spec for key, spec in specs.items() if spec is not None}
        failed = disagreeing = 0
        for rescored in rescore_runs(runs, env=env, flow=flow, scenarios=scenarios, settings=settings, out_root=out):
            failed += bool(rescored.error)
            disagreeing += rescored.agrees is False
            if as_json:
                self._print_json(rescored.as_dict())
                continue
            reported = "no reported score" if rescored.reported is None else f"reported {rescored.reported:g}"
            verdict = {True: ", agrees", False: ", DISAGREES", None: ""}[rescored.agrees]
            score = f"platform {rescored.score:g}" if rescored.score is not None else f"not scored: {rescored.error}"
            self.stdout.write(f"{rescored.scenario} r{rescored.repeat}: {score}; {reported}{verdict}")
        if not as_json:
            self.stdout.write(f"{len(runs)} runs re-scored: {disagreeing} disagree with their reported score, "
                              f"{failed} could not be scored")
        if failed:
            raise CommandError(f"{failed} run(s) could not be scored")

    def _print_json(self, value: dict[str, Any]) -> None:
        self.stdout.write(json.dumps(value, ensure_ascii=False))
        self.stdout.flush()

    @staticmethod
    def _keys_from_file(scenarios_file: str) -> list[str]:
        try:
            lines = Path(scenarios_file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {scenarios_file}: {exc}") from None
        return [line.strip() for line in lines if line.strip()]

    @staticmethod
    def _from_resources(*, env: str, subset: str, resources: Path) -> dict[str, ScenarioSpec]:
        from catalogue.services import resources_dir

        try:
            found = get_plugin(env).discover(resources_dir(Path(resources)), verify=False)
        except ResourceError as exc:
            raise CommandError(str(exc)) from None
        specs = {item.key: ScenarioSpec(env=env, key=item.key, data=item.data, resource_path=item.resource_file)
                 for item in found if (item.in_mini if subset == "mini" else item.in_full)}
        if not specs:
            raise CommandError(f"{resources} holds no {subset} scenarios of {env}")
        return specs

    @staticmethod
    def _from_database(*, env: str, subset: str, suite: str | None) -> dict[str, ScenarioSpec]:
        from submissions.engine import scenario_spec

        try:
            suites = suites_for(env)
            if suite is None:
                if len(suites) > 1:
                    raise CommandError(f"{env} has scenarios in several suites ({', '.join(suites)}); "
                                       f"choose one with --suite")
                if not suites:
                    raise CommandError(f"no scenarios of {env} are imported; run manage.py import_magebench, "
                                       f"or give --resources or --scenarios-file")
                suite = suites[0]
            queryset = Scenario.objects.filter(environment_id=env, suite=suite, **Scenario.subset_filter(subset))
            specs = {scenario.key: scenario_spec(scenario) for scenario in queryset}
        except DatabaseError as exc:
            raise CommandError(f"cannot read the scenarios from the database ({exc}); "
                               f"give them with --resources or --scenarios-file") from None
        if not specs:
            known = f"suites known for {env}: {', '.join(suites)}" if suites else f"no suite of {env} is imported"
            raise CommandError(f"no {subset} scenarios of {env} in the suite '{suite}' ({known})")
        return specs
