"""The teams' model endpoints: baseline agents with latency and injected faults.

Local runs start them in their own process (:func:`start_agents`, free ports); on the compose stack
each light worker container serves them on its own loopback (``python -m bench._chaos.agents
--port P``: the teams on P, P+1, ...) until it stops.
"""
from __future__ import annotations

import argparse
import os
import signal
import threading
from dataclasses import dataclass
from typing import Any

#: Every answer waits a seeded lognormal draw of this mean (s).
LATENCY = 0.3
UPLOADER = "Uploader"


@dataclass(frozen=True)
class Plan:
    team: str
    agent: str
    fault: str | None = None
    every_n: int | None = None


PLANS = (Plan("Steady", "oracle"), Plan("Flaky", "oracle", "500", 4), Plan("Garbled", "random", "garbage", 5),
         Plan("Throttled", "oracle", "429", 6))


def start_agents(port: int = 0) -> list[Any]:
    """One running server per plan, on ``port + i`` (free ports for 0)."""
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import Fault, Latency, start_server

    return [start_server(make_agent(plan.agent, seed=i),
                         port=port + i if port else 0,
                         fault=Fault(plan.fault, every_n=plan.every_n) if plan.fault else None,
                         latency=Latency(LATENCY, seed=i))
            for i, plan in enumerate(PLANS)]


def main() -> None:
    parser = argparse.ArgumentParser(description="serve the chaos bench's team endpoints until stopped")
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    import django

    django.setup()
    start_agents(port)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    print(f"serving {', '.join(p.team for p in PLANS)} on 127.0.0.1:{port}-{port + len(PLANS) - 1}", flush=True)
    done.wait()


if __name__ == "__main__":
    main()
