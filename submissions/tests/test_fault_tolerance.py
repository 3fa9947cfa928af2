"""Fault tolerance on real processes: workers killed mid-episode, Redis and PostgreSQL restarted
mid-run (servers of the test's own, so the tests running beside it are not touched), a paused worker
coming back after its attempt was handed on, a broker that cannot be reached.

Each test checks the same promise: every attempt ends exactly once, no episode is scored twice and
no chat-completions request is made for nothing (the endpoint's request count equals the calls the
recorded tries made).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from accounts.services import team_get_or_create
from conftest import broker_at
from submissions.engine import attempt_run
from submissions.models import Attempt, LiveWorker, Submission, SubmissionResult
from submissions.services import model_entry_upsert, submission_create_endpoint
from submissions.watchdog import BROKER_MARKER_KEY, attempts_requeue_stalled, watchdog_run
from submissions.workers import worker_seen

pytestmark = pytest.mark.integration

#: Worker settings that make a dead worker noticed within seconds instead of minutes.
FAST_WATCHDOG = {
    "MAGEBENCH_HEARTBEAT_EVERY_SECONDS": "0.3",
    "MAGEBENCH_STALLED_AFTER_SECONDS": "4",
    "MAGEBENCH_WATCHDOG_EVERY_SECONDS": "1",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _submit(url: str, *, name: str = "Oracle", flow: str = "online", repeats: int = 1,
            only: int | None = None) -> Submission:
    model = model_entry_upsert(team=team_get_or_create(name="Fault team"), name=name)
    with transaction.atomic():  # the messages go out on commit, when only the kept attempts exist
        submission = submission_create_endpoint(model=model, env="sokoban", flow=flow, subset="mini",
                                                suite="fixture", endpoint_url=url, endpoint_model="oracle",
                                                settings={"repeats": repeats, "resolution": 256})
        if only is not None:  # keep the first few scenarios: enough work to interrupt, little to wait for
            keep = list(submission.attempts.order_by("id").values_list("id", flat=True)[:only])
            submission.attempts.exclude(id__in=keep).delete()
    return submission


def _finished(submission: Submission) -> bool:
    try:
        return not Submission.objects.get(id=submission.id).is_active
    except (OperationalError, InterfaceError):  # the database is restarting: ask again
        connection.close()
        return False


def _assert_each_attempt_ended_once(submission: Submission, server: Any) -> list[Attempt]:
    submission.refresh_from_db()
    assert submission.status == Submission.Status.COMPLETED, submission.status_reason
    attempts = list(submission.attempts.order_by("id"))
    assert all(a.status == Attempt.Status.SCORED and a.score == pytest.approx(100.0) for a in attempts)
    assert all(a.trajectory_path.endswith(f"try-{a.tries}") for a in attempts)
    result = SubmissionResult.objects.get(submission=submission)
    assert (result.n_attempts, result.n_scored) == (len(attempts), len(attempts))
    assert result.mean == pytest.approx(100.0)
    return attempts


def _tries_on_disk(attempt: Attempt) -> list[str]:
    folder = Path(django_settings.MEDIA_ROOT) / "trajectories" / str(attempt.submission_id) / str(attempt.id)
    return sorted(p.name for p in folder.iterdir())


# --- a worker dies ---------------------------------------------------------------------------------


def test_a_worker_killed_mid_episode_hands_the_attempt_to_another_worker_which_scores_it_once(
        fixture_scenarios, baseline_endpoint, celery_workers, wait_for):
    # Every request stalls 0.3 s, so the episode is still going when the first worker is killed.
    server = baseline_endpoint("oracle", fault="timeout", delay=0.3)
    doomed = celery_workers("doomed", concurrency=1, env=FAST_WATCHDOG)
    submission = _submit(server.url, only=1)
    attempt = submission.attempts.get()
    wait_for(lambda: Attempt.objects.filter(id=attempt.id, model_calls__gte=2, worker=doomed.name).exists(), 60,
             "the first worker to be a few steps into the episode")
    doomed.kill()
    calls_before_the_kill = server.chat_requests
    rescuer = celery_workers("rescuer", concurrency=1, beat=True, env=FAST_WATCHDOG)
    wait_for(lambda: _finished(submission), 120, "the other worker to finish the attempt")

    attempt = _assert_each_attempt_ended_once(submission, server)[0]
    assert attempt.worker == rescuer.name and attempt.tries == 2
    assert _tries_on_disk(attempt) == ["try-1", "try-2"]  # the killed try's partial trajectory is kept apart
    # The second try played a whole episode of its own; nothing else called the endpoint.
    assert server.chat_requests == calls_before_the_kill + attempt.model_calls
    assert "worker_lost" not in attempt.error_kind  # scored: the interruption is history, not an error


@pytest.mark.parametrize(("heartbeat_every", "stopped_by"), [
    (0.0, "another worker has taken it over"),  # it beats again: stops at once, mid-episode
    (3600.0, "finished after another worker took it over"),  # it never beats: its final write is refused
])
def test_a_worker_that_comes_back_after_its_attempt_was_handed_on_writes_nothing(
        fixture_scenarios, baseline_endpoint, transactional_db, settings, caplog, heartbeat_every, stopped_by):
    # The first try's first request stalls 2 s: long enough for the watchdog to decide the worker is
    # dead and for another worker to run and score the attempt; then the first try wakes up.
    settings.MAGEBENCH_HEARTBEAT_EVERY_SECONDS = heartbeat_every
    server = baseline_endpoint("oracle", fault="timeout", first_n=1, delay=2.0)
    submission = _submit(server.url, only=1)
    attempt = submission.attempts.get()
    paused: dict[str, object] = {}

    def first_worker() -> None:
        try:
            paused["result"] = attempt_run(attempt_id=attempt.id, worker="paused")
        finally:
            connection.close()

    thread = threading.Thread(target=first_worker)
    thread.start()
    deadline = time.monotonic() + 10
    while not Attempt.objects.filter(id=attempt.id, status=Attempt.Status.RUNNING).exists():
        assert time.monotonic() < deadline, "the first try never started"
        time.sleep(0.05)
    Attempt.objects.filter(id=attempt.id).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert attempts_requeue_stalled(stalled_after_seconds=60, include_waiting=False)["stalled"] == 1
    assert attempt_run(attempt_id=attempt.id, worker="rescuer") is None
    scored = Attempt.objects.get(id=attempt.id)
    assert (scored.status, scored.tries, scored.worker) == (Attempt.Status.SCORED, 2, "rescuer")
    thread.join(30)
    assert not thread.is_alive() and paused["result"] is None
    assert stopped_by in caplog.text
    after = Attempt.objects.get(id=attempt.id)
    assert (after.status, after.tries, after.worker, after.score, after.finished_at, after.trajectory_path) == (
        scored.status, scored.tries, scored.worker, scored.score, scored.finished_at, scored.trajectory_path)
    assert after.trajectory_path.endswith("try-2")
    assert SubmissionResult.objects.get(submission=submission).n_attempts == 1


# --- the broker ------------------------------------------------------------------------------------


class RedisServer:
    """A redis-server of the test's own on a free port, configured like the machine's (no persistence)."""

    def __init__(self, folder: Path) -> None:
        self.port = _free_port()
        self.folder = folder
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # no clean shutdown: whatever was queued is gone
            self.process.wait(10)


@pytest.fixture
def redis_server(tmp_path) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed (scripts/setup installs it)")
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


def test_a_redis_restart_mid_run_loses_no_queued_attempt(fixture_scenarios, baseline_endpoint, celery_workers,
                                                          redis_server, wait_for):
    server = baseline_endpoint("oracle", fault="timeout", delay=0.2)
    celery_workers("w", concurrency=1, beat=True, broker=redis_server.url, env=FAST_WATCHDOG)
    with broker_at(redis_server.url):
        submission = _submit(server.url, only=4)
        wait_for(lambda: submission.attempts.filter(status=Attempt.Status.RUNNING).exists(), 60, "a first attempt")
        waiting = submission.attempts.filter(status=Attempt.Status.PENDING).count()
        assert waiting >= 2, "the restart should find attempts still waiting in the queue"
        redis_server.stop()
        time.sleep(1.0)
        redis_server.start()  # back, and empty
        wait_for(lambda: _finished(submission), 180, "the submission to finish after the restart")
    attempts = _assert_each_attempt_ended_once(submission, server)
    # Nothing ran twice: no attempt needed a second try and the endpoint saw exactly the recorded calls.
    assert [a.tries for a in attempts] == [1] * len(attempts)
    assert server.chat_requests == sum(a.model_calls for a in attempts)


def test_an_unreachable_broker_keeps_new_attempts_waiting_until_the_watchdog_sends_them(
        fixture_scenarios, transactional_db, settings, baseline_endpoint):
    import redis

    server = baseline_endpoint("oracle")
    with broker_at(f"redis://127.0.0.1:{_free_port()}/0"):
        submission = _submit(server.url, only=2)  # the web request succeeds although nothing could be sent
    attempts = list(submission.attempts.order_by("id"))
    assert [a.status for a in attempts] == [Attempt.Status.PENDING] * 2
    assert [a.queued_at for a in attempts] == [None, None]
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.set(BROKER_MARKER_KEY, "up")  # the broker itself kept its messages
    client.delete("light")
    assert watchdog_run()["queued"] == 0  # a moment's grace for a send still on its way
    submission.attempts.update(created_at=timezone.now() - timedelta(minutes=5))
    assert watchdog_run() == {"stalled": 0, "failed": 0, "queued": 2, "broker_emptied": 0,
                              "idle_resent": 0, "prepared": 0}
    assert client.llen("light") == 2
    assert all(a.queued_at is not None for a in submission.attempts.all())
    client.delete("light")


def test_the_watchdog_sends_every_waiting_attempt_again_when_the_broker_comes_back_empty(
        fixture_scenarios, transactional_db, settings):
    import redis

    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    submission = _submit("http://127.0.0.1:9/v1", only=3)
    client.delete("light")
    client.set(BROKER_MARKER_KEY, "up")
    assert watchdog_run()["broker_emptied"] == 0 and client.llen("light") == 0
    client.delete(BROKER_MARKER_KEY)  # what a restart without persistence leaves
    assert watchdog_run() == {"stalled": 0, "failed": 0, "queued": 3, "broker_emptied": 1,
                              "idle_resent": 0, "prepared": 0}
    assert client.llen("light") == 3
    assert watchdog_run()["broker_emptied"] == 0  # the marker is back: no second round of copies
    client.delete("light")
    assert submission.attempts.filter(status=Attempt.Status.PENDING).count() == 3


def test_the_watchdog_sends_again_the_turns_a_killed_worker_took_once_their_queue_stands_idle(
        fixture_scenarios, transactional_db, settings):
    import redis

    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.set(BROKER_MARKER_KEY, "up")  # the broker itself was not emptied
    submission = _submit("http://127.0.0.1:9/v1", only=3)
    client.delete("light")  # the messages went with a worker killed while it held them
    worker_seen(hostname="light@elsewhere", queues=["light"], concurrency=2)
    attempts = submission.attempts.order_by("id")
    assert watchdog_run()["idle_resent"] == 0  # just sent: a free worker may be about to take them
    long_ago = timezone.now() - timedelta(seconds=settings.MAGEBENCH_STALLED_AFTER_SECONDS + 1)
    attempts.update(queued_at=long_ago)
    first = attempts.first()
    Attempt.objects.filter(id=first.id).update(status=Attempt.Status.RUNNING, heartbeat_at=timezone.now())
    assert watchdog_run()["idle_resent"] == 0  # one runs: its worker takes the next turn when it is done
    Attempt.objects.filter(id=first.id).update(status=Attempt.Status.PENDING, heartbeat_at=None)
    LiveWorker.objects.all().delete()
    assert watchdog_run()["idle_resent"] == 0  # no worker reads the queue: copies would only pile up
    worker_seen(hostname="light@elsewhere", queues=["light"], concurrency=2)
    assert watchdog_run() == {"stalled": 0, "failed": 0, "queued": 0, "broker_emptied": 0,
                              "idle_resent": 3, "prepared": 0}
    assert client.llen("light") == 3 and all(a.queued_at > long_ago for a in attempts)
    assert watchdog_run()["idle_resent"] == 0  # sent again just now: no second round of copies
    client.delete("light")


# --- the database ----------------------------------------------------------------------------------


def _postgresql_programs() -> Path | None:
    """The folder of PostgreSQL's server programs (initdb, pg_ctl), the newest installed."""
    folders = [f for f in Path("/usr/lib/postgresql").glob("*/bin") if f.parent.name.replace(".", "").isdigit()]
    for folder in sorted(folders, key=lambda f: [int(n) for n in f.parent.name.split(".")], reverse=True):
        if (folder / "initdb").is_file():
            return folder
    found = shutil.which("initdb")
    return Path(found).parent if found else None


class PostgresServer:
    """A PostgreSQL server of the test's own on a free port, so the test can restart it without
    touching the one the other test processes share. The server refuses to run as root: as root its
    programs run as the `postgres` user, which owns the folder."""

    def __init__(self, programs: Path) -> None:
        self.programs = programs
        self.port = _free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="magebench-postgres-"))
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.folder, "postgres")

    def _run(self, program: str, *arguments: str, **options: Any) -> subprocess.CompletedProcess:
        command = [str(self.programs / program), *arguments]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=True, timeout=120, capture_output=True, **options)

    def _pg_ctl(self, action: str, *arguments: str) -> None:
        # fsync off: what is tested is the server going away and coming back, not the disk
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", action, "-D", str(self.folder / "data"), "-l", str(self.folder / "log"), "-w",
                  "-o", options, *arguments)

    def start(self) -> None:
        self._run("initdb", "-D", str(self.folder / "data"), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--no-sync")
        self._pg_ctl("start")

    def copy_database(self, source: dict[str, Any]) -> None:
        """Create the database ``source`` names here, with everything in it."""
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", source["NAME"])
        dump = subprocess.run(
            [str(self.programs / "pg_dump"), "--no-owner", "-h", source["HOST"] or "127.0.0.1",
             "-p", str(source["PORT"] or 5432), "-U", source["USER"] or "postgres", source["NAME"]],
            check=True, timeout=120, capture_output=True)
        self._run("psql", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                  "-d", source["NAME"], input=dump.stdout)

    def restart(self) -> None:
        self._pg_ctl("restart", "-m", "fast")

    def stop(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError):
            self._pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def database_on_its_own_server(transactional_db) -> Iterator[PostgresServer]:
    """Moves the test's database (this process's and its workers') to a copy on a server of its own."""
    if connection.vendor != "postgresql":
        pytest.skip("restarts a PostgreSQL server")
    programs = _postgresql_programs()
    if programs is None:
        pytest.fail("PostgreSQL's server programs (initdb, pg_ctl) are not installed")
    server = PostgresServer(programs)
    try:
        server.start()
        server.copy_database(connection.settings_dict)
        shared = {key: connection.settings_dict[key] for key in ("HOST", "PORT", "USER")}
        connection.close()
        # Every connection of this process reads this dict, and the workers get their URL from it.
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(server.port), USER="postgres")
        try:
            yield server
        finally:
            connection.close()
            connection.settings_dict.update(shared)
    finally:
        server.stop()


def test_a_postgresql_restart_mid_run_loses_nothing_and_runs_nothing_twice(
        database_on_its_own_server, fixture_scenarios, baseline_endpoint, celery_workers, wait_for):
    server = baseline_endpoint("oracle", fault="timeout", delay=0.2)
    # A stall limit longer than the outage: the restart must not look like a dead worker.
    celery_workers("w", concurrency=2, beat=True, env={**FAST_WATCHDOG, "MAGEBENCH_STALLED_AFTER_SECONDS": "60"})
    submission = _submit(server.url, only=5)
    wait_for(lambda: submission.attempts.filter(status=Attempt.Status.RUNNING, model_calls__gte=1).exists(), 60,
             "attempts to be running")
    connection.close()
    database_on_its_own_server.restart()
    wait_for(lambda: _finished(submission), 240, "the submission to finish after the restart")
    attempts = _assert_each_attempt_ended_once(submission, server)
    assert [a.tries for a in attempts] == [1] * len(attempts)
    assert server.chat_requests == sum(a.model_calls for a in attempts)
