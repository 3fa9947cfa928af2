"""Shared test fixtures: fixture scenarios, baseline endpoints and real Celery workers."""
from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent

# Playwright's sync API runs an event loop on the thread that starts it: the site's pages and the page
# renderers some tests open directly start one on the test thread, and a renderer's Playwright lives
# until the process ends. Django's guard takes that loop for async code and would refuse every later
# query of the test process, whichever tests a parallel process happens to be given first; the Celery
# workers the tests start keep the guard (``celery_workers`` drops the switch), as production runs them.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
FIXTURE_RESOURCES = ROOT / "fixtures" / "magebench" / "resources"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-file-durations", action="store_true",
                     help="write each test file's time to config/test-durations.json (the order scripts/test "
                          "starts files in)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files start slowest first (config/test_file_order.py)."""
    from config.test_file_order import recorded_durations, slowest_files_first

    items[:] = slowest_files_first(items, recorded_durations())


#: Set when this run records each file's time (--record-file-durations), in the process that reports.
_recorder: Any = None


def _live_server_queues_connections_like_gunicorn() -> None:
    """The site's test server (``live_server``) listens with Django's queue of 10 connections waiting
    to be accepted; fifty clients at once overflowed it on a loaded machine, and one had its connection
    reset. gunicorn, which serves the site in production, queues 2048 (its default backlog)."""
    from django.core.servers.basehttp import ThreadedWSGIServer
    from django.test.testcases import LiveServerThread

    class QueueingServer(ThreadedWSGIServer):
        request_queue_size = 2048

    LiveServerThread.server_class = QueueingServer


def pytest_configure(config: pytest.Config) -> None:
    global _recorder
    _live_server_queues_connections_like_gunicorn()
    if config.getoption("--record-file-durations") and not os.environ.get("PYTEST_XDIST_WORKER"):
        from config.test_file_order import DurationRecorder

        _recorder = DurationRecorder()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _recorder is not None:
        _recorder.add(report.nodeid, report.duration)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _recorder is not None and _recorder.seconds:
        _recorder.write()


def _schema_digest() -> str:
    """What a migrated database depends on: Django's version and every app's migrations and models."""
    import django
    from django.apps import apps

    digest = hashlib.sha256(django.get_version().encode())
    for config in sorted(apps.get_app_configs(), key=lambda c: c.label):
        folder = Path(config.path)
        digest.update(config.label.encode())
        for file in [*sorted((folder / "migrations").glob("*.py")), folder / "models.py",
                     *sorted((folder / "models").glob("*.py"))]:
            if file.is_file():
                digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def _migrate_into(connection: Any, name: str) -> None:
    """Run every migration into the existing database ``name`` through ``connection``."""
    from django.core.management import call_command

    saved = connection.settings_dict["NAME"]
    connection.close()
    connection.settings_dict["NAME"] = name
    try:
        call_command("migrate", verbosity=0, interactive=False, database=connection.alias, run_syncdb=True)
    finally:
        connection.close()
        connection.settings_dict["NAME"] = saved


def _test_database_from_template(connection: Any) -> None:
    """Create this process's test database as a copy of one already migrated (copying takes a fraction
    of running the migrations, which every test process and run would otherwise repeat). The copy is
    built once per state of the migrations, by whichever process needs it first, under a lock."""
    quote = connection.ops.quote_name
    test_name = connection.creation._get_test_db_name()
    base = connection.settings_dict["NAME"]
    template = f"{base[:30]}_migrated_{_schema_digest()}"
    # The maintenance database's connections all see this lock, whichever test database they serve.
    lock = int.from_bytes(hashlib.sha256(f"magebench-test-template {base}".encode()).digest()[:4], "big")
    with connection._nodb_cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [lock])
        try:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [template])
            if cursor.fetchone() is None:
                building = f"{template}_new"
                cursor.execute(f"DROP DATABASE IF EXISTS {quote(building)}")
                cursor.execute(f"CREATE DATABASE {quote(building)}")
                _migrate_into(connection, building)
                # published complete or not at all: an interrupted build is never copied
                cursor.execute(f"ALTER DATABASE {quote(building)} RENAME TO {quote(template)}")
                cursor.execute("SELECT datname FROM pg_database WHERE datname LIKE %s AND datname <> %s",
                               [f"{base[:30]}\\_migrated\\_%", template])
                for (stale,) in cursor.fetchall():
                    with contextlib.suppress(Exception):  # one being copied right now stays for now
                        cursor.execute(f"DROP DATABASE {quote(stale)}")
            cursor.execute(f"DROP DATABASE IF EXISTS {quote(test_name)}")
            cursor.execute(f"CREATE DATABASE {quote(test_name)} TEMPLATE {quote(template)}")
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [lock])


@pytest.fixture(scope="session")
def django_db_setup(request: pytest.FixtureRequest, django_test_environment: None, django_db_blocker: Any,
                    django_db_modify_db_settings: None) -> Iterator[None]:
    """pytest-django's test database, copied from a migrated template on PostgreSQL; Django then
    finds it migrated (keepdb), and drops it at the end as usual."""
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases
    from pytest_django.fixtures import _get_databases_for_setup

    # which databases the collected tests use, and which of them roll back by reloading a copy
    aliases, serialized_aliases = _get_databases_for_setup(request.session.items)
    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            _test_database_from_template(connection)
        # Django reads ``aliases`` by membership alone; its stubs ask for a mapping
        config = setup_databases(verbosity=0, interactive=False, aliases=dict.fromkeys(aliases),
                                 serialized_aliases=serialized_aliases, keepdb=connection.vendor == "postgresql")
    yield
    with django_db_blocker.unblock():
        teardown_databases(config, verbosity=0)


@pytest.fixture(autouse=True, scope="module")
def shared_playwright_stopped_after_each_module() -> Iterator[None]:
    """A page renderer a test opens on the test thread, or the site's pages, start the thread's shared
    Playwright, and the sync API refuses to start another (a test's own) on a thread whose loop runs:
    it lasts as long as the module that started it, whatever module a parallel process runs next."""
    yield
    from evaluators.webui.playwright_instance import stop_shared_playwright

    if _site_browser:
        from django.db import connections

        _close_site_browser()
        connections.close_all()  # those opened while the loop ran, as site_page closes them
    stop_shared_playwright()


@pytest.fixture(autouse=True, scope="session")
def client_wheel_built() -> None:
    """The client's wheel, as the image and the demo build it before the site starts (a request never
    builds it): once per change of client/, under the checkout's git-ignored build/ folder."""
    from submissions.client_wheel import build_client_wheel

    build_client_wheel()


@pytest.fixture(autouse=True)
def empty_cache() -> None:
    """Every test starts with an empty cache: the test settings' cache lives in the process, and a
    board (or a throttle count) an earlier test left in it must not reach the next one."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def queued_runs_prepared_as_they_commit(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Most tests run no Celery worker, as they run attempts themselves: the preparation a request
    leaves to a worker (a new run's attempts, the turns of what it queues) is done as the request's
    transaction commits, as the next free worker would. Tests with real workers, and those about
    the preparation itself (marked ``prepare_in_worker``), keep its message."""
    if "celery_workers" in request.fixturenames or request.node.get_closest_marker("prepare_in_worker"):
        return
    from submissions import services

    monkeypatch.setattr(services, "submission_prepare_enqueue",
                        lambda *, submission_id, env: services.submission_prepare(submission_id=submission_id))


@pytest.fixture(scope="module")
def module_db(django_db_setup: None, django_db_blocker: Any) -> Iterator[Any]:
    """One transaction around a whole module, for data its tests share: a module-scoped fixture
    builds it once (inside ``with module_db.unblock():``), every test sees it and rolls back to
    its own savepoint, and it is rolled back after the module's last test. Only for tests in
    transactions (plain ``django_db``): a ``transaction=True`` test would commit or flush it."""
    from django.db import transaction

    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
    try:
        yield django_db_blocker
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def import_fixture_scenarios() -> Any:
    """Imports the project's own scenarios, like an official resources/ directory, as suite "fixture"."""
    from catalogue.services import scenarios_import

    return scenarios_import(path=FIXTURE_RESOURCES, suite="fixture", verify=False)


@pytest.fixture
def fixture_scenarios(db):
    """The project's own Sokoban levels, imported like an official resources/ directory."""
    return import_fixture_scenarios()


@contextmanager
def baseline_servers() -> Iterator[Callable[..., object]]:
    """Starts baseline agents (optionally faulty) on free local ports; stops them all on the way out."""
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import Fault, start_server

    servers = []

    def start(agent: str = "oracle", *, fault: str | None = None, first_n: int | None = None,
              delay: float = 5.0, api_key: str | None = None, seed: int | None = 0, every_n: int | None = None):
        server = start_server(make_agent(agent, seed=seed), api_key=api_key,
                              fault=Fault(fault, first_n=first_n, every_n=every_n, delay=delay) if fault else None)
        servers.append(server)
        return server

    try:
        yield start
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def baseline_endpoint() -> Iterator[Callable[..., object]]:
    """Start a baseline agent (optionally faulty) on a free local port; stopped after the test."""
    with baseline_servers() as start:
        yield start


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


#: The Chromium the site's browser tests share, and the Playwright it runs on: this thread's shared
#: one, which lasts until the end of the module (see shared_playwright_stopped_after_each_module).
_site_browser: dict[str, Any] = {}


def _shared_site_browser() -> Any:
    from evaluators.browser import launch_chromium
    from evaluators.webui.playwright_instance import shared_playwright

    playwright = shared_playwright()
    browser = _site_browser.get("browser")
    if browser is None or _site_browser.get("playwright") is not playwright or not browser.is_connected():
        browser = launch_chromium(playwright)
        _site_browser.update(browser=browser, playwright=playwright)
    return browser


def _close_site_browser() -> None:
    browser = _site_browser.pop("browser", None)
    _site_browser.clear()
    if browser is not None:
        with contextlib.suppress(Exception):  # gone with its Playwright already
            browser.close()


@pytest.fixture
def site_page() -> Iterator[Callable[..., tuple[Any, list[str]]]]:
    """Opens pages of the site in headless Debian Chromium; each page records its console errors and
    uncaught exceptions in the list returned beside it.

    Each page has a browser context of its own (its own cookies, storage and cache) in a Chromium the
    tests of a module share: launching one per test cost more than most of these tests."""
    from django.db import connections

    # While Playwright's loop runs, Django keeps this thread's connections apart from the usual
    # ones; close them on the way in and out so none outlives the test (e.g. a database restart).
    browser = _shared_site_browser()
    connections.close_all()
    pages: list[Any] = []

    def open_page(**options: Any) -> tuple[Any, list[str]]:
        errors: list[str] = []
        page = browser.new_page(**options)
        pages.append(page)
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        return page, errors

    yield open_page
    for page in pages:
        with contextlib.suppress(Exception):  # closed by the test, or its browser gone
            page.context.close()
    connections.close_all()


#: How many times its stated timeout a wait may last. A timeout only bounds a test that is already
#: failing: a machine loaded several times over (a second suite, a CPU burner) must not fail a
#: healthy one, so each wait allows for that and a passing run waits no longer for it.
WAIT_PATIENCE = float(os.environ.get("MAGEBENCH_TEST_PATIENCE", "3"))


def _wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    limit = timeout * WAIT_PATIENCE
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {limit:.0f}s waiting for {what}")


@pytest.fixture
def wait_for() -> Callable[[Callable[[], bool], float, str], None]:
    return _wait_for


@dataclass
class Worker:
    """A `celery worker` process started by ``celery_workers``; ``name`` is what attempts record."""

    name: str
    process: subprocess.Popen
    log: Path

    def kill(self) -> None:
        """SIGKILL the worker and its pool children at once, as a crashed machine would."""
        # The group's id is the main process's pid. Until that process is reaped, or while any pool
        # child lives on, the id is this worker's; once the pid belongs to another process (another
        # test's browser leads a group of its own), the group is no longer this one.
        if self.process.returncode is None or not os.path.exists(f"/proc/{self.process.pid}"):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=20)

    def stop(self) -> None:
        """A warm shutdown (SIGTERM to the main process, which lets its pool finish), then clear the group."""
        if self.process.returncode is None:
            self.process.terminate()
            self._exited_unreaped(timeout=20 * WAIT_PATIENCE)
        self.kill()

    def _exited_unreaped(self, timeout: float) -> None:
        """Wait for the main process to exit, leaving it unreaped (Popen.wait would reap it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if os.waitid(os.P_PID, self.process.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None:
                    return
            except ChildProcessError:
                return  # reaped already
            time.sleep(0.05)

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


@contextmanager
def broker_at(url: str) -> Iterator[None]:
    """Point this process's Celery app (what the services send with) at another broker for a while."""
    from config.celery import app

    def reset() -> None:
        # kombu keeps one pool per broker URL: forgetting the app's picks up the pool of the new URL.
        # Private attributes, which the stubs leave out.
        app._pool = None  # type: ignore[attr-defined]
        app.amqp._producer_pool = None  # type: ignore[attr-defined]

    # Celery reads CELERY_BROKER_URL from the environment before its settings; the write and read
    # URLs come first of all.
    before = (app.conf.broker_write_url, app.conf.broker_read_url)
    # The stubs type these as read-only properties; Celery's settings accept them as keys.
    app.conf.broker_write_url = app.conf.broker_read_url = url  # type: ignore[misc]
    reset()
    try:
        yield
    finally:
        app.conf.broker_write_url, app.conf.broker_read_url = before  # type: ignore[misc]
        reset()


@pytest.fixture
def celery_workers(transactional_db, settings, tmp_path) -> Iterator[Callable[..., Worker]]:
    """Start real `celery worker` processes sharing the test database and media root; each is
    stopped after the test. ``beat=True`` embeds Celery beat (the watchdog) in that worker."""
    from django.db import connection

    from config.celery import app

    db = connection.settings_dict
    started: list[Worker] = []
    purged: set[str] = set()

    def start(name: str = "w1", *, concurrency: int = 2, beat: bool = False, broker: str | None = None,
              env: dict[str, str] | None = None, wait: bool = True) -> Worker:
        broker_url = broker or settings.CELERY_BROKER_URL
        environ = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
        environ.update({
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": (f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:"
                             f"{db['PORT'] or 5432}/{db['NAME']}"),
            "CELERY_BROKER_URL": broker_url,
            "MAGEBENCH_DATA_DIR": str(settings.DATA_DIR),
            "MAGEBENCH_MEDIA_ROOT": str(settings.MEDIA_ROOT),
            "MAGEBENCH_SCENARIO_ROOT": str(settings.SCENARIO_ROOT),
            **(env or {}),
        })
        if broker_url not in purged:  # leftovers of an interrupted earlier run must not reach these workers
            with broker_at(broker_url):
                app.control.purge()
            purged.add(broker_url)
        hostname = f"{name}-{os.getpid()}@{socket.gethostname()}"
        log = tmp_path / f"worker-{name}.log"
        command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel=INFO",
                   f"--concurrency={concurrency}", "--pool=prefork", f"--hostname={hostname}",
                   "--without-gossip", "--without-mingle"]
        if beat:
            command += ["--beat", f"--schedule={tmp_path / f'beat-{name}'}"]
        with log.open("w") as out:
            process = subprocess.Popen(command, cwd=ROOT, env=environ, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        worker = Worker(name=hostname, process=process, log=log)
        started.append(worker)
        if wait:
            # The worker logs "<hostname> ready." once it consumes its queues, whatever the broker.
            _wait_for(lambda: f"{hostname} ready." in log.read_text(errors="replace") or process.poll() is not None,
                      60, f"the Celery worker {name}")
            if process.poll() is not None:
                raise AssertionError(f"worker {name} exited: {worker.output()}")
        return worker

    try:
        yield start
    finally:
        for worker in started:
            worker.stop()


@pytest.fixture
def celery_worker_process(celery_workers) -> subprocess.Popen:
    """One real `celery worker` process on the local Redis (two pool processes)."""
    return celery_workers("test").process


@pytest.fixture
def exports_built_when_sent(monkeypatch, settings, tmp_path) -> Callable[..., Any]:
    """Export files built at once by whoever sends their build (instead of by a worker), into this
    test's own folder; returns ``download(client, url, **headers)``, which asks for an export as a
    client following Retry-After does: once more when the first answer is 202 (the file is built by then)."""
    from submissions import export_files

    settings.MAGEBENCH_EXPORT_ROOT = tmp_path / "exports"
    settings.MAGEBENCH_EXPORT_RETRY_AFTER_SECONDS = 1
    monkeypatch.setattr(export_files, "_send_build", export_files.export_file_build)

    def download(client: Any, url: str, **headers: Any) -> Any:
        response = client.get(url, **headers)
        if response.status_code == 202:
            assert response["Retry-After"] == "1"
            response = client.get(url, **headers)
        return response

    return download
