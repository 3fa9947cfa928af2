"""Chaos: teams keep submitting while workers, the broker, the database's connections and the web
process are killed at random; afterwards every attempt must have ended once and every board must be
what its stored attempts say.

    .venv/bin/python bench/chaos.py --minutes 3 --seed 1 [--workers 3] [--out bench/reports/chaos.txt]

Everything runs as local processes the bench starts itself: Celery workers (``celery -A config
worker``, two pool processes each), Celery beat (the watchdog, every 2 s), the web process
(``manage.py runserver --noreload``) and a private ``redis-server --port 6390 --save ''`` as the
broker (db 11); the database is ``magebench_chaos`` on the machine's PostgreSQL (dropped and created).
The shared PostgreSQL and Redis servers are never restarted: a database restart is simulated by
``pg_terminate_backend`` on every connection to the bench's database (what a restart does to its
clients), a broker restart by killing the private redis-server (which comes back empty) or by
FLUSHDB of the bench's db.

Teams (each its own baseline endpoint on Sokoban Online, mini, one repeat; every answer waits a
seeded lognormal draw of mean 0.3 s): Steady (the oracle), Flaky (the oracle; every 4th request a
500), Garbled (the random agent; every 5th reply garbage), Throttled (the oracle; every 6th a 429),
and Uploader, who uploads the oracle's runs in the official layout. A submitter adds one submission
(ten attempts) every --submit-pause s (seeded; 30-60 by default, about what three workers on two
cores play, so the queue drains soon after the chaos); the chaos loop, every 5-20 s (seeded), does
one of: SIGKILL a worker's process group (restarted 2 s later), SIGTERM a worker (its stop time is
measured; restarted), kill the private redis-server (restarted empty), FLUSHDB, terminate the
database's connections, restart the web process. A poller reads the home page and the queue page every 0.5 s throughout.

After the chaos the workers are left alone until every submission has finished (or --drain s), and
the bench checks: no attempt left waiting or running (lost); every scored attempt's trajectory is
its last try's (a second try never wrote over it); no scored attempt carries an infrastructure
error, no infrastructure failure has a score; every stored board result equals a rebuild from the
stored attempts (``submission_result_rebuild``, what ``manage.py rebuild_results`` runs); no
server error (5xx) outside 5 s after a database kill. It prints the figures and writes them to --out;
it exits 1 when a check fails.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.board_latency import recreate_database  # noqa: E402

DB_NAME = "magebench_chaos"
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
REDIS_PORT = 6390
REDIS_DB = 11
RESOURCES = ROOT / "fixtures" / "magebench" / "resources"
#: Fast watchdog and heartbeats, so a killed worker's attempts come back within seconds.
FAST = {"MAGEBENCH_HEARTBEAT_EVERY_SECONDS": "1", "MAGEBENCH_STALLED_AFTER_SECONDS": "15",
        "MAGEBENCH_WATCHDOG_EVERY_SECONDS": "2", "MAGEBENCH_WORKER_BEAT_SECONDS": "5"}
DB_KILL_WINDOW = 5.0
EVENTS = ("worker_kill", "worker_stop", "redis_restart", "redis_flush", "db_terminate", "web_restart")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Procs:
    """The processes the bench starts, restarts and kills; all in sessions of their own."""

    env: dict[str, str]
    logs: Path
    redis_port: int
    web_port: int
    workers: dict[int, subprocess.Popen] = field(default_factory=dict)
    generation: int = 0
    redis: subprocess.Popen | None = None
    web: subprocess.Popen | None = None
    beat: subprocess.Popen | None = None
    stop_seconds: list[float] = field(default_factory=list)

    def _start(self, name: str, argv: list[str]) -> subprocess.Popen:
        out = (self.logs / f"{name}.log").open("a")
        return subprocess.Popen(argv, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)

    def start_redis(self) -> None:
        self.redis = self._start("redis", ["redis-server", "--port", str(self.redis_port), "--save", "",
                                           "--appendonly", "no", "--bind", "127.0.0.1"])
        import redis

        client = redis.Redis(port=self.redis_port)
        for _ in range(100):
            with contextlib.suppress(redis.ConnectionError):
                if client.ping():
                    return
            time.sleep(0.1)
        raise SystemExit("the private redis-server did not start")

    def start_worker(self, slot: int) -> None:
        self.generation += 1
        hostname = f"chaos{slot}-g{self.generation}@{socket.gethostname()}"
        self.workers[slot] = self._start(f"worker-{slot}", [
            sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel=INFO", "--concurrency=2",
            "--pool=prefork", f"--hostname={hostname}", "--without-gossip", "--without-mingle"])

    def start_web(self) -> None:
        self.web = self._start("web", [sys.executable, "manage.py", "runserver", f"127.0.0.1:{self.web_port}",
                                       "--noreload"])

    def start_beat(self) -> None:
        self.beat = self._start("beat", [sys.executable, "-m", "celery", "-A", "config", "beat", "--loglevel=INFO",
                                         f"--schedule={self.logs / 'beat-schedule'}"])

    def kill_group(self, process: subprocess.Popen | None) -> None:
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=20)

    def stop_worker(self, slot: int) -> float:
        """SIGTERM the worker's main process; seconds until its whole group is gone (killed at 60 s)."""
        process = self.workers[slot]
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        deadline = started + 60
        while time.monotonic() < deadline:
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                break
            if process.poll() is not None and not _group_alive(process.pid):
                break
            time.sleep(0.05)
        took = time.monotonic() - started
        self.kill_group(process)
        self.stop_seconds.append(took)
        return took

    def stop_all(self) -> None:
        for process in [*self.workers.values(), self.beat, self.web, self.redis]:
            self.kill_group(process)


def _group_alive(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid and fields[0] != "Z":
                    return True
    return False


@dataclass
class Record:
    events: list[tuple[float, str, str]] = field(default_factory=list)
    db_kills: list[float] = field(default_factory=list)
    web_down: list[tuple[float, float]] = field(default_factory=list)
    requests: int = 0
    refused: int = 0
    server_errors: list[tuple[float, str, int]] = field(default_factory=list)
    submitted: dict[str, int] = field(default_factory=dict)
    submit_failures: int = 0


def terminate_backends() -> int:
    import psycopg

    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (DB_NAME,)).fetchall()
    return len(rows)


def chaos_event(kind: str, procs: Procs, record: Record, rng: random.Random, started: float) -> str:
    import redis

    if kind == "worker_kill":
        slot = rng.choice(sorted(procs.workers))
        procs.kill_group(procs.workers[slot])
        time.sleep(2)
        procs.start_worker(slot)
        return f"worker {slot} SIGKILLed, restarted"
    if kind == "worker_stop":
        slot = rng.choice(sorted(procs.workers))
        took = procs.stop_worker(slot)
        procs.start_worker(slot)
        return f"worker {slot} SIGTERMed, gone after {took:.1f}s, restarted"
    if kind == "redis_restart":
        procs.kill_group(procs.redis)
        time.sleep(1)
        procs.start_redis()
        return "private redis-server killed, restarted empty"
    if kind == "redis_flush":
        redis.Redis(port=procs.redis_port, db=REDIS_DB).flushdb()
        return f"FLUSHDB of db {REDIS_DB}"
    if kind == "db_terminate":
        record.db_kills.append(time.monotonic() - started)
        return f"{terminate_backends()} database connections terminated"
    down = time.monotonic() - started
    procs.kill_group(procs.web)
    procs.start_web()
    wait_web(procs.web_port, 60)
    record.web_down.append((down, time.monotonic() - started))
    return "web process killed, restarted"


def wait_web(port: int, limit: float) -> None:
    import requests

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        with contextlib.suppress(requests.RequestException):
            requests.get(f"http://127.0.0.1:{port}/", timeout=5)
            return
        time.sleep(0.2)


def poll_web(port: int, record: Record, started: float, stop: threading.Event) -> None:
    import requests

    paths = ["/", "/queue/"]
    i = 0
    while not stop.wait(0.5):
        path = paths[i % len(paths)]
        i += 1
        try:
            response = requests.get(f"http://127.0.0.1:{port}{path}", timeout=30)
        except requests.RequestException:
            record.refused += 1
            continue
        record.requests += 1
        if response.status_code >= 500:
            record.server_errors.append((time.monotonic() - started, path, response.status_code))


@dataclass(frozen=True)
class Team:
    name: str
    url: str


def submit_one(team: Team | None, upload: bytes, rng: random.Random) -> str:
    from django.db import transaction

    from accounts.services import team_get_or_create
    from submissions.services import model_entry_upsert, submission_create_endpoint, submission_create_upload

    name = team.name if team is not None else "Uploader"
    model = model_entry_upsert(team=team_get_or_create(name=name), name=f"{name} model {rng.randrange(3)}")
    with transaction.atomic():
        if team is None:
            submission_create_upload(model=model, env="sokoban", flow="online", subset="mini", data=upload,
                                     suite="fixture")
        else:
            submission_create_endpoint(model=model, env="sokoban", flow="online", subset="mini", suite="fixture",
                                       endpoint_url=team.url, endpoint_trusted=True,
                                       settings={"repeats": 1, "resolution": 256})
    return name


def submitter(teams: list[Team], upload: bytes, record: Record, rng: random.Random, stop: threading.Event,
              pause: tuple[float, float]) -> None:
    from django.db import DatabaseError, connection

    while not stop.wait(rng.uniform(*pause)):
        choice = rng.randrange(len(teams) + 1)
        try:
            name = submit_one(teams[choice] if choice < len(teams) else None, upload, rng)
        except DatabaseError as exc:  # the database's connections were just terminated: the team tries again
            record.submit_failures += 1
            log(f"submission refused by the database ({exc.__class__.__name__}); trying again later")
            with contextlib.suppress(DatabaseError):
                connection.close()
            continue
        record.submitted[name] = record.submitted.get(name, 0) + 1


def oracle_upload(workdir: Path) -> bytes:
    """The oracle's runs of the Sokoban Online mini list, laid out as the official harness writes them."""
    from bench.upload_agreement import fixture_scenarios, play
    from submissions.official_layout import zip_runs

    folders = []
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import start_server

    with start_server(make_agent("oracle")) as server:
        for spec in fixture_scenarios("sokoban"):
            folders.append(play(spec, "online", server.url, "oracle", workdir / "upload" / spec.key)[1])
    return zip_runs(folders)


def setup(workdir: Path) -> dict[str, str]:
    env = {**os.environ, **FAST,
           "DJANGO_SETTINGS_MODULE": "config.settings.base", "DATABASE_URL": DATABASE_URL,
           "CELERY_BROKER_URL": f"redis://127.0.0.1:{REDIS_PORT}/{REDIS_DB}",
           "MAGEBENCH_DATA_DIR": str(workdir), "MAGEBENCH_MEDIA_ROOT": str(workdir / "media"),
           "MAGEBENCH_THROTTLE_ANON": "1000000/minute", "MAGEBENCH_DB_OUTAGE_SECONDS": "120"}
    os.environ.update(env)
    recreate_database(DATABASE_URL)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("import_magebench", str(ROOT / "fixtures" / "magebench"), "--suite", "fixture", verbosity=0)
    return env


def retrying(call: Any, what: str, limit: float = 120) -> Any:
    """Run a read of the bench's own database, waiting out terminated connections."""
    from django.db import DatabaseError, connection

    deadline = time.monotonic() + limit
    while True:
        try:
            return call()
        except DatabaseError as exc:
            if time.monotonic() > deadline:
                raise
            log(f"{what}: {exc.__class__.__name__}, again")
            with contextlib.suppress(DatabaseError):
                connection.close()
            time.sleep(0.5)


def active_count() -> int:
    from submissions.models import Submission

    return sum(1 for s in Submission.objects.all() if s.is_active)


@dataclass
class Checks:
    lines: list[str] = field(default_factory=list)
    failed: int = 0

    def check(self, ok: bool, text: str) -> None:
        self.lines.append(f"[{'ok' if ok else 'FAIL'}] {text}")
        self.failed += 0 if ok else 1


def result_fields(submission_id: int) -> dict[str, Any]:
    from django.forms.models import model_to_dict

    from submissions.models import SubmissionResult

    row = SubmissionResult.objects.filter(submission_id=submission_id).first()
    # When it was computed is the one field a rebuild changes.
    return {} if row is None else {k: v for k, v in model_to_dict(row).items()
                                   if k not in ("submission", "computed_at")}


def check_outcome(record: Record, logs: Path) -> tuple[Checks, list[str]]:
    from django.db.models import Count

    from submissions.models import Attempt, Submission
    from submissions.services import submission_result_rebuild

    checks = Checks()
    attempts = Attempt.objects.all()
    by_status = dict(attempts.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    figures = [f"submissions: {Submission.objects.count()} "
               f"({dict(Submission.objects.values_list('status').annotate(n=Count('id')).values_list('status', 'n'))})",
               f"attempts: {attempts.count()} by status {by_status}",
               f"attempts that needed more than one try: {attempts.filter(tries__gt=1).count()}; "
               f"most tries {max(attempts.values_list('tries', flat=True), default=0)}"]
    waiting = attempts.filter(status__in=[Attempt.Status.PENDING, Attempt.Status.RETRYING, Attempt.Status.RUNNING])
    checks.check(not waiting.exists(), f"no attempt lost (left waiting or running): {waiting.count()}")
    scored = attempts.filter(status=Attempt.Status.SCORED)
    wrong_try = [a.id for a in scored.filter(submission__source="endpoint")
                 if not a.trajectory_path.endswith(f"try-{a.tries}")]
    checks.check(not wrong_try, f"every scored endpoint attempt holds its last try's result: {len(wrong_try)} do not")
    dropped = sum(text.count("not recorded") + text.count("dropping this try's result")
                  for text in (p.read_text(errors="replace") for p in logs.glob("worker-*.log")))
    figures.append(f"second results refused by the try guard (worker logs): {dropped}")
    infra_scored = scored.exclude(error_kind="").count()
    failed_with_score = attempts.filter(status=Attempt.Status.INFRA_FAILED, score__isnull=False).count()
    checks.check(infra_scored == 0 and failed_with_score == 0,
                 f"no infrastructure failure scored: {infra_scored} scored with an error, "
                 f"{failed_with_score} failed with a score")
    finished = list(Submission.objects.filter(status__in=[Submission.Status.COMPLETED, Submission.Status.INCOMPLETE])
                    .values_list("id", flat=True))
    differing = []
    for submission_id in finished:
        before = result_fields(submission_id)
        submission_result_rebuild(submission_id=submission_id)
        after = result_fields(submission_id)
        if before != after:
            differing.append(submission_id)
    checks.check(not differing, f"every board result equals its rebuild from the stored attempts "
                                f"({len(finished)} submissions): {len(differing)} differ {differing[:10]}")
    outside = [e for e in record.server_errors
               if not any(0 <= e[0] - kill <= DB_KILL_WINDOW for kill in record.db_kills)]
    checks.check(not outside, f"no server error outside {DB_KILL_WINDOW:.0f} s after a database kill: "
                              f"{len(outside)} of {len(record.server_errors)} 5xx {outside[:5]}")
    return checks, figures


def run(args: argparse.Namespace) -> int:
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is needed for the private broker")
    workdir = Path(tempfile.mkdtemp(prefix="magebench-chaos-"))
    logs = workdir / "logs"
    logs.mkdir()
    env = setup(workdir)
    rng = random.Random(args.seed)
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import Fault, Latency, start_server

    log("recording the oracle's upload")
    upload = oracle_upload(workdir)
    plans = [("Steady", "oracle", None), ("Flaky", "oracle", Fault("500", every_n=4)),
             ("Garbled", "random", Fault("garbage", every_n=5)), ("Throttled", "oracle", Fault("429", every_n=6))]
    servers = [start_server(make_agent(agent, seed=i), fault=fault, latency=Latency(0.3, seed=i))
               for i, (_, agent, fault) in enumerate(plans)]
    teams = [Team(name, server.url) for (name, _, _), server in zip(plans, servers, strict=True)]
    procs = Procs(env=env, logs=logs, redis_port=REDIS_PORT, web_port=free_port())
    record = Record()
    stop = threading.Event()
    try:
        procs.start_redis()
        for slot in range(args.workers):
            procs.start_worker(slot)
        procs.start_beat()
        procs.start_web()
        wait_web(procs.web_port, 60)
        started = time.monotonic()
        threads = [threading.Thread(target=poll_web, args=(procs.web_port, record, started, stop), daemon=True),
                   threading.Thread(target=submitter, args=(teams, upload, record, random.Random(args.seed + 1), stop,
                                          tuple(args.submit_pause)),
                                    daemon=True)]
        for thread in threads:
            thread.start()
        log(f"chaos for {args.minutes} min (seed {args.seed}); logs in {logs}")
        end = started + args.minutes * 60
        while True:
            pause = rng.uniform(5, 20)
            if time.monotonic() + pause > end:
                break
            time.sleep(pause)
            kind = rng.choice(EVENTS)
            what = chaos_event(kind, procs, record, rng, started)
            record.events.append((time.monotonic() - started, kind, what))
            log(what)
        stop.set()
        threads[1].join(timeout=60)
        chaos_seconds = time.monotonic() - started
        log("chaos over; waiting for the queue to drain")
        drain_started = time.monotonic()
        poller = threading.Event()
        polling = threading.Thread(target=poll_web, args=(procs.web_port, record, started, poller), daemon=True)
        polling.start()
        while retrying(active_count, "counting active submissions") and time.monotonic() - drain_started < args.drain:
            time.sleep(2)
        drained = time.monotonic() - drain_started
        poller.set()
        checks, figures = retrying(lambda: check_outcome(record, logs), "checking")
        remaining = retrying(active_count, "counting active submissions")
        checks.check(remaining == 0, f"the queue drained: {remaining} submissions still active after {drained:.0f} s")
    finally:
        stop.set()
        procs.stop_all()
        for server in servers:
            server.stop()
    lines = report(args, record, procs, chaos_seconds, drained, figures, checks)
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).write_text(text)
    return 1 if checks.failed else 0


def report(args: argparse.Namespace, record: Record, procs: Procs, chaos_seconds: float, drained: float,
           figures: list[str], checks: Checks) -> list[str]:
    counts = {kind: sum(1 for _, k, _ in record.events if k == kind) for kind in EVENTS}
    stops = procs.stop_seconds
    lines = [f"# Chaos run: --minutes {args.minutes} --seed {args.seed} --workers {args.workers} "
             f"--submit-pause {args.submit_pause[0]:g} {args.submit_pause[1]:g}",
             f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; chaos lasted {chaos_seconds / 60:.1f} min, "
             f"then the queue drained in {drained:.0f} s; load average at the end {os.getloadavg()[0]:.2f} "
             f"on {os.cpu_count()} cores (shared machine)",
             f"submissions made by team: {record.submitted}; refused by a terminated database connection "
             f"(the team got an error, nothing was stored): {record.submit_failures}",
             f"chaos events ({len(record.events)}): {counts}",
             "worker SIGTERM to gone (s): " + (", ".join(f"{s:.1f}" for s in stops) or "none")
             + (f"; max {max(stops):.1f}" if stops else ""),
             f"web requests answered: {record.requests}, refused while the web process restarted: {record.refused}, "
             f"5xx: {len(record.server_errors)}",
             *figures, "", "## checks", *checks.lines, "", "## events"]
    lines += [f"{at:7.1f}s {kind:14} {what}" for at, kind, what in record.events]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--submit-pause", type=float, nargs=2, default=[30.0, 60.0], metavar=("MIN", "MAX"),
                        help="seconds between two submissions, drawn uniformly")
    parser.add_argument("--drain", type=float, default=900.0, help="longest wait for the queue to drain (s)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "reports" / "chaos.txt"))
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
