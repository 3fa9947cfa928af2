"""``manage.py serve_baseline_agent``: put a baseline agent behind an OpenAI-compatible endpoint."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from evaluators.base import all_plugins
from evaluators.baselines.agents import AGENT_NAMES, make_agent
from evaluators.baselines.server import FAULT_MODES, Fault, Latency, serve_forever

#: The fixture resources the demo serves its oracles from.
FIXTURE_RESOURCES = Path(__file__).resolve().parents[3] / "fixtures" / "magebench" / "resources"


def default_pages() -> list[Path]:
    """The fixture folders the environments' demo baselines name for their oracles to read."""
    return [FIXTURE_RESOURCES / folder for plugin in all_plugins() for folder in plugin.demo_baselines.oracle_resources]


class Command(BaseCommand):
    help = (
        "Serve a baseline agent (idle, random, oracle or degraded) over the OpenAI chat-completions "
        "protocol until interrupted, optionally failing on purpose to test infrastructure "
        "error handling."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--agent", choices=AGENT_NAMES, required=True)
        parser.add_argument("--port", type=int, required=True, help="0 picks a free port")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--seed", type=int, default=None, help="seed of the random agent")
        parser.add_argument("--pages", action="append", type=Path, default=None,
                            help="folders of scenario files the oracles may read their answers from (default: the "
                                 "fixture folders the environments' demo baselines name)")
        parser.add_argument("--api-key", default=None, help="require this bearer token")
        parser.add_argument("--fault", choices=FAULT_MODES, default=None)
        parser.add_argument(
            "--fault-first",
            type=int,
            default=None,
            metavar="N",
            help="only the first N requests fail (default: all of them)",
        )
        parser.add_argument(
            "--fault-delay",
            type=float,
            default=None,
            metavar="SECONDS",
            help="how long a 'timeout' fault stalls before answering",
        )

        parser.add_argument("--latency", type=float, default=None, metavar="SECONDS",
                            help="mean time each answer takes, drawn from a seeded lognormal (a real model "
                                 "takes 1-10 s a call)")
        parser.add_argument("--latency-spread", type=float, default=0.5, metavar="SIGMA",
                            help="standard deviation of the latency's log (default 0.5)")
        parser.add_argument("--latency-seed", type=int, default=0, help="seed of the latency draws")
        parser.add_argument("--max-concurrency", type=int, default=None, metavar="N",
                            help="answer at most N requests at once; later ones wait in a queue")

    def handle(self, *args: Any, **options: Any) -> None:
        fault = None
        if options["fault"]:
            extra = {} if options["fault_delay"] is None else {"delay": options["fault_delay"]}
            try:
                fault = Fault(options["fault"], first_n=options["fault_first"], **extra)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
        elif options["fault_first"] is not None or options["fault_delay"] is not None:
            raise CommandError("--fault-first and --fault-delay need --fault")
        agent = make_agent(options["agent"], seed=options["seed"], pages=options["pages"] or default_pages())
        if options["max_concurrency"] is not None and options["max_concurrency"] < 1:
            raise CommandError("--max-concurrency must be at least 1")
        try:
            latency = None if options["latency"] is None else Latency(
                options["latency"], spread=options["latency_spread"], seed=options["latency_seed"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None

        def ready(url: str) -> None:
            self.stdout.write(f"Serving the {agent.name} agent at {url}")
            self.stdout.write("Press Ctrl+C to stop.")
            self.stdout.flush()

        try:
            serve_forever(
                agent,
                options["host"],
                options["port"],
                api_key=options["api_key"],
                fault=fault,
                ready=ready,
                latency=latency,
                max_concurrency=options["max_concurrency"],
            )
        except OSError as exc:
            raise CommandError(f"cannot serve on {options['host']}:{options['port']}: {exc}") from exc
        self.stdout.write("Stopped.")
