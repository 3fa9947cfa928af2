from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalogue.selectors import default_suite
from evaluators.base import SUBSETS, EnvironmentPlugin, all_plugins, get_plugin
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
                     + "), served by serve_baseline_agent, on every flow of the environments the demo fills. "
                     "Skips boards that already have that baseline, so it can run at every start.")
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser) -> None:
        parser.add_argument("--env", action="append", dest="envs", metavar="ENV",
                            help="an environment to queue them on (default: every environment whose plug-in's "
                                 "demo baselines include it)")
        parser.add_argument("--subset", action="append", dest="subsets", choices=SUBSETS,
                            help="a subset to fill (default: the subsets each environment's demo baselines fill)")
        parser.add_argument("--suite")
        parser.add_argument("--agent", action="append", dest="agents", choices=sorted(AGENTS),
                            help="an agent to queue (default: each environment's demo agents that have a --url)")
        parser.add_argument("--url", action="append", dest="urls", metavar="AGENT=URL", default=[],
                            help="where each agent is served, e.g. idle=http://127.0.0.1:8101/v1")
        parser.add_argument("--list-agents", action="store_true",
                            help="print the agents the environments' demo baselines run, one a line, and queue nothing")
        parser.add_argument("--max-repeats", type=int, default=0, metavar="N",
                            help="run each baseline at most N times per scenario (0: the agent's own count or "
                                 "the flow's default); the submission records the repeats it ran")
        parser.add_argument("--allow-private-endpoint", action="store_true",
                            help="the agents are on a network you trust: let them be on private or loopback "
                                 "addresses that the address policy refuses for teams (never a metadata service)")

    def handle(self, *args, envs: list[str] | None, subsets: list[str] | None, suite: str | None,
               agents: list[str] | None, urls: list[str], allow_private_endpoint: bool = False, max_repeats: int = 0,
               list_agents: bool = False, **options) -> None:
        plugins = [get_plugin(env) for env in envs] if envs else demo_plugins()
        if list_agents:
            needed = {agent for plugin in plugins for agent in demo_agents(plugin)}
            self.stdout.write("\n".join(agent for agent in AGENTS if agent in needed))
            return
        where = dict(item.split("=", 1) for item in urls if "=" in item)
        if not where:
            raise CommandError("no agent to queue: give each agent's --url AGENT=URL")
        unknown = sorted(set(where) - set(AGENTS))
        if unknown:
            raise CommandError(f"unknown baseline agent(s): {', '.join(unknown)}; known: {', '.join(sorted(AGENTS))}")
        chosen = {plugin.slug: agents or [a for a in sorted(where) if a in demo_agents(plugin)] for plugin in plugins}
        missing = sorted({agent for names in chosen.values() for agent in names if agent not in where})
        if missing:
            raise CommandError(f"no URL given for the {', '.join(missing)} agent")
        # Subset-major order: every mini board fills before the slower full runs start.
        for subset in [s for s in SUBSETS if s in subsets] if subsets else SUBSETS:
            for plugin in plugins:
                if subsets or subset in plugin.demo_baselines.subsets:
                    for agent in chosen[plugin.slug]:
                        self._queue(plugin, agent, subset, suite or default_suite(plugin.slug), where[agent],
                                    max_repeats=max_repeats, trusted=allow_private_endpoint)

    def _queue(self, plugin: EnvironmentPlugin, agent: str, subset: str, suite: str, url: str, *,
               max_repeats: int, trusted: bool) -> None:
        """Queue ``agent`` on each of the environment's demo flows of ``subset``, skipping boards that have it."""
        env = plugin.slug
        name, _, repeats = AGENTS[agent]
        settings: dict[str, object] = {}
        # Stochastic episodes: every baseline runs the flow's default repeats there.
        if repeats and not plugin.stochastic:
            settings["repeats"] = repeats
        if agent in plugin.text_only_baselines:
            settings["observation_images"] = False
        # The team and the model are registered with their first submission, or not at all.
        model = ModelSpec(team=BASELINE_TEAM, name=name, metadata={"organisation": "MageBench Leaderboard"},
                          is_baseline=True)
        for flow in plugin.demo_baselines.flows or plugin.flows:
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
                    model=model, env=env, flow=flow, subset=subset, suite=suite, endpoint_url=url,
                    endpoint_model=agent, settings=chosen_settings, is_baseline=True, endpoint_trusted=trusted)
            except SubmissionError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"{name} on {env}/{flow}/{subset}: submission {submission.id}")


def demo_plugins() -> list[EnvironmentPlugin]:
    """The environments the demo fills, in board order."""
    return sorted((plugin for plugin in all_plugins() if plugin.demo_baselines.included),
                  key=lambda plugin: (plugin.position, plugin.slug))


def demo_agents(plugin: EnvironmentPlugin) -> tuple[str, ...]:
    """The baseline agents the demo runs on ``plugin``'s boards."""
    return plugin.demo_baselines.agents or plugin.baseline_agents
