"""The bench's workloads, and the record of one run of a workload on one kind of worker."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from bench._latency.trees import Sample

SUITE = "latency"
REPEATS = 3
ENDPOINT_LIMIT = 8
LATENCY_SEED = 0
RATIO_GOAL = 1.3
SPEED_UP_GOAL = 3.0
MIB = 1024 * 1024
#: Scenarios in each environment's mini list for this bench (see latency_throughput.latency_resources).
MINI = {"football": 4, "sokoban": 10, "webui": 8}
#: The engine seed every Football episode of the bench starts from (a platform-only setting).
ENGINE_SEED = 1
CORES = os.cpu_count() or 1
#: Mean seconds of a model answer unless ``--latency`` gives another.
LATENCY_MEAN = 3.0


@dataclass(frozen=True)
class Workload:
    env: str
    flow: str
    queue: str

    @property
    def name(self) -> str:
        return f"{self.env} {self.flow}"


WORKLOADS = [Workload("football", "online", "engine"), Workload("sokoban", "online", "light"),
             Workload("webui", "global", "browser")]
MODES = {"a": "manage.py run_worker", "b": "celery worker --concurrency=2"}


@dataclass
class Run:
    workload: Workload
    mode: str
    command: str
    #: Mean seconds of the endpoint's answers.
    latency: float
    finished: bool = False
    wall: float | None = None
    pool: int = 0
    attempts: int = 0
    scored: int = 0
    not_scored: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    recorded_calls: int = 0
    drawn_latency: float = 0.0
    cpu: float = 0.0
    idle_rss: int = 0
    idle_pss: int = 0
    peak_pss: int = 0
    peak: Sample | None = None
    most_browsers: int = 0
    most_chromium: int = 0
    most_engines: int = 0
    most_running: int = 0
    most_in_flight: int = 0
    mean_duration: float | None = None
    mean_score: float | None = None
    load_at_submit: float = 0.0
    load_at_end: float = 0.0
    machine_busy: float | None = None
    bench_cpu: float = 0.0
    sampler_cpu: float = 0.0
    samples: int = 0
    busy_before: float = 0.0
    longest_calls: int = 0
    #: The attempt with the most calls: seconds from the submission to its start, and its own duration.
    longest_started: float | None = None
    longest_took: float | None = None
    #: Model calls of each attempt, sorted, by scenario: whether two runs played the same episodes.
    episodes: dict[str, list[int]] = field(default_factory=dict)
    database_restarted: bool = False
    #: Seconds the tree used at least 90 % of the cores; seconds with the endpoint limit's worth of attempts running.
    saturated: float = 0.0
    at_limit: float = 0.0
    messages: int = 0
    quick_messages: int = 0

    @property
    def cpu_per_call(self) -> float:
        """The tree's CPU seconds per model call: what an attempt computes between two of its calls."""
        return self.cpu / self.calls if self.calls else 0.0

    @property
    def longest_chain(self) -> float:
        """The longest attempt's calls one after another, each a mean latency and then its share of the
        work (the run's CPU per call, on a core of its own): no worker count or order shortens it, as an
        attempt's next call waits for the work its last answer asked for."""
        return self.longest_calls * (self.latency + self.cpu_per_call)

    @property
    def cpu_floor(self) -> float:
        return self.cpu / CORES

    @property
    def latency_floor(self) -> float:
        return self.calls * self.latency / ENDPOINT_LIMIT

    @property
    def ratio(self) -> float | None:
        floor = max(self.cpu_floor, self.latency_floor)
        return self.wall / floor if self.wall is not None and floor > 0 else None

    @property
    def ratio_with_longest(self) -> float | None:
        floor = max(self.cpu_floor, self.latency_floor, self.longest_chain)
        return self.wall / floor if self.wall is not None and floor > 0 else None


def at_once(intervals: list[tuple[float, float]], level: int) -> tuple[int, float]:
    """The most intervals overlapping at one moment, and the seconds at least ``level`` of them overlapped."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals],
                    key=lambda event: (event[0], event[1]))
    running = most = 0
    held = 0.0
    previous: float | None = None
    for moment, change in events:
        if previous is not None and running >= level:
            held += moment - previous
        running += change
        most = max(most, running)
        previous = moment
    return most, held


def saturated_seconds(samples: list[Sample], share: float = 0.9) -> float:
    """Seconds between samples in which the tree used at least ``share`` of every core."""
    return sum(after.at - before.at for before, after in zip(samples, samples[1:])
               if after.at > before.at and (after.cpu - before.cpu) / (after.at - before.at) >= share * CORES)


def drawn_latency(requests: int, mean: float) -> float:
    """The seconds the endpoint's first ``requests`` answers waited: the same seeded draws, replayed."""
    from evaluators.baselines.server import Latency

    draw = Latency(mean, seed=LATENCY_SEED).sampler()
    return sum(draw() for _ in range(requests))
