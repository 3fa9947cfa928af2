"""The worker under test: its command, its start and stop, and samples of its process tree."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from bench._scale.workers import Worker
from bench.scale import log

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_EVERY = 0.5
#: Every this many samples, the proportional set size too (slower to read than RSS).
PSS_EVERY = 4
ENGINE_LIBRARY = "_gameplayfootball"
#: What a Chromium browser process is called (its children carry --type=...).
BROWSER_PROGRAMS = frozenset({"chromium", "chrome", "chromium-browser", "headless_shell"})


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
def worker_running(label: str, command: list[str], logs: Path) -> Iterator[Worker]:
    """One worker in a session of its own, answering pings; stopped with its whole tree afterwards."""
    from config.celery import app

    logs.mkdir(parents=True, exist_ok=True)
    hostname = next(part.split("=", 1)[1] for part in command if part.startswith("--hostname="))
    path = logs / f"worker-{label}.log"
    with path.open("w") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=dict(os.environ), stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    worker = Worker(label=label, hostname=hostname, process=process, log=path)
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


def pool_size(worker: Worker) -> int:
    """The worker's pool processes (the main process's Python children)."""
    try:
        return sum(1 for child in psutil.Process(worker.process.pid).children() if "python" in child.name())
    except psutil.NoSuchProcess:
        return 0


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

    def __init__(self, worker: Worker) -> None:
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
        log(f"machine {busy:.0f} % busy; waiting for it to settle")


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
