"""Platform scale on the fixture mini set: real Celery workers, real endpoints, one markdown report.

    .venv/bin/python bench/scale.py [--workers 1,2,4] [--skip-board] [--board-submissions 1000]
                                    [--board-attempts 1449] [--out report.md]

Needs the local PostgreSQL and Redis (127.0.0.1, as the tests do). Uses a database of its own
(``magebench_bench_scale``, dropped and created, or BENCH_SCALE_DATABASE_URL) and Redis db 12
(flushed before each round and at the end), imports the fixture scenarios as suite "fixture", and
serves the baselines (the oracle with the fixture WebUI pages for Sokoban and WebUI, the seeded
random agent for Football, where the oracle has no plan) on local OpenAI-compatible endpoints, a
fresh one per board and round so no round reuses another's solutions.

The mini set is one submission per board (Sokoban Global and Online at 256 px, WebUI Global,
Football Online; repeats=1, other settings default). The report has four sections:

1. the mini set's wall time (submit until every submission is finished) with 1, 2 and 4
   ``celery worker --concurrency=1`` processes consuming every queue: attempts/s, speed-up over the
   first count, and each board's mean attempt duration;
2. the peak memory of one worker per queue (light, browser, engine) over one mini set: RSS of each
   worker's whole process tree (prefork parent, pool child, Chromium), sampled every 0.2 s, and the
   same trees idle before any work;
3. the bare evaluator (``run_attempt`` in this process, the oracle called directly, no HTTP) per
   board, against the platform's time per attempt in the 1-worker round, and their ratio, beside
   the baseline endpoint's own per-request floor (which the platform's time includes);
4. board, analysis and replay latency on 1,000 seeded submissions: ``bench/board_latency.py`` run
   as a subprocess (Django is set up once per process, on one database), its table included.

Only measured numbers are printed; nothing here asserts on time. The database is left in place for
inspection (the next run drops it); ``--keep-data`` also keeps the worker logs and trajectories.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
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
from typing import Any, cast

import psutil

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.board_latency import recreate_database  # noqa: E402

DATABASE_URL = os.environ.get("BENCH_SCALE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/magebench_bench_scale")
BROKER_URL = "redis://127.0.0.1:6379/12"
RESOURCES = ROOT / "fixtures" / "magebench" / "resources"
SUITE = "fixture"
BOARDS = [("sokoban", "global"), ("sokoban", "online"), ("webui", "global"), ("football", "online")]
#: The tests' Sokoban frame size; every other setting stays the plug-in's default.
OVERRIDES: dict[str, dict[str, Any]] = {"sokoban": {"resolution": 256}}
QUEUES = ("light", "browser", "engine")
SAMPLE_EVERY = 0.2
MIB = 1024 * 1024
#: Taken before Django is set up: the board subprocess must not inherit this run's database or broker.
ORIGINAL_ENV = dict(os.environ)
STARTING_LOAD = os.getloadavg()


def log(message: str) -> None:
    # Progress goes to stderr so stdout carries the report alone.
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def board_name(env: str, flow: str) -> str:
    return f"{env} {flow}"


# --- Django, broker, endpoints -------------------------------------------------------------------


def setup_django(data_dir: Path) -> None:
    name = DATABASE_URL.rsplit("/", 1)[1]
    # Other sessions' test databases live on the same server; never drop one of them by mistake.
    if name.startswith(("test_", "magebench_me")) or name in ("magebench", "postgres"):
        raise SystemExit(f"refusing to drop the database {name!r}; choose another BENCH_SCALE_DATABASE_URL")
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DATABASE_URL": DATABASE_URL,
        "CELERY_BROKER_URL": BROKER_URL,
        "MAGEBENCH_DATA_DIR": str(data_dir),
        "MAGEBENCH_MEDIA_ROOT": str(data_dir / "media"),
        "MAGEBENCH_SCENARIO_ROOT": str(data_dir / "scenarios"),
    })
    recreate_database(DATABASE_URL)
    import django

    django.setup()
    from django.core.management import call_command

    from leaderboard.services import scenarios_import

    call_command("migrate", verbosity=0)
    scenarios_import(path=RESOURCES, suite=SUITE, verify=False)


def purge_broker() -> None:
    """Empty the dedicated Redis db: messages left by an interrupted run must not reach new workers."""
    import redis

    redis.Redis.from_url(BROKER_URL).flushdb()


def supported_boards() -> list[tuple[str, str]]:
    from evaluators.base import get_plugin

    return [(env, flow) for env, flow in BOARDS if flow in get_plugin(env).flows]


#: The baseline each environment is played by: the oracle where it has a plan (Sokoban, WebUI);
#: it has none for Football, whose engine only steps when replies hold actions, so the seeded
#: random agent plays there.
AGENT_FOR_ENV = {"sokoban": "oracle", "webui": "oracle", "football": "random"}


def baseline(env: str) -> Any:
    from evaluators.baselines.agents import make_agent

    # Without the pages the WebUI oracle cannot see its targets and would score nothing.
    return make_agent(AGENT_FOR_ENV[env], seed=0, pages=[RESOURCES / "WebUI"])


@contextmanager
def endpoints(boards: list[tuple[str, str]]) -> Iterator[dict[tuple[str, str], Any]]:
    """A fresh baseline endpoint per board: the Sokoban oracle caches solutions, so none is shared."""
    from evaluators.baselines.server import start_server

    servers: dict[tuple[str, str], Any] = {}
    try:
        for board in boards:
            servers[board] = start_server(baseline(board[0]))
        yield servers
    finally:
        for server in servers.values():
            server.stop()


# --- workers -------------------------------------------------------------------------------------


@dataclass
class Worker:
    """A `celery worker` subprocess in a session of its own, so its whole group can be signalled."""

    label: str
    hostname: str
    process: subprocess.Popen[bytes]
    log: Path

    def tree(self) -> list[psutil.Process]:
        try:
            main = psutil.Process(self.process.pid)
            return [main, *main.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def rss(self) -> tuple[int, int]:
        """The RSS summed over the process tree (bytes) and how many processes it has."""
        total = count = 0
        for process in self.tree():
            try:
                total += process.memory_info().rss
                count += 1
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        return total, count

    def stop(self) -> None:
        # Playwright starts Chromium in a process group of its own: its pids are collected first so
        # nothing of this worker outlives it when the group signal does not reach them.
        descendants = self.tree()[1:]
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)
        alive = [p for p in descendants if p.is_running()]
        for process in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.terminate()
        _, still = psutil.wait_procs(alive, timeout=5)
        for process in still:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()

    def output(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""


@contextmanager
def workers_running(specs: list[tuple[str, str | None]], logs: Path) -> Iterator[list[Worker]]:
    """Start one worker per (label, queue or None for every queue) and wait until each answers a ping."""
    from config.celery import app

    logs.mkdir(parents=True, exist_ok=True)
    environ = dict(os.environ)
    started: list[Worker] = []
    try:
        for label, queue in specs:
            hostname = f"{label}-{os.getpid()}@{socket.gethostname()}"
            command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel=INFO",
                       "--concurrency=1", "--pool=prefork", f"--hostname={hostname}", "--without-gossip",
                       "--without-mingle"]
            if queue is not None:
                command += ["-Q", queue]
            path = logs / f"worker-{label}.log"
            with path.open("w") as out:
                process = subprocess.Popen(command, cwd=ROOT, env=environ, stdout=out, stderr=subprocess.STDOUT,
                                           start_new_session=True)
            started.append(Worker(label=label, hostname=hostname, process=process, log=path))
        # Started together and waited for together: startup is not what is measured.
        waiting = {w.hostname for w in started}
        deadline = time.monotonic() + 120
        while waiting and time.monotonic() < deadline:
            dead = [w for w in started if w.process.poll() is not None]
            if dead:
                raise RuntimeError(f"worker {dead[0].label} exited at startup:\n{dead[0].output()}")
            for reply in app.control.ping(sorted(waiting), timeout=0.5) or []:
                waiting -= set(reply)
        if waiting:
            raise RuntimeError(f"workers did not answer a ping within 120 s: {sorted(waiting)}")
        yield started
    finally:
        for worker in started:
            worker.stop()


# --- one mini set --------------------------------------------------------------------------------


@dataclass
class Round:
    label: str
    workers: int
    submitted_at: float
    finished: bool
    wall: float | None
    #: The 1-minute load average at submission: other sessions share these cores too.
    load: float = 0.0
    rows: list[dict[str, Any]] = field(default_factory=list)
    settings: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    @property
    def attempts(self) -> int:
        return len(self.rows)

    def by_board(self, board: tuple[str, str]) -> list[dict[str, Any]]:
        return [row for row in self.rows if (row["env"], row["flow"]) == board]

    def failures(self) -> list[dict[str, Any]]:
        return [row for row in self.rows if row["status"] != "scored"]


def run_mini_set(label: str, workers: int, boards: list[tuple[str, str]], timeout: float) -> Round:
    """Submit one mini board each against fresh endpoints and wait until every submission is finished."""
    from django.db.models import F

    from accounts.services import team_get_or_create
    from submissions.models import Attempt, Submission
    from submissions.services import model_entry_upsert, submission_create_endpoint

    with endpoints(boards) as servers:
        model = model_entry_upsert(team=team_get_or_create(name="Scale bench"), name=f"Oracle ({label})")
        load = os.getloadavg()[0]
        submitted_at = time.time()
        ids = [submission_create_endpoint(model=model, env=env, flow=flow, subset="mini", suite=SUITE,
                                          endpoint_url=servers[(env, flow)].url, endpoint_model=AGENT_FOR_ENV[env],
                                          settings={"repeats": 1, **OVERRIDES.get(env, {})}).id
               for env, flow in boards]
        active = [Submission.Status.QUEUED, Submission.Status.RUNNING]
        deadline = time.monotonic() + timeout
        while Submission.objects.filter(id__in=ids, status__in=active).exists():
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
    submissions = list(Submission.objects.filter(id__in=ids))
    finished = all(not s.is_active for s in submissions)
    # The database's finishing time, not this loop's polling, ends the measurement.
    ends = [s.finished_at.timestamp() for s in submissions if s.finished_at is not None]
    wall = max(ends) - submitted_at if finished else None
    rows = cast(list[dict[str, Any]], list(Attempt.objects.filter(submission_id__in=ids).values(
        "id", "status", "score", "steps", "model_calls", "duration_seconds", "started_at", "finished_at", "tries",
        "error_kind", "error_message", "worker", env=F("submission__environment_id"), flow=F("submission__flow"))))
    return Round(label=label, workers=workers, submitted_at=submitted_at, finished=finished, wall=wall, load=load,
                 rows=rows, settings={(s.environment_id, s.flow): dict(s.settings) for s in submissions})


# --- section 2: memory per worker kind -----------------------------------------------------------


class TreeSampler(threading.Thread):
    """Records the largest process-tree RSS of each worker, sampled every SAMPLE_EVERY seconds."""

    def __init__(self, workers: list[Worker]) -> None:
        super().__init__(name="rss-sampler", daemon=True)
        self.workers = workers
        self.peak: dict[str, int] = {w.label: 0 for w in workers}
        self.processes_at_peak: dict[str, int] = {w.label: 0 for w in workers}
        self.samples = 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            started = time.monotonic()
            for worker in self.workers:
                rss, count = worker.rss()
                if rss > self.peak[worker.label]:
                    self.peak[worker.label], self.processes_at_peak[worker.label] = rss, count
            self.samples += 1
            # Sampling a tree with Chromium in it takes a while: keep the cadence, not the pause.
            self._done.wait(max(0.0, SAMPLE_EVERY - (time.monotonic() - started)))

    def stop(self) -> None:
        self._done.set()
        self.join(timeout=5)


@dataclass
class Memory:
    idle: dict[str, int]
    peak: dict[str, int]
    processes_idle: dict[str, int]
    processes_at_peak: dict[str, int]
    samples: int
    round: Round


def run_memory_round(boards: list[tuple[str, str]], logs: Path, timeout: float) -> Memory:
    purge_broker()
    with workers_running([(f"mem-{queue}", queue) for queue in QUEUES], logs) as workers:
        idle: dict[str, int] = {w.label: 0 for w in workers}
        processes_idle: dict[str, int] = {}
        for _ in range(5):
            for worker in workers:
                rss, count = worker.rss()
                if rss >= idle[worker.label]:
                    idle[worker.label], processes_idle[worker.label] = rss, count
            time.sleep(SAMPLE_EVERY)
        sampler = TreeSampler(workers)
        sampler.start()
        try:
            measured = run_mini_set("memory", len(workers), boards, timeout)
        finally:
            sampler.stop()
    return Memory(idle=idle, peak=sampler.peak, processes_idle=processes_idle,
                  processes_at_peak=sampler.processes_at_peak, samples=sampler.samples, round=measured)


# --- section 3: the bare evaluator ---------------------------------------------------------------


class DirectModel:
    """The ChatModel protocol answered by a baseline agent in this process: no HTTP, JSON or retries."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def complete(self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int,
                 top_p: float | None = None, frequency_penalty: float | None = None) -> Any:
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


def run_bare(boards: list[tuple[str, str]], settings: dict[tuple[str, str], dict[str, Any]],
             out_dir: Path) -> dict[tuple[str, str], Bare]:
    """Every mini scenario of each board through run_attempt in this process, with the settings the
    platform's submissions froze, and a fresh baseline per board as each round's endpoints have."""
    from evaluators.runner import run_attempt
    from evaluators.settings import EvaluationSettings
    from leaderboard.models import Scenario
    from submissions.engine import scenario_spec

    # Read before any episode: a WebUI episode starts Playwright on this thread, and its event loop
    # makes Django's ORM guard refuse queries from here afterwards.
    specs = {board: [scenario_spec(s) for s in Scenario.objects.filter(
        environment_id=board[0], suite=SUITE, **Scenario.subset_filter("mini")).order_by("key")] for board in boards}
    results: dict[tuple[str, str], Bare] = {}
    for board in boards:
        env, flow = board
        model = DirectModel(baseline(env))
        results[board] = bare = Bare()
        for index, spec in enumerate(specs[board]):
            started = time.perf_counter()
            try:
                frozen = EvaluationSettings.from_mapping(settings[board], env, flow, platform=True)
                result = run_attempt(scenario=spec, flow=flow, settings=frozen, model=model,
                                     out_dir=out_dir / f"{env}-{flow}-{index}")
            except Exception as exc:  # noqa: BLE001 - reported, and the other scenarios still measured
                bare.failures.append(f"{spec.key}: {type(exc).__name__}: {exc}")
                continue
            bare.times.append(time.perf_counter() - started)
            bare.scores.append(result.score)
        log(f"bare {board_name(env, flow)}: {len(bare.times)} attempts in {sum(bare.times):.1f} s")
    return results


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


def slot_times(measured: Round) -> dict[int, float]:
    """On one single-slot worker attempts run one after another, so the time from the previous
    attempt's end to this one's end is all the platform spent on it: delivery, claim, episode,
    HTTP, writes. The first attempt's slot starts at submission."""
    ordered = sorted((row for row in measured.rows if row["finished_at"] is not None),
                     key=lambda row: row["finished_at"])
    slots: dict[int, float] = {}
    previous = measured.submitted_at
    for row in ordered:
        end = row["finished_at"].timestamp()
        slots[row["id"]] = end - previous
        previous = end
    return slots


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


# --- section 4: board latency --------------------------------------------------------------------


def run_board(submissions: int, attempts: int, data_dir: Path) -> tuple[list[str], float, int]:
    """bench/board_latency.py in a subprocess; returns its printed lines (less progress), seconds, exit code."""
    environ = {k: v for k, v in ORIGINAL_ENV.items()
               if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "MAGEBENCH_MEDIA_ROOT", "MAGEBENCH_SCENARIO_ROOT")}
    # Its replay attempt is queued on commit as well as run in-process: the file-system broker in its
    # own data folder keeps that message away from every Redis queue.
    environ.update(DJANGO_SETTINGS_MODULE="config.settings.base", MAGEBENCH_DATA_DIR=str(data_dir / "board"))
    command = [sys.executable, str(ROOT / "bench" / "board_latency.py"), "--submissions", str(submissions),
               "--attempts", str(attempts)]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env=environ, stdout=subprocess.PIPE, text=True)
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            log(f"board_latency: {line.rstrip()}")
            if not line.startswith("  seeded"):
                lines.append(line.rstrip())
        code = process.wait()
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
    return lines, time.perf_counter() - started, code


# --- the report ----------------------------------------------------------------------------------


def table(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def num(value: float | None, digits: int = 2, suffix: str = "") -> str:
    return "n/a" if value is None else f"{value:.{digits}f}{suffix}"


def first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:200]


def report_header(boards: list[tuple[str, str]], counts: dict[tuple[str, str], int],
                  reference: Round | None) -> list[str]:
    cores = os.cpu_count()
    physical = psutil.cpu_count(logical=False)
    lines = [
        "# MageBench scale benchmark",
        "",
        f"- run: {dt.datetime.now().isoformat(timespec='seconds')} on `{socket.gethostname()}`, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}",
        f"- **CPU: {cores} cores** (`os.cpu_count()`; {physical} physical), "
        f"{psutil.virtual_memory().total / MIB / 1024:.1f} GiB RAM: every worker, the oracle endpoints, "
        "PostgreSQL and Redis share them",
        "- load average (1/5/15 min) when this run started: " + ", ".join(f"{x:.2f}" for x in STARTING_LOAD)
        + " (anything above 0 is other work on the same cores)",
        f"- database `{DATABASE_URL.rsplit('/', 1)[1]}` (local PostgreSQL), broker `{BROKER_URL}`",
        "- mini set = one submission per board, suite `fixture`, subset mini, repeats=1: "
        + ", ".join(f"{board_name(*b)} ({counts[b]} scenarios)" for b in boards)
        + f"; {sum(counts.values())} attempts per round",
        "- models: the oracle baseline for Sokoban and WebUI (`make_agent('oracle', pages=[fixture WebUI pages])`), "
        "the seeded random baseline for Football (the oracle has no Football plan), each served by "
        "`evaluators.baselines.server.start_server` over HTTP, a fresh server per board and round",
    ]
    if reference is not None:
        shown = ("resolution", "max_loop", "max_image", "parse_retries", "repeats")
        lines.append("- frozen settings: " + "; ".join(
            f"{board_name(*b)}: " + ", ".join(f"{k}={v}" for k, v in sorted(reference.settings.get(b, {}).items())
                                               if k in shown)
            for b in boards))
    return lines


def report_scaling(rounds: list[Round], boards: list[tuple[str, str]], timeout: float) -> list[str]:
    lines = ["", "## 1. Mini-set wall time by worker count", "",
             "Each worker: `celery -A config worker --concurrency=1 --pool=prefork --without-gossip "
             "--without-mingle` with no `-Q` (it consumes light, browser and engine). Wall time runs from "
             "the first submission to the last submission's `finished_at`; workers were started and "
             "answering pings before it began.", ""]
    reference = rounds[0] if rounds and rounds[0].finished else None
    rows = []
    for measured in rounds:
        scored = sum(1 for row in measured.rows if row["status"] == "scored")
        wall = measured.wall
        rows.append([
            str(measured.workers),
            num(wall, 1) if measured.finished else f"unfinished after {timeout:.0f}",
            f"{measured.attempts} ({scored} scored)",
            num(measured.attempts / wall if wall else None, 3),
            num(reference.wall / wall if reference and reference.wall and wall else None, 2, "×"),
            num(measured.load, 2),
        ])
    ref_label = f"{rounds[0].workers} worker{'s' if rounds and rounds[0].workers != 1 else ''}" if rounds else "-"
    lines += table(["workers", "wall s", "attempts", "attempts/s", f"speed-up vs {ref_label}",
                    "load avg (1 min) at submit"], rows)
    lines += ["", "Mean attempt duration (`Attempt.duration_seconds`: the episode inside `attempt_run`, HTTP "
              "included) per board and worker count, with what the attempts did in the first round:", ""]
    headers = ["board", *[f"N={r.workers} s" for r in rounds], "engine steps / attempt", "model calls / attempt",
               "mean score"]
    rows = []
    for board in boards:
        first = rounds[0].by_board(board) if rounds else []
        rows.append([
            board_name(*board),
            *[num(mean([row["duration_seconds"] for row in r.by_board(board) if row["duration_seconds"] is not None]))
              for r in rounds],
            num(mean([row["steps"] for row in first]), 1),
            num(mean([row["model_calls"] for row in first]), 1),
            num(mean([row["score"] for row in first if row["score"] is not None]), 1),
        ])
    lines += table(headers, rows)
    return lines


def report_memory(memory: Memory, timeout: float) -> list[str]:
    from submissions.selectors import queue_for

    served: dict[str, list[str]] = {queue: [] for queue in QUEUES}
    for env in sorted({env for env, _ in BOARDS}):
        served.setdefault(queue_for(env), []).append(env)
    measured = memory.round
    lines = ["", "## 2. Peak memory per worker kind", "",
             "Three workers, one per queue (`-Q light`, `-Q browser`, `-Q engine`, `--concurrency=1`), ran one "
             f"mini set ({measured.attempts} attempts, wall "
             f"{num(measured.wall, 1) + ' s' if measured.finished else f'unfinished after {timeout:.0f} s'}, "
             f"load average {measured.load:.2f} at submit). "
             f"RSS summed over each worker's process tree (main process, pool child and their children such as "
             f"Playwright's driver and Chromium), sampled every {SAMPLE_EVERY} s ({memory.samples} samples); idle "
             "is the largest of 5 samples taken after the workers answered pings, before the first submission. "
             "A sum of RSS counts pages shared between processes (forked pool child, Chromium's zygote) once "
             "per process, so it is an upper bound of what the tree really holds.", ""]
    rows = []
    for queue in QUEUES:
        label = f"mem-{queue}"
        idle, peak = memory.idle.get(label, 0), memory.peak.get(label, 0)
        rows.append([queue, ", ".join(served[queue]) or "-", num(idle / MIB, 0), num(peak / MIB, 0),
                     num((peak - idle) / MIB, 0), f"{memory.processes_idle.get(label, 0)} → "
                     f"{memory.processes_at_peak.get(label, 0)}"])
    lines += table(["queue", "environments", "idle MiB", "peak MiB", "peak − idle MiB", "processes idle → at peak"],
                   rows)
    return lines


def report_overhead(bare: dict[tuple[str, str], Bare], reference: Round | None,
                    boards: list[tuple[str, str]], floor: float | None) -> list[str]:
    lines = ["", "## 3. Evaluator overhead per environment", "",
             "Bare: `run_attempt` in this process for each mini scenario, with the settings the platform's "
             "submissions froze and a model object that calls a fresh baseline directly (no HTTP, no JSON, no "
             "database, no Celery). Platform: the 1-worker round of section 1, per attempt the time from the "
             "previous attempt's end (or the submission) to its own end — Celery delivery, claim, episode with "
             "HTTP round trips, heartbeats and result writes; `attempt_run` is the part `Attempt.duration_seconds` "
             "records.", ""]
    single = reference is not None and reference.workers == 1 and reference.finished
    slots = slot_times(reference) if single and reference is not None else {}
    rows = []
    totals = {"bare": 0.0, "platform": 0.0, "n_bare": 0, "n_platform": 0}
    for board in boards:
        measured = bare.get(board, Bare())
        platform_rows = reference.by_board(board) if single and reference is not None else []
        board_slots = [slots[row["id"]] for row in platform_rows if row["id"] in slots]
        bare_mean, platform_mean = mean(measured.times), mean(board_slots)
        calls = mean([row["model_calls"] for row in platform_rows])
        totals["bare"] += sum(measured.times)
        totals["platform"] += sum(board_slots)
        totals["n_bare"] += len(measured.times)
        totals["n_platform"] += len(board_slots)
        rows.append([
            board_name(*board),
            f"{len(measured.times)} / {len(board_slots)}",
            num(bare_mean),
            num(platform_mean),
            num(mean([row["duration_seconds"] for row in platform_rows if row["duration_seconds"] is not None])),
            num(platform_mean / bare_mean if platform_mean and bare_mean else None, 2, "×"),
            num(platform_mean - bare_mean if platform_mean is not None and bare_mean is not None else None),
            num(calls, 0),
            num(calls * floor if calls is not None and floor else None),
            f"{num(mean(measured.scores), 1)} / "
            f"{num(mean([row['score'] for row in platform_rows if row['score'] is not None]), 1)}",
        ])
    if totals["n_bare"] and totals["n_platform"]:
        bare_all = totals["bare"] / totals["n_bare"]
        platform_all = totals["platform"] / totals["n_platform"]
        rows.append(["**all attempts**", f"{totals['n_bare']} / {totals['n_platform']}", num(bare_all),
                     num(platform_all), "", num(platform_all / bare_all, 2, "×"), num(platform_all - bare_all),
                     "", "", ""])
    lines += table(["board", "attempts bare / platform", "bare s/attempt", "platform s/attempt",
                    "of which attempt_run s", "platform / bare", "platform − bare s", "model calls / attempt",
                    "calls × endpoint floor s", "mean score bare / platform"], rows)
    if floor is not None:
        lines += ["", f"Endpoint floor: a one-word request from `ChatClient` to a baseline server takes "
                  f"{floor * 1000:.1f} ms (median of 30); paid once per model call, it is the "
                  "`calls × endpoint floor` column, the endpoint's share rather than the platform's."]
    if not single:
        lines += ["", "No finished 1-worker round (run with `--workers` starting at 1): the platform column is empty."]
    return lines


def report_board(board: tuple[list[str], float, int] | None, submissions: int, attempts: int) -> list[str]:
    lines = ["", f"## 4. Board p95 at {submissions:,} submissions", ""]
    if board is None:
        return lines + ["Skipped (`--skip-board`)."]
    output, seconds, code = board
    lines += [f"`bench/board_latency.py --submissions {submissions} --attempts {attempts}` run as a subprocess "
              f"on its own database (`magebench_bench`) in {seconds:.0f} s (seeding included), exit code {code}. "
              "Its output, less the seeding progress lines (p50/p95 through Django's test client of 5 cold "
              "requests, each the first after the boards changed, and of 20 warm ones served from the board "
              "cache; SQL queries of a warm request):", "", "```", *output, "```"]
    return lines


def report_problems(rounds: list[Round], memory: Memory | None, bare: dict[tuple[str, str], Bare],
                    boards: list[tuple[str, str]], problems: list[str]) -> list[str]:
    notes = list(problems)
    for measured in [*rounds, *([memory.round] if memory else [])]:
        if not measured.finished:
            left = sum(1 for row in measured.rows if row["status"] in ("pending", "running", "retrying"))
            notes.append(f"round {measured.label}: not finished in time, {left} attempt(s) still active")
        for row in measured.failures():
            notes.append(f"round {measured.label}: attempt {row['id']} ({board_name(row['env'], row['flow'])}) "
                         f"{row['status']} after {row['tries']} tries: {row['error_kind']} "
                         f"{first_line(row['error_message'])}")
        retried = [row for row in measured.rows if row["tries"] > 1]
        if retried:
            notes.append(f"round {measured.label}: {len(retried)} attempt(s) needed more than one try")
    for board, bare_run in bare.items():
        notes += [f"bare {board_name(*board)}: {failure}" for failure in bare_run.failures]
    if rounds:
        for board in boards:
            rows = rounds[0].by_board(board)
            if rows and all(row["steps"] == 0 for row in rows):
                calls = mean([row["model_calls"] for row in rows]) or 0
                notes.append(f"{board_name(*board)}: the {AGENT_FOR_ENV[board[0]]} baseline made no move "
                             f"({calls:.0f} model calls, 0 steps per attempt): these times measure the flow's "
                             "model-call loop, not the environment's stepping.")
            played = bare.get(board)
            bare_score = statistics.fmean(played.scores) if played and played.scores else None
            platform_score = statistics.fmean([r["score"] or 0.0 for r in rows]) if rows else None
            if bare_score is not None and platform_score is not None and abs(bare_score - platform_score) > 1e-6:
                notes.append(f"{board_name(*board)}: the bare and platform runs played different episodes (mean "
                             f"score {bare_score:.1f} against {platform_score:.1f}; the {AGENT_FOR_ENV[board[0]]} "
                             "baseline's replies depend on its random state), so its platform / bare ratio compares "
                             "episodes of different lengths, not overhead alone.")
    return ["", "## Problems and notes", "", *([f"- {note}" for note in notes] or ["- none"])]


# --- main ----------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2,4", help="worker counts of section 1, comma-separated")
    parser.add_argument("--skip-board", action="store_true", help="leave out section 4 (board latency)")
    parser.add_argument("--board-submissions", type=int, default=1000)
    parser.add_argument("--board-attempts", type=int, default=1449)
    parser.add_argument("--round-timeout", type=float, default=1800.0, help="seconds one mini set may take")
    parser.add_argument("--out", type=Path, default=None, help="also write the report to this file")
    parser.add_argument("--keep-data", action="store_true", help="keep worker logs and trajectories")
    args = parser.parse_args()
    counts_wanted = [int(n) for n in args.workers.split(",") if n.strip()]
    if not counts_wanted or min(counts_wanted) < 1:
        parser.error("--workers takes positive counts, e.g. 1,2,4")

    # A SIGTERM must still run the clean-up below (workers, endpoints, the Redis db).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.perf_counter()
    data_dir = Path(tempfile.mkdtemp(prefix="magebench-scale-"))
    rounds: list[Round] = []
    memory: Memory | None = None
    bare: dict[tuple[str, str], Bare] = {}
    board: tuple[list[str], float, int] | None = None
    floor: float | None = None
    problems: list[str] = []
    try:
        log(f"setting up {DATABASE_URL} and the fixture scenarios (data in {data_dir})")
        setup_django(data_dir)
        from leaderboard.models import Scenario

        boards = supported_boards()
        for env, flow in BOARDS:
            if (env, flow) not in boards:
                problems.append(f"{board_name(env, flow)}: the plug-in has no such flow; left out")
        counts = {b: Scenario.objects.filter(environment_id=b[0], suite=SUITE, **Scenario.subset_filter("mini")).count()
                  for b in boards}
        for n in counts_wanted:
            purge_broker()
            log(f"section 1: {n} worker(s)")
            try:
                with workers_running([(f"scale{n}-{i + 1}", None) for i in range(n)], data_dir / "logs") as _:
                    measured = run_mini_set(f"{n} worker(s)", n, boards, args.round_timeout)
            except RuntimeError as exc:
                problems.append(f"{n} worker(s): {exc}")
                continue
            rounds.append(measured)
            log(f"  {measured.attempts} attempts, wall {num(measured.wall, 1)} s, "
                f"{len(measured.failures())} not scored")
        log("section 2: one worker per queue, sampling RSS")
        try:
            memory = run_memory_round(boards, data_dir / "logs", args.round_timeout)
            log(f"  peaks (MiB): {', '.join(f'{k}={v / MIB:.0f}' for k, v in memory.peak.items())}")
        except RuntimeError as exc:
            problems.append(f"memory round: {exc}")
        reference = rounds[0] if rounds else None
        settings = reference.settings if reference else {}
        if settings:
            log("section 3: bare evaluator in-process")
            with stdout_to_stderr():
                bare = run_bare(boards, settings, data_dir / "bare")
            floor = endpoint_floor()
            log(f"endpoint floor: {floor * 1000:.1f} ms")
        else:
            problems.append("no finished round froze settings for the bare evaluator; section 3 skipped")
        purge_broker()
        if not args.skip_board:
            log(f"section 4: board_latency.py with {args.board_submissions} submissions")
            board = run_board(args.board_submissions, args.board_attempts, data_dir)
            if board[2] != 0:
                problems.append(f"bench/board_latency.py exited with code {board[2]}")
        lines = report_header(boards, counts, reference)
        lines += report_scaling(rounds, boards, args.round_timeout)
        if memory is not None:
            lines += report_memory(memory, args.round_timeout)
        lines += report_overhead(bare, reference, boards, floor)
        lines += report_board(board, args.board_submissions, args.board_attempts)
        lines += report_problems(rounds, memory, bare, boards, problems)
        lines += ["", f"Total run time: {time.perf_counter() - started:.0f} s."]
        text = "\n".join(lines) + "\n"
        print(text, end="")
        if args.out is not None:
            args.out.write_text(text, encoding="utf-8")
    finally:
        purge_broker()
        if args.keep_data:
            log(f"kept {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
