"""The bare evaluator's parts: a baseline answering in this process, and the endpoint's own floor."""
from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from evaluators.endpoints.profile import OFFICIAL_PROFILE, RequestProfile


class DirectModel:
    """The ChatModel protocol answered by a baseline agent in this process: no HTTP, JSON or retries."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def complete(self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int,
                 top_p: float | None = None, frequency_penalty: float | None = None,
                 profile: RequestProfile = OFFICIAL_PROFILE) -> Any:
        from evaluators.endpoints.messages import Completion

        started = time.perf_counter()
        text = self.agent.reply(messages)
        return Completion(text=text, prompt_tokens=None, completion_tokens=None,
                          latency=time.perf_counter() - started, attempts=1, finish_reason="stop",
                          model=self.agent.name)


@dataclass
class Bare:
    times: list[float] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


@contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send file descriptor 1 to stderr for a while: the Football engine prints from C straight to it,
    and stdout must carry the report alone."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def endpoint_floor(requests: int = 30) -> float:
    """Median seconds of a one-word chat request to a baseline server: the part of each model call
    that is the endpoint's HTTP round trip, not the platform's work."""
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import start_server
    from evaluators.endpoints.client import ChatClient

    with start_server(make_agent("idle")) as running, ChatClient(running.url, "idle") as client:
        times = []
        for _ in range(requests):
            started = time.perf_counter()
            client.complete([{"role": "user", "content": "hello"}], temperature=0.1, max_tokens=16)
            times.append(time.perf_counter() - started)
    return statistics.median(times)
