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
import json
import os
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import paper_mini, scale  # noqa: E402
from bench._latency.report import report  # noqa: E402
from bench._latency.runs import (  # noqa: E402
    ENDPOINT_LIMIT,
    ENGINE_SEED,
    LATENCY_MEAN,
    LATENCY_SEED,
    MIB,
    MINI,
    MODES,
    REPEATS,
    SUITE,
    WORKLOADS,
    Run,
    Workload,
    at_once,
    drawn_latency,
    saturated_seconds,
)
from bench._latency.trees import (  # noqa: E402
    TreeWatch,
    display,
    machine_busy,
    messages_handled,
    pool_size,
    postgres_started,
    settle,
    worker_command,
    worker_running,
)
from bench._scale.report import num  # noqa: E402
from bench.seeded_conversations import ConversationRandomAgent  # noqa: E402


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


# --- one run -------------------------------------------------------------------------------------


def run_one(workload: Workload, mode: str, logs: Path, timeout: float, quiet: float, settle_wait: float,
            latency: float) -> Run:
    from django.db import transaction
    from django.db.models import Count

    from accounts.services import team_get_or_create
    from evaluators.baselines.server import Latency, start_server
    from submissions.models import Attempt, Submission
    from submissions.services import model_entry_upsert, submission_create_endpoint

    label = f"{workload.env}-{mode}"
    hostname = f"latency-{label}-{os.getpid()}@{socket.gethostname()}"
    command = worker_command(mode, workload.queue, hostname)
    measured = Run(workload=workload, mode=mode, command=display(command), latency=latency)
    measured.busy_before = settle(quiet, settle_wait)
    scale.purge_broker()
    restarted = postgres_started()
    # Random Football replies from one generator per conversation and a fixed engine seed: (a) and (b)
    # play the same episodes, whatever order their requests arrive in.
    agent = ConversationRandomAgent(seed=0) if workload.env == "football" else scale.baseline(workload.env)
    with start_server(agent, latency=Latency(latency, seed=LATENCY_SEED)) as server, \
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
    measured.drawn_latency = drawn_latency(measured.calls, latency)
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
    longest = max(rows, key=lambda row: row["model_calls"] or 0, default=None)
    if longest and longest["started_at"] and longest["finished_at"]:
        measured.longest_started = (longest["started_at"] - submission.created_at).total_seconds()
        measured.longest_took = (longest["finished_at"] - longest["started_at"]).total_seconds()
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
    scale.log(f"{workload.name} ({mode}): wall {num(measured.wall, 1)} s, {measured.calls} calls, "
              f"CPU {measured.cpu:.0f} s, peak {measured.peak.rss / MIB:.0f} MiB")
    return measured


def main() -> None:
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
                runs.append(run_one(workload, mode, data_dir / "logs", args.timeout, args.quiet, args.settle,
                                    args.latency))
        text = report(runs, started, wanted, command.replace("python ", ".venv/bin/python ", 1),
                      f"database `{scale.DATABASE_URL.rsplit('/', 1)[1]}`, broker `{scale.BROKER_URL}`", args.latency)
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
