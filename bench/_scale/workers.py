"""Celery worker subprocesses for the scale benches, and the sampling of their process trees."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_EVERY = 0.2


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
