"""Throughput against slow models: workers sized by ``manage.py run_worker`` against one attempt per process.

    .venv/bin/python bench/latency_throughput.py [--only football,sokoban,webui] [--modes a,b]
        [--latency 3] [--mini football=4,webui=8] [--quiet 30] [--settle 300]
        [--out bench/reports/latency_throughput.txt]

Real models take 1-10 s a call; the baselines answer at once. Here every endpoint is a baseline
served by ``start_server(agent, latency=Latency(3.0, seed=0))`` (what ``serve_baseline_agent
--latency 3 --latency-seed 0`` serves): each answer waits a seeded lognormal draw of mean 3 s, and
the server takes any number of requests at once, so the platform's limit on attempts calling one
endpoint (MAGEBENCH_ENDPOINT_CONCURRENCY, 8, set in the workers' environment) is the only cap.

Three workloads, each one submission of three repeats on its board's mini list, default settings:

* Football Online, played by the seeded random agent (the oracle has no Football plan), with one
  generator per conversation (``bench/seeded_conversations.py``) and the engine seed fixed, so that
  both runs of the workload play the same episodes (the report says whether they did);
* Sokoban Online, played by the oracle: it solves each level in its optimal number of moves, so an
  attempt makes as many calls as a model that plays well (about two dozen) and ends, where the
  random agent would use all 50 moves of the loop on most levels and measure the loop limit;
* WebUI Global, played by the oracle with the fixture pages (one call, then rendering and scoring).

The fixture mini lists hold Football 3, Sokoban 10 and WebUI 3 scenarios. Nine WebUI attempts on
the four processes ``run_worker`` gives the browser queue, or nine Football attempts on the eight
of the engine queue, are one or two waves: the wall time would be one episode's, not a throughput.
So, as ``bench/paper_mini.py`` does, the bench imports a copy of the fixture resources (suite
"latency") whose mini lists are the fixture's, followed by the next entries of the full lists:
Football 4 scenarios (12 attempts), WebUI 8 pages (24 attempts), Sokoban its 10 levels (30
attempts); ``--mini`` changes the counts.

Each workload runs twice, each time with a fresh endpoint, on its queue alone:

(a) ``manage.py run_worker -Q <queue>``: the new sizing (cores × the plug-in's attempts per core,
    within the memory budget);
(b) ``celery -A config worker -Q <queue> --concurrency=2``: today's behaviour, one attempt per
    process, one process per core.

For each run it prints the wall time (submission to the submission's ``finished_at``); the CPU
floor: the CPU time the worker's process tree (Celery's main process, its pool processes and
their children: Playwright's driver and Chromium) used from submission to the end, read from
/proc (user + system, plus what reaped children used) and divided by the cores; the latency floor:
the endpoint's chat requests × the mean latency ÷ the endpoint limit; the ratio of the wall time
to the larger floor against the goal of at most 1.3; and (b)'s wall time over (a)'s against the
goal of at least 3×. It samples the tree every 0.5 s for the summed RSS (and PSS every 2 s) and
counts, at any one moment, Chromium browsers (and all Chromium processes) in the tree and pool
processes that have loaded the Football engine. Other jobs share the machine: each run waits (up
to ``--settle`` s) until the machine is less than ``--quiet`` % busy, and the report gives the load
average, the machine's CPU use during each run and whether PostgreSQL restarted meanwhile. Only
measured numbers are printed; nothing here asserts on time.

Uses its own database (``magebench_bench_latency``, dropped and created, or
BENCH_LATENCY_DATABASE_URL) and Redis db 14 (flushed before each run and at the end).
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import paper_mini, scale  # noqa: E402
from bench.seeded_conversations import ConversationRandomAgent  # noqa: E402

SUITE = "latency"
REPEATS = 3
ENDPOINT_LIMIT = 8
LATENCY_SEED = 0
RATIO_GOAL = 1.3
SPEED_UP_GOAL = 3.0
SAMPLE_EVERY = 0.5
#: Every this many samples, the proportional set size too (slower to read than RSS).
PSS_EVERY = 4
MIB = 1024 * 1024
STARTING_LOAD = os.getloadavg()
#: Scenarios in each environment's mini list for this bench (see latency_resources).
MINI = {"football": 4, "sokoban": 10, "webui": 8}
ENGINE_LIBRARY = "_gameplayfootball"
#: What a Chromium browser process is called (its children carry --type=...).
BROWSER_PROGRAMS = frozenset({"chromium", "chrome", "chromium-browser", "headless_shell"})
#: The engine seed every Football episode of the bench starts from (a platform-only setting).
ENGINE_SEED = 1
CORES = os.cpu_count() or 1
#: Mean seconds of a model answer (``--latency``).
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


def latency_resources(target: Path) -> Path:
    """A copy of the fixture resources whose mini lists hold MINI[env] scenarios: the fixture's own
    mini list, then the next entries of its full list that are not in it."""
    resources = target / "resources"
    shutil.copytree(scale.RESOURCES, resources)
    for title, env in (("Football", "football"), ("Sokoban", "sokoban"), ("WebUI", "webui")):
        mini: list[str] = json.loads((resources / f"{title}_mini.json").read_text(encoding="utf-8"))
        entries: list[str] = json.loads((resources / f"{title}_all.json").read_text(encoding="utf-8"))
        chosen = (mini + [entry for entry in entries if entry not in mini])[:MINI[env]]
        if len(chosen) < MINI[env]:
            raise SystemExit(f"{title}: the fixture lists only {len(chosen)} scenarios, fewer than {MINI[env]}")
        (resources / f"{title}_mini.json").write_text(json.dumps(chosen, ensure_ascii=False), encoding="utf-8")
    return resources


# --- workers -------------------------------------------------------------------------------------


def worker_command(mode: str, queue: str, hostname: str) -> list[str]:
    tail = [f"--hostname={hostname}", "--without-gossip", "--without-mingle"]
    if mode == "a":
        return [sys.executable, str(ROOT / "manage.py"), "run_worker", "-Q", queue, "--", *tail]
    return [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queue, "--concurrency=2",
            "--loglevel=INFO", *tail]


def display(command: list[str]) -> str:
    shown = [".venv/bin/python" if part == sys.executable else part for part in command]
    shown = ["manage.py" if part == str(ROOT / "manage.py") else part for part in shown]
    return " ".join(part for part in shown if not part.startswith("--hostname="))


@contextmanager
def worker_running(label: str, command: list[str], logs: Path) -> Iterator[scale.Worker]:
    """One worker in a session of its own, answering pings; stopped with its whole tree afterwards."""
    from config.celery import app

    logs.mkdir(parents=True, exist_ok=True)
    hostname = next(part.split("=", 1)[1] for part in command if part.startswith("--hostname="))
    path = logs / f"worker-{label}.log"
    with path.open("w") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=dict(os.environ), stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    worker = scale.Worker(label=label, hostname=hostname, process=process, log=path)
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"worker {label} exited at startup:\n{worker.output()}")
            if any(hostname in reply for reply in app.control.ping([hostname], timeout=0.5) or []):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"worker {label} did not answer a ping within 120 s:\n{worker.output()}")
        yield worker
    finally:
        worker.stop()


def pool_size(worker: scale.Worker) -> int:
    """The worker's pool processes (the main process's Python children)."""
    try:
        return sum(1 for child in psutil.Process(worker.process.pid).children() if "python" in child.name())
    except psutil.NoSuchProcess:
        return 0


# --- sampling the worker's process tree -----------------------------------------------------------


@dataclass
class Sample:
    at: float
    cpu: float
    rss: int
    pss: int | None
    processes: int
    browsers: int
    chromium: int
    engines: int


class TreeWatch(threading.Thread):
    """Samples a worker's tree: CPU seconds (own and reaped children's), summed RSS, and what it holds."""

    def __init__(self, worker: scale.Worker) -> None:
        super().__init__(name="tree-watch", daemon=True)
        self.worker = worker
        self.samples: list[Sample] = []
        self._kinds: dict[tuple[int, float], str] = {}
        self._engines: set[tuple[int, float]] = set()
        self._done = threading.Event()
        #: CPU seconds this sampling thread itself used.
        self.own_cpu = 0.0

    def _kind(self, process: psutil.Process, key: tuple[int, float]) -> str:
        kind = self._kinds.get(key)
        if kind is None:
            cmdline = process.cmdline()
            program = Path(cmdline[0]).name if cmdline else process.name()
            if program in BROWSER_PROGRAMS and not any(part.startswith("--type=") for part in cmdline):
                kind = "browser"
            elif "chrom" in program:
                # Renderers, zygotes and utilities (--type=...), and the crash handler.
                kind = "chromium-child"
            elif "python" in program:
                kind = "python"
            else:
                kind = program
            self._kinds[key] = kind
        return kind

    def _has_engine(self, process: psutil.Process, key: tuple[int, float]) -> bool:
        if key in self._engines:
            return True
        with contextlib.suppress(OSError), open(f"/proc/{process.pid}/maps", encoding="utf-8",
                                                    errors="replace") as maps:
            if any(ENGINE_LIBRARY in line for line in maps):
                self._engines.add(key)
                return True
        return False

    def sample(self, *, pss: bool = False) -> Sample:
        cpu = 0.0
        rss = processes = browsers = chromium = engines = 0
        proportional = 0
        for process in self.worker.tree():
            try:
                with process.oneshot():
                    key = (process.pid, process.create_time())
                    times = process.cpu_times()
                    memory = process.memory_info().rss
                    kind = self._kind(process, key)
                    engine = kind == "python" and self._has_engine(process, key)
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
            # A child that exited and was reaped adds its (and its reaped children's) time to its parent's.
            cpu += times.user + times.system + times.children_user + times.children_system
            rss += memory
            if pss:
                proportional += proportional_set_size(process.pid)
            processes += 1
            browsers += kind == "browser"
            chromium += kind in ("browser", "chromium-child")
            engines += engine
        return Sample(time.time(), cpu, rss, proportional if pss else None, processes, browsers, chromium, engines)

    def run(self) -> None:
        while not self._done.is_set():
            started = time.monotonic()
            self.samples.append(self.sample(pss=len(self.samples) % PSS_EVERY == 0))
            self.own_cpu = time.thread_time()
            self._done.wait(max(0.0, SAMPLE_EVERY - (time.monotonic() - started)))

    def stop(self) -> None:
        self._done.set()
        self.join(timeout=10)


def proportional_set_size(pid: int) -> int:
    """Bytes of the process's memory with each shared page divided among the processes sharing it."""
    with contextlib.suppress(OSError, ValueError), open(f"/proc/{pid}/smaps_rollup", encoding="ascii",
                                                         errors="replace") as rollup:
        for line in rollup:
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return 0


def machine_busy() -> tuple[float, float]:
    """Busy and total CPU seconds of the whole machine so far (every core, every process)."""
    times = psutil.cpu_times()
    idle = times.idle + getattr(times, "iowait", 0.0)
    total = sum(times)
    return total - idle, total


def settle(most: float, wait: float) -> float:
    """Wait (at most ``wait`` s) until the machine's cores were less than ``most`` % busy over 5 s; the last reading."""
    deadline = time.monotonic() + wait
    while True:
        busy = psutil.cpu_percent(interval=5.0)
        if busy < most or time.monotonic() > deadline:
            return busy
        scale.log(f"machine {busy:.0f} % busy; waiting for it to settle")


def postgres_started() -> str:
    """When PostgreSQL last started: a restart during a run (another job's) is reported beside it."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_postmaster_start_time()")
        return str(cursor.fetchone()[0])


def messages_handled(log: Path) -> tuple[int, int]:
    """Task messages the worker finished, and how many of them in under a second (nothing claimed:
    the endpoint was at its limit, or another process had taken the attempt)."""
    total = quick = 0
    for line in log.read_text(errors="replace").splitlines():
        if "submissions.run_attempt[" in line and " succeeded in " in line:
            total += 1
            with contextlib.suppress(ValueError):
                quick += float(line.split(" succeeded in ", 1)[1].split("s:", 1)[0]) < 1.0
    return total, quick


# --- one run -------------------------------------------------------------------------------------


@dataclass
class Run:
    workload: Workload
    mode: str
    command: str
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
    #: Model calls of each attempt, sorted, by scenario: whether two runs played the same episodes.
    episodes: dict[str, list[int]] = field(default_factory=dict)
    database_restarted: bool = False
    #: Seconds the tree used at least 90 % of the cores; seconds with the endpoint limit's worth of attempts running.
    saturated: float = 0.0
    at_limit: float = 0.0
    messages: int = 0
    quick_messages: int = 0

    @property
    def longest_chain(self) -> float:
        """The longest attempt's calls one after another at the mean latency: no worker count shortens it."""
        return self.longest_calls * LATENCY_MEAN

    @property
    def cpu_floor(self) -> float:
        return self.cpu / CORES

    @property
    def latency_floor(self) -> float:
        return self.calls * LATENCY_MEAN / ENDPOINT_LIMIT

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


def drawn_latency(requests: int) -> float:
    """The seconds the endpoint's first ``requests`` answers waited: the same seeded draws, replayed."""
    from evaluators.baselines.server import Latency

    draw = Latency(LATENCY_MEAN, seed=LATENCY_SEED).sampler()
    return sum(draw() for _ in range(requests))


def run_one(workload: Workload, mode: str, logs: Path, timeout: float, quiet: float, settle_wait: float) -> Run:
    from django.db import transaction
    from django.db.models import Count

    from accounts.services import team_get_or_create
    from evaluators.baselines.server import Latency, start_server
    from submissions.models import Attempt, Submission
    from submissions.services import model_entry_upsert, submission_create_endpoint

    label = f"{workload.env}-{mode}"
    hostname = f"latency-{label}-{os.getpid()}@{socket.gethostname()}"
    command = worker_command(mode, workload.queue, hostname)
    measured = Run(workload=workload, mode=mode, command=display(command))
    measured.busy_before = settle(quiet, settle_wait)
    scale.purge_broker()
    restarted = postgres_started()
    # Random Football replies from one generator per conversation and a fixed engine seed: (a) and (b)
    # play the same episodes, whatever order their requests arrive in.
    agent = ConversationRandomAgent(seed=0) if workload.env == "football" else scale.baseline(workload.env)
    with start_server(agent, latency=Latency(LATENCY_MEAN, seed=LATENCY_SEED)) as server, \
            worker_running(label, command, logs) as worker:
        watch = TreeWatch(worker)
        # The pool's processes are all up once the worker answers; a moment more for their children.
        time.sleep(2.0)
        idle = [watch.sample(pss=True) for _ in range(4)]
        measured.idle_rss = max(sample.rss for sample in idle)
        measured.idle_pss = max(sample.pss or 0 for sample in idle)
        measured.pool = pool_size(worker)
        model = model_entry_upsert(team=team_get_or_create(name="Latency bench"), name=f"{workload.env} ({mode})")
        # Leaves the watchdog's marker in the emptied broker: its rounds below then do what a deployment's do.
        paper_mini.watchdog_round()
        measured.load_at_submit = os.getloadavg()[0]
        busy_before = machine_busy()
        bench_before = sum(psutil.Process().cpu_times()[:2])
        start = watch.sample(pss=True)
        watch.start()
        submitted_at = time.time()
        with transaction.atomic():
            # The attempts are queued when this commits, so every one of them reads the seed.
            submission = submission_create_endpoint(
                model=model, env=workload.env, flow=workload.flow, subset="mini", suite=SUITE,
                endpoint_url=server.url, endpoint_model=scale.AGENT_FOR_ENV[workload.env],
                settings={"repeats": REPEATS})
            if workload.env == "football":
                Submission.objects.filter(id=submission.id).update(settings={**submission.settings,
                                                                             "seed": ENGINE_SEED})
        scale.log(f"{workload.name} ({mode}): submission {submission.id}, {submission.attempts.count()} attempts, "
                  f"{measured.pool} pool processes")
        deadline = time.monotonic() + timeout
        watched = time.monotonic()
        active = [Submission.Status.QUEUED, Submission.Status.RUNNING]
        while paper_mini.still_running([submission.id], active) and time.monotonic() < deadline:
            if time.monotonic() - watched > paper_mini.WATCHDOG_EVERY:
                paper_mini.watchdog_round()
                watched = time.monotonic()
            time.sleep(0.5)
        watch.stop()
        end = watch.sample(pss=True)
        busy_after = machine_busy()
        measured.bench_cpu = sum(psutil.Process().cpu_times()[:2]) - bench_before
        measured.sampler_cpu = watch.own_cpu
        measured.load_at_end = os.getloadavg()[0]
        measured.calls = server.chat_requests
        measured.most_in_flight = server.most_in_flight
    measured.database_restarted = postgres_started() != restarted
    submission.refresh_from_db()
    measured.finished = not submission.is_active
    if measured.finished and submission.finished_at is not None:
        measured.wall = submission.finished_at.timestamp() - submitted_at
    samples = [start, *watch.samples, end]
    measured.samples = len(samples)
    measured.cpu = end.cpu - start.cpu
    measured.peak = max(samples, key=lambda sample: sample.rss)
    measured.peak_pss = max(sample.pss or 0 for sample in samples)
    measured.most_browsers = max(sample.browsers for sample in samples)
    measured.most_chromium = max(sample.chromium for sample in samples)
    measured.most_engines = max(sample.engines for sample in samples)
    measured.saturated = saturated_seconds(samples)
    busy, total = busy_after[0] - busy_before[0], busy_after[1] - busy_before[1]
    measured.machine_busy = busy / total if total > 0 else None
    measured.drawn_latency = drawn_latency(measured.calls)
    rows = list(Attempt.objects.filter(submission=submission).values(
        "status", "score", "model_calls", "duration_seconds", "started_at", "finished_at", "scenario__key"))
    for row in rows:
        measured.episodes.setdefault(row["scenario__key"], []).append(row["model_calls"] or 0)
    for calls in measured.episodes.values():
        calls.sort()
    measured.attempts = len(rows)
    measured.scored = sum(1 for row in rows if row["status"] == Attempt.Status.SCORED)
    measured.recorded_calls = sum(row["model_calls"] or 0 for row in rows)
    measured.longest_calls = max((row["model_calls"] or 0 for row in rows), default=0)
    measured.messages, measured.quick_messages = messages_handled(logs / f"worker-{label}.log")
    measured.most_running, measured.at_limit = at_once(
        [(row["started_at"].timestamp(), row["finished_at"].timestamp())
         for row in rows if row["started_at"] and row["finished_at"]], ENDPOINT_LIMIT)
    durations = [row["duration_seconds"] for row in rows if row["duration_seconds"] is not None]
    measured.mean_duration = statistics.fmean(durations) if durations else None
    scores = [float(row["score"]) for row in rows
              if row["status"] == Attempt.Status.SCORED and row["score"] is not None]
    measured.mean_score = statistics.fmean(scores) if scores else None
    for failed in (Attempt.objects.filter(submission=submission).exclude(status=Attempt.Status.SCORED)
                   .values("status", "error_kind").annotate(n=Count("id"))):
        measured.not_scored[f"{failed['status']} {failed['error_kind']}".strip()] = failed["n"]
    scale.log(f"{workload.name} ({mode}): wall {scale.num(measured.wall, 1)} s, {measured.calls} calls, "
              f"CPU {measured.cpu:.0f} s, peak {measured.peak.rss / MIB:.0f} MiB")
    return measured


# --- the report ----------------------------------------------------------------------------------


def against(value: float | None, goal: float, *, at_most: bool, digits: int = 2, suffix: str = "") -> str:
    if value is None:
        return "n/a"
    met = value <= goal if at_most else value >= goal
    return f"{value:.{digits}f}{suffix} (goal {'≤' if at_most else '≥'} {goal:g}{suffix}: {'met' if met else 'missed'})"


def speed_up(runs: list[Run], workload: Workload) -> float | None:
    by_mode = {run.mode: run for run in runs if run.workload == workload}
    new, today = by_mode.get("a"), by_mode.get("b")
    if new is None or today is None or not new.wall or not today.wall:
        return None
    return today.wall / new.wall


def speed_up_bound(runs: list[Run], workload: Workload) -> float | None:
    """The most any worker could gain over (b) here: no run ends before (a)'s CPU and latency floors
    or its longest attempt, so (b)'s wall over the largest of them is the ceiling of the speed-up (a
    workload whose one-attempt-per-process run already keeps the cores busy cannot gain 3×)."""
    by_mode = {run.mode: run for run in runs if run.workload == workload}
    new, today = by_mode.get("a"), by_mode.get("b")
    if new is None or today is None or not today.wall:
        return None
    bound = max(new.cpu_floor, new.latency_floor, new.longest_chain)
    return today.wall / bound if bound else None


def report_table(runs: list[Run]) -> list[str]:
    rows = []
    for run in runs:
        floors = {"CPU": run.cpu_floor, "latency": run.latency_floor}
        bound = max(floors, key=lambda name: floors[name])
        rows.append([
            f"{run.workload.name} ({run.mode})",
            f"{run.pool}",
            f"{run.attempts} ({run.scored})",
            f"{run.calls}",
            scale.num(run.wall, 1) if run.finished else "unfinished",
            f"{run.cpu:.0f} / {CORES} = {run.cpu_floor:.1f}",
            f"{run.calls} × {LATENCY_MEAN:g} / {ENDPOINT_LIMIT} = {run.latency_floor:.1f}",
            f"{run.longest_calls} × {LATENCY_MEAN:g} = {run.longest_chain:.0f}",
            f"{against(run.ratio, RATIO_GOAL, at_most=True)} [{bound}]",
            scale.num(run.ratio_with_longest),
            against(speed_up(runs, run.workload), SPEED_UP_GOAL, at_most=False, suffix="×") if run.mode == "a" else "",
            scale.num(speed_up_bound(runs, run.workload), suffix="×") if run.mode == "a" else "",
        ])
    return scale.table(["workload (worker)", "pool processes", "attempts (scored)", "model calls", "wall s",
                        "CPU floor s (tree CPU s / cores)", "latency floor s (calls × mean s / limit)",
                        "longest attempt's calls × mean s",
                        "wall / max(floors) [larger floor]", "wall / max(floors, longest attempt)",
                        "speed-up (b)/(a)", "speed-up possible: (b) / max(floors, longest attempt) of (a)"], rows)


def report_resources(runs: list[Run]) -> list[str]:
    rows = []
    for run in runs:
        peak = run.peak
        others = (run.machine_busy - (run.cpu + run.bench_cpu) / CORES / run.wall
                  if run.machine_busy is not None and run.wall else None)
        rows.append([
            f"{run.workload.name} ({run.mode})",
            f"{run.idle_rss / MIB:.0f}",
            f"{peak.rss / MIB:.0f}" if peak else "n/a",
            f"{run.idle_pss / MIB:.0f} → {run.peak_pss / MIB:.0f}",
            f"{peak.processes}" if peak else "n/a",
            f"{run.most_browsers} ({run.most_chromium})",
            f"{run.most_engines}",
            f"{run.most_running}",
            f"{run.most_in_flight}",
            scale.num(run.mean_duration, 1),
            f"{100 * run.cpu / CORES / run.wall:.0f} %" if run.wall else "n/a",
            f"{100 * run.saturated / run.wall:.0f} %" if run.wall else "n/a",
            f"{100 * run.at_limit / run.wall:.0f} %" if run.wall else "n/a",
            f"{100 * run.machine_busy:.0f} %" if run.machine_busy is not None else "n/a",
            f"{100 * others:.0f} %" if others is not None else "n/a",
            f"{run.bench_cpu:.0f}",
            f"{run.load_at_submit:.2f} → {run.load_at_end:.2f}",
        ])
    return scale.table(["workload (worker)", "idle RSS MiB", "peak RSS MiB", "PSS MiB idle → peak",
                        "processes at peak",
                        "browsers (Chromium processes) at most", "Football engines at most",
                        "attempts running at most", "endpoint requests in flight at most", "mean s / attempt",
                        "tree CPU / (cores × wall)", "wall with the tree on ≥ 90 % of the cores",
                        f"wall with {ENDPOINT_LIMIT} attempts running (the endpoint limit)", "machine CPU busy",
                        "other processes' CPU", "bench process CPU s",
                        "load (1 min) submit → end"], rows)


def advice(runs: list[Run]) -> list[str]:
    """Processes per queue and memory per worker, sized from the (a) runs' measurements."""
    import math

    from submissions.worker_sizing import worker_sizing

    lines = []
    for workload in WORKLOADS:
        new = next((run for run in runs if run.workload == workload and run.mode == "a" and run.peak), None)
        if new is None or not new.attempts or not new.most_running or not new.calls or not new.cpu:
            continue
        sizing = worker_sizing([workload.queue])
        cpu_per_attempt = new.cpu / new.attempts
        calls_per_attempt = new.calls / new.attempts
        wait_per_attempt = calls_per_attempt * LATENCY_MEAN
        # A process is busy cpu / (cpu + wait) of its time: this many keep the cores busy.
        fill = math.ceil(CORES * (cpu_per_attempt + wait_per_attempt) / cpu_per_attempt)
        per_attempt = max(0.0, (new.peak_pss - new.idle_pss) / new.most_running) / MIB
        per_process = new.idle_pss / max(1, new.pool) / MIB + per_attempt
        head = (f"- `{workload.queue}` ({workload.env}): an attempt used {cpu_per_attempt:.1f} CPU s and waited "
                f"{wait_per_attempt:.0f} s on {calls_per_attempt:.0f} model call(s), so {fill} processes keep "
                f"{CORES} cores busy; a process holding an attempt takes about {per_process:.0f} MiB (PSS: "
                f"{per_attempt:.0f} MiB for the attempt; the plug-in declares {sizing.attempt_memory_mb}). ")
        if fill <= ENDPOINT_LIMIT:
            lines.append(head + f"The cores are the limit here: {fill} processes per {CORES} cores (`run_worker` "
                         f"gave {new.pool}), about {fill * per_process / 1024:.1f} GiB a worker; more "
                         "processes only wait for the CPU, more cores (or workers on other machines) help.")
        else:
            spare = new.pool - ENDPOINT_LIMIT
            lines.append(head + f"One submission keeps at most {ENDPOINT_LIMIT} processes busy (the endpoint "
                         f"limit), so give the queue {ENDPOINT_LIMIT} processes per submission expected to run at "
                         f"once, up to {fill}, where the cores become the limit: about "
                         f"{ENDPOINT_LIMIT * per_process / 1024:.1f} GiB per {ENDPOINT_LIMIT} processes. `run_worker` "
                         f"gave {new.pool}"
                         + (f"; with one submission its {spare} other processes only took messages and put them "
                            f"back ({new.quick_messages} of the {new.messages} messages here)." if spare > 0 else "."))
    if lines:
        lines.append("- Size against the cores a worker really gets: other work on the same cores (here other "
                     "jobs and PostgreSQL) stretches every CPU-bound attempt.")
    return lines


def report(runs: list[Run], started: float, wanted: list[Workload], command: str, data_note: str) -> str:
    from submissions.worker_sizing import machine_memory_mb

    lines = [
        "# Throughput against slow models",
        "",
        f"- command: `{command}`",
        f"- run: {dt.datetime.now().isoformat(timespec='seconds')} on `{socket.gethostname()}`, "
        f"{CORES} cores ({psutil.cpu_count(logical=False)} physical), {machine_memory_mb() / 1024:.1f} GiB RAM, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}",
        "- load average (1/5/15 min) at start: " + ", ".join(f"{v:.2f}" for v in STARTING_LOAD)
        + "; at the end: " + ", ".join(f"{v:.2f}" for v in os.getloadavg())
        + " (other jobs share these cores)",
        f"- endpoints: `start_server(agent, latency=Latency({LATENCY_MEAN:g}, seed={LATENCY_SEED}))`, a fresh one "
        f"per run (lognormal, spread 0.5, no cap on requests at once); MAGEBENCH_ENDPOINT_CONCURRENCY="
        f"{ENDPOINT_LIMIT} in the workers' environment",
        f"- workloads, one submission of {REPEATS} repeats each, suite `{SUITE}`, subset mini, default settings: "
        + "; ".join(f"{w.name} on `{w.queue}` ({MINI[w.env]} scenarios, {scale.AGENT_FOR_ENV[w.env]} baseline"
                    + (f", a generator per conversation, engine seed {ENGINE_SEED}" if w.env == "football" else "")
                    + ")" for w in wanted),
        f"- {data_note}",
        "- workers: " + "; ".join(f"({r.mode}) `{r.command}`" for r in runs),
        "",
        "## Time",
        "",
        "Wall: submission to the submission's `finished_at` (workers started and answering pings before). CPU "
        "floor: CPU seconds the worker's process tree used from submission to the end, over the cores. Latency "
        "floor: the endpoint's chat requests × the mean latency ÷ the endpoint limit (the same limit for both "
        "workers). The longest attempt's calls, one after another, bound the wall time too, whatever the "
        "workers: `wall / max(floors, longest attempt)` divides by the largest of the three.",
        "",
        *report_table(runs),
        "",
        "## Resources",
        "",
        f"Sampled every {SAMPLE_EVERY} s. RSS is summed over the worker's tree (pages shared between processes "
        "count once per process, so it is an upper bound); idle is before submission. PSS (proportional set "
        f"size: each shared page divided among its sharers) was read every {PSS_EVERY * SAMPLE_EVERY:g} s. "
        "Browsers are Chromium browser processes, in brackets every Chromium process (renderers, zygotes, "
        "utility); engines are pool processes that have loaded gfootball's engine. Attempts running at most: "
        "from the attempts' start and finish times. Machine CPU busy: every process on the machine over the "
        "run; other processes': that less the worker's tree and this bench's process (the endpoint and the "
        "sampling), i.e. other jobs and PostgreSQL. Each run started once the machine was less than the "
        "`--quiet` share busy over 5 s (or after `--settle` seconds of waiting).",
        "",
        *report_resources(runs),
        "",
        "## Notes",
        "",
    ]
    for run in runs:
        extra = []
        if run.not_scored:
            extra.append("not scored: " + ", ".join(f"{n} {kind}" for kind, n in run.not_scored.items()))
        if run.database_restarted:
            extra.append("PostgreSQL restarted during this run (another job's): the workers waited for it")
        if run.recorded_calls != run.calls:
            extra.append(f"attempts recorded {run.recorded_calls} model calls, the endpoint answered {run.calls}")
        lines.append(f"- {run.workload.name} ({run.mode}): mean score {scale.num(run.mean_score, 1)}; the "
                     f"{run.calls} answers waited {run.drawn_latency:.0f} s in all (mean "
                     f"{run.drawn_latency / run.calls if run.calls else 0:.2f} s); machine {run.busy_before:.0f} % "
                     f"busy just before; the worker finished {run.messages} task messages, {run.quick_messages} of "
                     f"them in under 1 s (no attempt claimed); {run.samples} samples, {run.sampler_cpu:.1f} CPU s "
                     "of sampling"
                     + ("; " + "; ".join(extra) if extra else ""))
    for workload in wanted:
        pair = [run for run in runs if run.workload == workload]
        if len(pair) == 2:
            same = pair[0].episodes == pair[1].episodes
            lines.append(f"- {workload.name}: (a) and (b) played {'the same' if same else 'different'} episodes "
                         "(model calls per attempt, by scenario" + ("" if same else ": " + "; ".join(
                             f"{run.mode} {run.episodes}" for run in pair)) + ")")
    lines += ["", "## Deployment advice", "", *advice(runs), "",
              f"Total bench time: {time.perf_counter() - started:.0f} s."]
    return "\n".join(lines) + "\n"


def main() -> None:
    global LATENCY_MEAN
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(w.env for w in WORKLOADS),
                        help="workloads to run, comma-separated (football, sokoban, webui)")
    parser.add_argument("--modes", default="a,b", help="a (run_worker), b (celery --concurrency=2) or both")
    parser.add_argument("--mini", default="",
                        help="scenarios per mini list instead of the bench's, e.g. football=8,webui=3")
    parser.add_argument("--latency", type=float, default=LATENCY_MEAN, help="mean seconds of a model answer")
    parser.add_argument("--timeout", type=float, default=2700.0, help="seconds one run may take")
    parser.add_argument("--quiet", type=float, default=30.0,
                        help="start a run once the machine is less than this %% busy over 5 s")
    parser.add_argument("--settle", type=float, default=300.0, help="seconds to wait at most for that")
    parser.add_argument("--out", type=Path, default=None, help="also write the report to this file")
    parser.add_argument("--keep-data", action="store_true", help="keep worker logs and trajectories")
    args = parser.parse_args()
    names = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = set(names) - {w.env for w in WORKLOADS}
    modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    if unknown or not names or set(modes) - set(MODES) or not modes:
        parser.error("--only takes football, sokoban, webui; --modes takes a, b")
    LATENCY_MEAN = args.latency
    for item in filter(None, (part.strip() for part in args.mini.split(","))):
        env, _, count = item.partition("=")
        if env not in MINI or not count.isdigit() or int(count) < 1:
            parser.error("--mini takes env=count pairs, e.g. football=8,webui=3")
        MINI[env] = int(count)
    wanted = [w for w in WORKLOADS if w.env in names]
    command = "python " + " ".join(["bench/latency_throughput.py", *sys.argv[1:]])

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.perf_counter()
    data_dir = Path(tempfile.mkdtemp(prefix="magebench-latency-"))
    scale.DATABASE_URL = os.environ.get("BENCH_LATENCY_DATABASE_URL",
                                        "postgres://postgres@127.0.0.1:5432/magebench_bench_latency")
    scale.BROKER_URL = "redis://127.0.0.1:6379/14"
    scale.RESOURCES = latency_resources(data_dir)
    scale.SUITE = SUITE
    os.environ["MAGEBENCH_ENDPOINT_CONCURRENCY"] = str(ENDPOINT_LIMIT)
    runs: list[Run] = []
    try:
        scale.log(f"setting up {scale.DATABASE_URL} (data in {data_dir})")
        scale.setup_django(data_dir)
        for workload in wanted:
            for mode in modes:
                runs.append(run_one(workload, mode, data_dir / "logs", args.timeout, args.quiet, args.settle))
        text = report(runs, started, wanted, command.replace("python ", ".venv/bin/python ", 1),
                      f"database `{scale.DATABASE_URL.rsplit('/', 1)[1]}`, broker `{scale.BROKER_URL}`")
        print(text, end="")
        if args.out is not None:
            args.out.write_text(text, encoding="utf-8")
    finally:
        scale.purge_broker()
        if args.keep_data:
            scale.log(f"kept {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
