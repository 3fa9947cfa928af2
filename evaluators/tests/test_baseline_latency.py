"""Baseline endpoints that take a model's time to answer, and that serve a limited number at once."""
from __future__ import annotations

import statistics
import threading
import time

import pytest

from evaluators.baselines.agents import make_agent
from evaluators.baselines.server import Latency, start_server
from evaluators.endpoints import ChatClient

MESSAGES = [{"role": "user", "content": "Sokoban # action"}]


def test_the_latency_draws_repeat_for_a_seed_and_average_to_the_mean() -> None:
    first, again, other = (Latency(3.0, seed=seed).sampler() for seed in (7, 7, 8))
    drawn = [first() for _ in range(4000)]
    assert drawn[:20] == [again() for _ in range(20)] and drawn[:20] != [other() for _ in range(20)]
    assert statistics.fmean(drawn) == pytest.approx(3.0, rel=0.05)
    assert min(drawn) > 0 and max(drawn) > 2 * min(drawn)  # a spread, not one value
    assert [Latency(2.0, spread=0.0).sampler()() for _ in range(3)] == pytest.approx([2.0] * 3)
    assert Latency(0.0).sampler()() == 0.0
    with pytest.raises(ValueError):
        Latency(-1.0)


def test_an_answer_takes_at_least_its_latency() -> None:
    with start_server(make_agent("idle"), latency=Latency(0.3, spread=0.0)) as server, \
            ChatClient(server.url, "idle") as client:
        started = time.monotonic()
        client.complete(MESSAGES, temperature=0.1, max_tokens=5)
        assert time.monotonic() - started >= 0.3


def test_requests_beyond_the_concurrency_limit_wait_for_a_free_place() -> None:
    answers: list[str] = []
    with start_server(make_agent("idle"), latency=Latency(0.3, spread=0.0), max_concurrency=2) as server:
        def ask() -> None:
            with ChatClient(server.url, "idle", timeout=30.0) as client:
                answers.append(client.complete(MESSAGES, temperature=0.1, max_tokens=5).text)

        threads = [threading.Thread(target=ask) for _ in range(6)]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        assert len(answers) == 6 and server.chat_requests == 6
        assert server.most_serving == 2
    assert elapsed >= 3 * 0.3  # six answers of 0.3 s through two places
