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
import datetime as dt
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import psutil

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._scale.bare import Bare, DirectModel, endpoint_floor, stdout_to_stderr  # noqa: E402
from bench._scale.report import (  # noqa: E402
    num,
    report_board,
    report_memory,
    report_overhead,
    report_problems,
    report_scaling,
)
from bench._scale.rounds import AGENT_FOR_ENV, BOARDS, MIB, QUEUES, Memory, Round, board_name  # noqa: E402
from bench._scale.workers import SAMPLE_EVERY, TreeSampler, workers_running  # noqa: E402
from bench.board_latency import recreate_database  # noqa: E402

DATABASE_URL = os.environ.get("BENCH_SCALE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/magebench_bench_scale")
BROKER_URL = "redis://127.0.0.1:6379/12"
RESOURCES = ROOT / "fixtures" / "magebench" / "resources"
SUITE = "fixture"
#: The tests' Sokoban frame size; every other setting stays the plug-in's default.
OVERRIDES: dict[str, dict[str, Any]] = {"sokoban": {"resolution": 256}}
#: Taken before Django is set up: the board subprocess must not inherit this run's database or broker.
ORIGINAL_ENV = dict(os.environ)
STARTING_LOAD = os.getloadavg()


def log(message: str) -> None:
    # Progress goes to stderr so stdout carries the report alone.
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


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

    from catalogue.services import scenarios_import

    call_command("migrate", verbosity=0)
    scenarios_import(path=RESOURCES, suite=SUITE, verify=False)


def purge_broker() -> None:
    """Empty the dedicated Redis db: messages left by an interrupted run must not reach new workers."""
    import redis

    redis.Redis.from_url(BROKER_URL).flushdb()


def supported_boards() -> list[tuple[str, str]]:
    from evaluators.base import get_plugin

    return [(env, flow) for env, flow in BOARDS if flow in get_plugin(env).flows]


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


# --- the rounds ----------------------------------------------------------------------------------


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


def run_bare(boards: list[tuple[str, str]], settings: dict[tuple[str, str], dict[str, Any]],
             out_dir: Path) -> dict[tuple[str, str], Bare]:
    """Every mini scenario of each board through run_attempt in this process, with the settings the
    platform's submissions froze, and a fresh baseline per board as each round's endpoints have."""
    from catalogue.models import Scenario
    from evaluators.runner import run_attempt
    from evaluators.settings import EvaluationSettings
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


# --- the report's header, and main ---------------------------------------------------------------


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
        from catalogue.models import Scenario

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
