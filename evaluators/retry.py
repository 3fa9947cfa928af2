"""One way to wait between tries of something that failed for a passing reason.

The endpoint client's HTTP retries, the engine's wait for a restarting database, the re-queue
delay of an attempt that hit an infrastructure failure and the worker's retry of a claim all grow
their pauses the same way: exponentially from a first delay, up to an optional cap, optionally
shortened at random so that many workers do not retry in lock-step.
"""
from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """Exponential delays: ``first`` seconds after the first failed try, times ``factor`` after each
    further one, never above ``cap`` (None: no cap). With ``jitter`` j, each delay is multiplied by
    a random factor in [1 - j, 1]."""

    first: float
    factor: float = 2.0
    cap: float | None = None
    jitter: float = 0.0

    def __post_init__(self) -> None:
        if self.first < 0 or self.factor < 1 or (self.cap is not None and self.cap < 0):
            raise ValueError("a backoff needs first >= 0, factor >= 1 and cap >= 0")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError("jitter is a fraction between 0 and 1")

    def delay(self, failures: int, rng: random.Random | None = None) -> float:
        """How long to wait after ``failures`` failed tries (1 after the first one)."""
        if failures < 1:
            raise ValueError("there is no wait before the first try")
        delay = self.first * self.factor ** (failures - 1)
        if self.cap is not None:
            delay = min(delay, self.cap)
        if self.jitter:
            delay *= (rng or random).uniform(1.0 - self.jitter, 1.0)
        return delay


def call_with_retries(action: Callable[[], T], *, retry_if: Callable[[Exception], bool], backoff: Backoff,
                      max_tries: int | None = None, budget_seconds: float | None = None,
                      wait_for: Callable[[Exception, int], float | None] | None = None,
                      on_retry: Callable[[Exception, int, float], None] | None = None,
                      sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                      rng: random.Random | None = None) -> T:
    """``action()``, tried again after each failure that ``retry_if`` accepts.

    Gives up (re-raising the last error) after ``max_tries`` tries, or when the next wait would end
    more than ``budget_seconds`` after the first try began. ``wait_for(error, failures)`` may name
    the wait itself (a server's Retry-After); None leaves it to ``backoff``. ``on_retry(error,
    failures, delay)`` runs before each wait. Errors ``retry_if`` refuses propagate at once.
    """
    if max_tries is not None and max_tries < 1:
        raise ValueError("max_tries must be at least 1")
    deadline = None if budget_seconds is None else clock() + budget_seconds
    failures = 0
    while True:
        try:
            return action()
        except Exception as error:
            failures += 1
            if not retry_if(error) or (max_tries is not None and failures >= max_tries):
                raise
            delay = wait_for(error, failures) if wait_for is not None else None
            if delay is None:
                delay = backoff.delay(failures, rng)
            if deadline is not None and clock() + delay > deadline:
                raise
            if on_retry is not None:
                on_retry(error, failures, delay)
            if delay > 0:
                sleep(delay)
