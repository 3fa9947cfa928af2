"""The chaos bench on local processes: workers, beat, the web process and a private redis-server.

The database is ``magebench_chaos`` on the machine's PostgreSQL (dropped and created); the shared
PostgreSQL and Redis servers are never restarted: a database restart is simulated by
``pg_terminate_backend`` on every connection to the bench's database, a broker restart by killing
the private redis-server (which comes back empty) or by FLUSHDB of the bench's db.
"""
from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._chaos.agents import PLANS, UPLOADER, start_agents
from bench._chaos.outcome import stored_outcome
from bench._chaos.record import Checks, Record, refused_results
from bench._chaos.stack import Refused, log
from bench._chaos.traffic import wait_web
from bench.board_latency import recreate_database

ROOT = Path(__file__).resolve().parents[2]
DB_NAME = "magebench_chaos"
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
REDIS_PORT = 6390
REDIS_DB = 11
#: Fast watchdog and heartbeats, so a killed worker's attempts come back within seconds.
FAST = {"MAGEBENCH_HEARTBEAT_EVERY_SECONDS": "1", "MAGEBENCH_STALLED_AFTER_SECONDS": "15",
        "MAGEBENCH_WATCHDOG_EVERY_SECONDS": "2", "MAGEBENCH_WORKER_BEAT_SECONDS": "5"}
EVENTS = ("worker_kill", "worker_stop", "redis_restart", "redis_flush", "db_terminate", "web_restart")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _group_alive(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid and fields[0] != "Z":
                    return True
    return False


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


def terminate_backends() -> int:
    import psycopg

    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (DB_NAME,)).fetchall()
    return len(rows)


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


class LocalStack:
    description = ("local processes: Celery workers (two pool processes each), beat, runserver, a private "
                   f"redis-server on port {REDIS_PORT}, the database {DB_NAME} on the machine's PostgreSQL")
    kinds: tuple[str, ...] = EVENTS
    headers: dict[str, str] = {}

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.web_port = free_port()
        self.site = f"http://127.0.0.1:{self.web_port}"
        self.stop_seconds: list[float] = []
        self.servers: list[Any] = []
        self.urls: dict[str, str] = {}
        self.upload = b""
        self.procs: Procs | None = None

    def prepare(self, workdir: Path) -> None:
        """The environment of every process, the database migrated and the fixture scenarios imported."""
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

    def start(self, workdir: Path, upload: bytes) -> None:
        self.upload = upload
        logs = workdir / "logs"
        logs.mkdir(exist_ok=True)
        self.servers = start_agents()
        self.urls = {plan.team: server.url for plan, server in zip(PLANS, self.servers, strict=True)}
        self.procs = procs = Procs(env=dict(os.environ), logs=logs, redis_port=REDIS_PORT, web_port=self.web_port)
        self.stop_seconds = procs.stop_seconds
        procs.start_redis()
        for slot in range(self.workers):
            procs.start_worker(slot)
        procs.start_beat()
        procs.start_web()
        wait_web(self, 60)
        log(f"local processes up; logs in {logs}")

    def submit(self, team: str, rng: random.Random) -> None:
        from django.db import DatabaseError, connection, transaction

        from accounts.services import team_get_or_create
        from submissions.services import model_entry_upsert, submission_create_endpoint
        from submissions.upload_services import submission_create_upload

        try:
            model = model_entry_upsert(team=team_get_or_create(name=team), name=f"{team} model {rng.randrange(3)}")
            with transaction.atomic():
                if team == UPLOADER:
                    submission_create_upload(model=model, env="sokoban", flow="online", subset="mini",
                                             data=self.upload, suite="fixture")
                else:
                    submission_create_endpoint(model=model, env="sokoban", flow="online", subset="mini",
                                               suite="fixture", endpoint_url=self.urls[team], endpoint_trusted=True,
                                               settings={"repeats": 1, "resolution": 256})
        except DatabaseError as exc:  # the database's connections were just terminated
            with contextlib.suppress(DatabaseError):
                connection.close()
            raise Refused(f"by the database: {exc.__class__.__name__}") from None

    def event(self, kind: str, rng: random.Random, record: Record, started: float) -> str:
        import redis

        procs = self.procs
        assert procs is not None
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
            at = time.monotonic() - started
            record.db_down.append((at, at))
            return f"{terminate_backends()} database connections terminated"
        down = time.monotonic() - started
        procs.kill_group(procs.web)
        procs.start_web()
        wait_web(self, 60)
        record.web_down.append((down, time.monotonic() - started))
        return "web process killed, restarted"

    def active_count(self) -> int:
        from submissions.models import Submission

        return int(retrying(lambda: sum(1 for s in Submission.objects.all() if s.is_active),
                            "counting active submissions"))

    def outcome(self, record: Record) -> tuple[Checks, list[str]]:
        assert self.procs is not None
        stored = retrying(stored_outcome, "checking")
        checks = Checks()
        for ok, text in stored["checks"]:
            checks.check(ok, text)
        figures = list(stored["figures"])
        texts = (p.read_text(errors="replace") for p in self.procs.logs.glob("worker-*.log"))
        figures.append(f"second results refused by the try guard (worker logs): {refused_results(texts)}")
        return checks, figures

    def stop(self) -> None:
        if self.procs is not None:
            self.procs.stop_all()
        for server in self.servers:
            server.stop()
