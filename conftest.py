"""Shared test fixtures: fixture scenarios, baseline endpoints and real Celery workers."""
from __future__ import annotations

from dataclasses import dataclass

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

ROOT = Path(__file__).resolve().parent
FIXTURE_RESOURCES = ROOT / "fixtures" / "magebench" / "resources"


@pytest.fixture
def fixture_scenarios(db):
    """The project's own Sokoban levels, imported like an official resources/ directory."""
    from leaderboard.services import scenarios_import

    return scenarios_import(path=FIXTURE_RESOURCES, suite="fixture", verify=False)


@pytest.fixture
def baseline_endpoint() -> Iterator[Callable[..., object]]:
    """Start a baseline agent (optionally faulty) on a free local port; stopped after the test."""
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import Fault, start_server

    servers = []

    def start(agent: str = "oracle", *, fault: str | None = None, first_n: int | None = None,
              delay: float = 5.0, api_key: str | None = None, seed: int | None = 0, every_n: int | None = None):
        server = start_server(make_agent(agent, seed=seed), api_key=api_key,
                              fault=Fault(fault, first_n=first_n, every_n=every_n, delay=delay) if fault else None)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@dataclass
class Lab:
    """A team with an owner logged in on ``client``, and one token of each scope."""

    user: Any
    team: Any
    client: Any
    write_token: str
    read_token: str

    def auth(self, scope: str = "write") -> dict[str, str]:
        return {"HTTP_AUTHORIZATION": f"Bearer {self.write_token if scope == 'write' else self.read_token}"}


@pytest.fixture
def lab(db, client) -> Lab:
    from django.contrib.auth import get_user_model

    from accounts.services import team_create, token_create

    user = get_user_model().objects.create_user("ada", password="a long passphrase 7")
    team = team_create(user=user, name="Lab")
    client.force_login(user)
    _, write = token_create(team=team, user=user, name="cli", scope="write")
    _, read = token_create(team=team, user=user, name="reader", scope="read")
    return Lab(user=user, team=team, client=client, write_token=write, read_token=read)


@pytest.fixture
def site_page() -> Iterator[Callable[..., tuple[Any, list[str]]]]:
    """Opens pages of the site in headless Debian Chromium; each page records its console errors and
    uncaught exceptions in the list returned beside it."""
    from playwright.sync_api import sync_playwright

    from evaluators.browser import launch_chromium

    # Playwright's sync API runs an event loop on this thread, which Django's ORM guard mistakes for
    # async code; the live server itself serves from a plain thread.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)

        def open_page(**options: Any) -> tuple[Any, list[str]]:
            errors: list[str] = []
            page = browser.new_page(**options)
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            return page, errors

        yield open_page
        browser.close()


def _wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


@pytest.fixture
def wait_for() -> Callable[[Callable[[], bool], float, str], None]:
    return _wait_for


@pytest.fixture
def celery_worker_process(transactional_db, settings, tmp_path) -> Iterator[subprocess.Popen]:
    """A real `celery worker` process on the local Redis, sharing the test database and media root."""
    from django.db import connection

    from config.celery import app

    db = connection.settings_dict
    env = dict(os.environ)
    env.update({
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "MAGEBENCH_DATA_DIR": str(settings.DATA_DIR),
        "MAGEBENCH_MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "MAGEBENCH_SCENARIO_ROOT": str(settings.SCENARIO_ROOT),
    })
    app.control.purge()  # leftovers of an interrupted earlier run must not reach this worker
    log = (tmp_path / "worker.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel=INFO", "--concurrency=2",
         "--pool=prefork", f"--hostname=test-{os.getpid()}@%h", "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        _wait_for(lambda: bool(app.control.ping(timeout=0.5)) or process.poll() is not None, 60, "the Celery worker")
        if process.poll() is not None:
            raise AssertionError(f"worker exited: {(tmp_path / 'worker.log').read_text()[-3000:]}")
        yield process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        log.close()
