"""The production-shaped site the abuse bench measures: its environment, the web process started as
the Dockerfile's CMD starts it (bound to the loopback), and one Celery worker reading every queue."""
from __future__ import annotations

import base64
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATABASE = "magebench_bench_abuse"
REDIS_DB = 6
DATA_DIR = Path("/tmp/magebench-bench-abuse")
#: What the reverse proxy in front of gunicorn sends with every request (TLS ends there).
PROXY_HEADERS = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7"}


def environment() -> dict[str, str]:
    """Production settings, with the secrets and proxy count production requires, a database and a
    Redis db of the bench's own, and limits that would otherwise refuse the bench's own traffic."""
    redis = f"redis://127.0.0.1:6379/{REDIS_DB}"
    return {
        **os.environ,
        "MAGEBENCH_ENV": "production", "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DJANGO_SECRET_KEY": "abuse-bench-secret-key-not-for-any-real-site-0123456789",
        "FIELD_ENCRYPTION_KEY": base64.urlsafe_b64encode(b"abuse bench, not a real key".ljust(32, b".")).decode(),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost", "MAGEBENCH_NUM_PROXIES": "1",
        "DATABASE_URL": os.environ.get("BENCH_DATABASE_URL", f"postgres://postgres@127.0.0.1:5432/{DATABASE}"),
        "CELERY_BROKER_URL": redis, "CACHE_URL": redis,
        "MAGEBENCH_DATA_DIR": str(DATA_DIR), "MAGEBENCH_DEFAULT_SUITE": "fixture",
        # The endpoint the submissions name is a closed port on this machine.
        "MAGEBENCH_ENDPOINT_ALLOW_PRIVATE": "true",
        # Fifty submissions from one team at once: the burst is what is measured, not the quota.
        "MAGEBENCH_QUOTA_PER_DAY": "100000", "MAGEBENCH_QUOTA_TOTAL": "100000",
        "MAGEBENCH_QUOTA_CONCURRENT": "100000",
        "MAGEBENCH_EMAIL_BACKEND": "locmem",
        # This checkout's client package (the site imports its CSV helper), as scripts/setup installs
        # it editable: a virtualenv shared with another checkout would otherwise import that one's.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "client"), os.environ.get("PYTHONPATH", "")])),
    }


def recreate_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def flush_redis() -> None:
    import redis

    redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB).flushdb()


def free_port() -> int:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return int(listener.getsockname()[1])


def dockerfile_command() -> list[str]:
    """The web process's command line, read from the Dockerfile's CMD (its exec form)."""
    text = (ROOT / "Dockerfile").read_text()
    found = re.search(r"^CMD\s+(\[.*?\])\s*$", text.replace("\\\n", " "), re.MULTILINE | re.DOTALL)
    if found is None:
        raise RuntimeError("the Dockerfile has no CMD in exec form")
    return list(json.loads(found.group(1)))


def gunicorn_command(port: int) -> list[str]:
    command = dockerfile_command()
    if command[0] != "gunicorn":
        raise RuntimeError(f"the Dockerfile's CMD is not gunicorn: {command}")
    bind = command.index("--bind")
    command[bind + 1] = f"127.0.0.1:{port}"
    return [str(Path(sys.executable).with_name("gunicorn")), *command[1:]]


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self) -> None:
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout=10)

    def tail(self, chars: int = 2000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""


def start(name: str, command: list[str], env: dict[str, str]) -> Process:
    log = DATA_DIR / f"{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        popen = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
    return Process(name=name, popen=popen, log=log)


def collectstatic(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Production serves only collected static files; collected in the background while seeding."""
    log = (DATA_DIR / "collectstatic.log").open("w")
    return subprocess.Popen([sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def start_web(env: dict[str, str], port: int) -> Process:
    web = start("gunicorn", gunicorn_command(port), env)
    deadline = time.monotonic() + 120
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/queue/",
                                     headers={**PROXY_HEADERS, "Host": "127.0.0.1"})
    while time.monotonic() < deadline:
        if not web.alive():
            raise RuntimeError(f"gunicorn exited at startup:\n{web.tail()}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                response.read()
                return web
        except urllib.error.HTTPError:
            return web  # it answers: what it answered is not the point here
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.3)
    web.stop()
    raise RuntimeError(f"gunicorn did not answer within 120 s:\n{web.tail()}")


def start_worker(env: dict[str, str], concurrency: int) -> Process:
    """``manage.py run_worker`` (what the compose file runs) with its default: every queue the settings
    declare, so a queue the exports or uploads gained is read as well as the old ones."""
    from config.celery import app

    hostname = f"abuse-{os.getpid()}@{socket.gethostname()}"
    worker = start("worker", [sys.executable, "manage.py", "run_worker", f"--concurrency={concurrency}", "--",
                              f"--hostname={hostname}", "--without-gossip", "--without-mingle"], env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if not worker.alive():
            raise RuntimeError(f"the worker exited at startup:\n{worker.tail()}")
        if app.control.ping([hostname], timeout=0.5):
            return worker
    worker.stop()
    raise RuntimeError(f"the worker did not answer a ping within 120 s:\n{worker.tail()}")
