"""The one retry policy: exponential waits, caps, jitter, a try limit and a time budget."""
from __future__ import annotations

import random

import pytest

from evaluators.retry import Backoff, call_with_retries


class Flaky:
    """Fails with ``error`` the first ``failures`` times it is called, then returns "done"."""

    def __init__(self, failures: int, error: Exception | None = None) -> None:
        self.left = failures
        self.error = error or ConnectionError("down")
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.left:
            self.left -= 1
            raise self.error
        return "done"


def test_the_waits_double_from_the_first_delay_up_to_the_cap() -> None:
    backoff = Backoff(first=0.5, cap=5.0)
    assert [backoff.delay(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]


def test_a_backoff_without_a_cap_keeps_doubling() -> None:
    assert Backoff(first=30).delay(4) == 240


def test_jitter_shortens_each_wait_by_at_most_its_fraction() -> None:
    backoff = Backoff(first=8.0, jitter=0.5)
    rng = random.Random(7)
    waits = [backoff.delay(1, rng) for _ in range(200)]
    assert all(4.0 <= wait <= 8.0 for wait in waits) and len(set(waits)) > 100


def test_a_seeded_generator_gives_the_same_waits() -> None:
    backoff = Backoff(first=1.0, cap=30.0, jitter=0.5)
    assert [backoff.delay(n, random.Random(3)) for n in (1, 2, 3)] == [
        backoff.delay(n, random.Random(3)) for n in (1, 2, 3)]


def test_nonsense_policies_are_refused() -> None:
    for bad in ({"first": -1.0}, {"first": 1.0, "factor": 0.5}, {"first": 1.0, "jitter": 2.0}):
        with pytest.raises(ValueError):
            Backoff(**bad)
    with pytest.raises(ValueError):
        Backoff(first=1.0).delay(0)


def test_it_retries_until_the_action_succeeds_and_sleeps_between_tries() -> None:
    action, slept = Flaky(2), list[float]()
    result = call_with_retries(action, retry_if=lambda e: True, backoff=Backoff(first=1.0), sleep=slept.append)
    assert result == "done" and action.calls == 3 and slept == [1.0, 2.0]


def test_it_gives_up_after_the_last_try_with_the_last_error() -> None:
    action, slept = Flaky(5), list[float]()
    with pytest.raises(ConnectionError):
        call_with_retries(action, retry_if=lambda e: True, backoff=Backoff(first=1.0), max_tries=3,
                          sleep=slept.append)
    assert action.calls == 3 and slept == [1.0, 2.0]


def test_an_error_it_is_not_told_to_retry_propagates_at_once() -> None:
    action, slept = Flaky(1, ValueError("a bug, not an outage")), list[float]()
    with pytest.raises(ValueError):
        call_with_retries(action, retry_if=lambda e: isinstance(e, ConnectionError), backoff=Backoff(first=1.0),
                          sleep=slept.append)
    assert action.calls == 1 and slept == []


def test_it_stops_when_the_next_wait_would_outlast_the_time_budget() -> None:
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    action = Flaky(10)
    with pytest.raises(ConnectionError):
        call_with_retries(action, retry_if=lambda e: True, backoff=Backoff(first=1.0), budget_seconds=5.0,
                          sleep=sleep, clock=lambda: now[0])
    # Waits of 1 and 2 seconds fit in the budget; the next one (4) would end at 7 > 5.
    assert action.calls == 3 and now[0] == 3.0


def test_a_wait_the_caller_names_replaces_the_backoffs() -> None:
    action, slept, seen = Flaky(2), list[float](), list[tuple[int, float]]()

    def wait_for(error: Exception, failures: int) -> float | None:
        return 9.0 if failures == 1 else None

    call_with_retries(action, retry_if=lambda e: True, backoff=Backoff(first=1.0), wait_for=wait_for,
                      on_retry=lambda error, failures, delay: seen.append((failures, delay)), sleep=slept.append)
    assert slept == [9.0, 2.0] and seen == [(1, 9.0), (2, 2.0)]


def test_a_zero_wait_does_not_sleep() -> None:
    action, slept = Flaky(1), list[float]()
    call_with_retries(action, retry_if=lambda e: True, backoff=Backoff(first=0.0), sleep=slept.append)
    assert action.calls == 2 and slept == []
