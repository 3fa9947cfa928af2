from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalogue.selectors import default_suite
from evaluators.base import SUBSETS, all_plugins, get_plugin
from evaluators.settings import EvaluationSettings
from submissions.models import Submission
from submissions.services import ModelSpec, SubmissionError, submission_create_endpoint

BASELINE_TEAM = "MageBench baselines"
#: name, what it does everywhere (the plug-ins' ``baseline_notes`` say what it does in each
#: environment), repeats (None: the flow's default)
AGENTS = {
    "idle": ("Idle agent", "replies with no action", 1),
    "random": ("Random agent", "uniformly random actions", None),
    "oracle": ("Oracle agent", "plays from the scenario's own answer", 1),
    "degraded": ("Degraded oracle", "the oracle's answer made worse", 1),
}


def _agent_help(agent: str) -> str:
    notes = [f"{plugin.title}: {plugin.baseline_notes[agent]}" for plugin in all_plugins()
             if agent in plugin.baseline_notes]
    return f"{agent}: {AGENTS[agent][1]}" + (f" ({'; '.join(notes)})" if notes else "")


class Command(BaseCommand):
    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # The notes come from the configured environments, which are loaded after this module is imported.
        self.help = ("Queue the platform's baseline agents (" + "; ".join(_agent_help(agent) for agent in AGENTS)
                     + "), served by serve_baseline_agent, on every flow of an environment. "
                     "Skips boards that already have that baseline, so it can run at every start.")
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser) -> None:
        parser.add_argument("--env", default="sokoban")
        parser.add_argument("--subset", action="append", dest="subsets", choices=SUBSETS)
        parser.add_argument("--suite")
        parser.add_argument("--agent", action="append", dest="agents", choices=sorted(AGENTS))
        parser.add_argument("--url", action="append", dest="urls", metavar="AGENT=URL", required=True,
                            help="where each agent is served, e.g. idle=http://127.0.0.1:8101/v1")
        parser.add_argument("--max-repeats", type=int, default=0, metavar="N",
                            help="run each baseline at most N times per scenario (0: the agent's own count or "
                                 "the flow's default); the submission records the repeats it ran")
        parser.add_argument("--allow-private-endpoint", action="store_true",
                            help="the agents are on a network you trust: let them be on private or loopback "
                                 "addresses that the address policy refuses for teams (never a metadata service)")

    def handle(self, *args, env: str, subsets: list[str] | None, suite: str | None, agents: list[str] | None,
               urls: list[str], allow_private_endpoint: bool = False, max_repeats: int = 0, **options) -> None:
        plugin = get_plugin(env)
        where = dict(item.split("=", 1) for item in urls if "=" in item)
        suite = suite or default_suite(env)
        unknown = sorted(set(where) - set(AGENTS))
        if unknown:
            raise CommandError(f"unknown baseline agent(s): {', '.join(unknown)}; known: {', '.join(sorted(AGENTS))}")
        chosen = agents or [a for a in sorted(where) if a in plugin.baseline_agents]
        missing = [agent for agent in chosen if agent not in where]
        if missing:
            raise CommandError(f"no URL given for the {', '.join(missing)} agent")
        # Subset-major order: every mini board fills before the slower full runs start.
        for subset in subsets or ["mini"]:
            for agent in chosen:
                name, description, repeats = AGENTS[agent]
                settings: dict[str, object] = {}
                # Stochastic episodes: every baseline runs the flow's default repeats there.
                if repeats and not plugin.stochastic:
                    settings["repeats"] = repeats
                if agent in plugin.text_only_baselines:
                    settings["observation_images"] = False
                # The team and the model are registered with their first submission, or not at all.
                model = ModelSpec(team=BASELINE_TEAM, name=name, metadata={"organisation": "MageBench Leaderboard"},
                                  is_baseline=True)
                for flow in plugin.flows:
                    chosen_settings = dict(settings)
                    if max_repeats > 0:
                        default = EvaluationSettings.from_mapping(settings, env, flow, subset=subset).repeats
                        chosen_settings["repeats"] = min(default, max_repeats)
                    exists = Submission.objects.filter(model__team__name=BASELINE_TEAM, model__name=name,
                                                       environment_id=env, flow=flow, subset=subset,
                                                       suite=suite).exclude(status=Submission.Status.CANCELLED)
                    if exists.exists():
                        continue
                    try:
                        submission = submission_create_endpoint(
                            model=model, env=env, flow=flow, subset=subset, suite=suite, endpoint_url=where[agent],
                            endpoint_model=agent, settings=chosen_settings, is_baseline=True,
                            endpoint_trusted=allow_private_endpoint)
                    except SubmissionError as exc:
                        raise CommandError(str(exc)) from None
                    self.stdout.write(f"{name} on {env}/{flow}/{subset}: submission {submission.id}")
