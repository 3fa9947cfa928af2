"""Wall time of the fixture Sokoban mini set against the random baseline agent, both flows.

Runs every attempt (10 levels x 3 repeats per flow, the standard settings) in this process, each
through a real HTTP round trip to the random agent, and prints the wall time, attempts per second
and the share of time spent waiting for the endpoint. Usage: .venv/bin/python bench/mini_set_random.py
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.base import ScenarioSpec, default_environments, load_plugins  # noqa: E402
from evaluators.baselines.agents import make_agent  # noqa: E402
from evaluators.baselines.server import start_server  # noqa: E402
from evaluators.endpoints.client import ChatClient  # noqa: E402
from evaluators.runner import effective_settings, run_attempt  # noqa: E402
from evaluators.sokoban.resources import discover_sokoban  # noqa: E402


class TimedClient(ChatClient):
    waited = 0.0

    def complete(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return super().complete(*args, **kwargs)
        finally:
            TimedClient.waited += time.perf_counter() - started


def main() -> None:
    load_plugins(default_environments())  # plain Python: no Django app loads them here
    scenarios = [s for s in discover_sokoban(ROOT / "fixtures/magebench/resources", verify=False) if s.in_mini]
    with start_server(make_agent("random", seed=0)) as server, tempfile.TemporaryDirectory() as tmp:
        client = TimedClient(server.url, "random")
        print(f"fixture mini set: {len(scenarios)} levels, random agent at {server.url}")
        for flow in ("global", "online"):
            settings = effective_settings("sokoban", flow)
            TimedClient.waited = 0.0
            attempts = steps = calls = 0
            started = time.perf_counter()
            for item in scenarios:
                spec = ScenarioSpec(env="sokoban", key=item.key, data=item.data, resource_path=item.resource_file)
                for repeat in range(settings.repeats):
                    result = run_attempt(scenario=spec, flow=flow, settings=settings, model=client,
                                         out_dir=Path(tmp) / f"{flow}-{item.key}-{repeat}")
                    attempts += 1
                    steps += result.steps
                    calls += result.model_calls
            wall = time.perf_counter() - started
            print(f"{flow:>6}: {attempts} attempts, {steps} env steps, {calls} model calls in {wall:.2f} s "
                  f"({attempts / wall:.2f} attempts/s, {steps / wall:.0f} steps/s); "
                  f"endpoint round trips {TimedClient.waited / wall:.0%} of wall time")


if __name__ == "__main__":
    main()
