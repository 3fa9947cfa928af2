from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from catalogue.models import Scenario
from evaluators.agents.replay import RecordedModel
from evaluators.base import FLOWS
from evaluators.runner import effective_settings, run_attempt
from submissions.engine import scenario_spec


def read_replies(path: Path) -> list[str]:
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"cannot read {path}: {exc}") from None
    if path.suffix == ".json":
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path} is not valid JSON: {exc}") from None
        if isinstance(value, str):
            return [value]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
        raise CommandError(f"{path} must hold a JSON string or a list of strings (one reply per model call)")
    return [raw]


class Command(BaseCommand):
    help = ("Score saved model replies on one scenario offline (no endpoint, no queue) and print JSON. "
            "Global takes one reply; Online takes a JSON list with one reply per decision.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--scenario", required=True, help="scenario key, as the official resources name it")
        parser.add_argument("--flow", required=True, choices=FLOWS)
        parser.add_argument("--reply", required=True, type=Path, help="a text file, or .json (string or list)")
        parser.add_argument("--env", help="environment slug when the key is ambiguous")
        parser.add_argument("--suite", help="scenario suite when the key is ambiguous")
        parser.add_argument("--out", type=Path, help="keep the trajectory in this folder")

    def handle(self, *args, scenario: str, flow: str, reply: Path, env: str | None, suite: str | None,
               out: Path | None, **options) -> None:
        matches = Scenario.objects.filter(key=scenario)
        if env:
            matches = matches.filter(environment_id=env)
        if suite:
            matches = matches.filter(suite=suite)
        found = list(matches[:2])
        if not found:
            raise CommandError(f"no scenario {scenario!r}; import scenarios first (manage.py import_magebench)")
        if len(found) > 1:
            raise CommandError(f"{scenario!r} exists in several suites or environments; add --env/--suite")
        target = found[0]
        replies = read_replies(reply)
        # Each saved reply is exactly one model call: no regeneration requests, one decision per reply.
        overrides: dict[str, Any] = {"parse_retries": 0}
        if flow == "online":
            overrides["max_loop"] = len(replies)
        settings = effective_settings(target.environment_id, flow, overrides)
        directory = out or Path(tempfile.mkdtemp(prefix="magebench-score-"))
        result = run_attempt(scenario=scenario_spec(target), flow=flow, settings=settings,
                             model=RecordedModel(replies), out_dir=directory)
        trajectory = json.loads((directory / "trajectory.json").read_text())
        self.stdout.write(json.dumps({
            "env": target.environment_id,
            "scenario": target.key,
            "flow": flow,
            "score": result.score,
            "outcome": result.outcome,
            "steps": result.steps,
            "actions": [step["action"] for step in trajectory["steps"]],
            "parsed": [call.get("parsed", []) for call in trajectory["calls"]],
            "parse_errors": [call.get("parse_error") for call in trajectory["calls"] if call.get("parse_error")],
            "invalid_action": result.diagnostics.invalid_action,
            "repeating_action": result.diagnostics.repeating_action,
            "diagnostics": result.diagnostics.as_dict(),
            "details": result.details,
            "trajectory": str(directory) if out else None,
        }, indent=2))
