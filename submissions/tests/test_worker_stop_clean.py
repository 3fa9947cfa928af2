"""A worker stopped normally (SIGTERM, as the demo's Ctrl-C and every service manager send) ends by
itself, with exit code 0 and no error logged: its pool processes end as asked, none is killed."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, WAIT_PATIENCE

pytestmark = pytest.mark.integration


@pytest.mark.django_db(transaction=True)
def test_a_worker_stopped_with_sigterm_exits_0_and_logs_no_error(celery_workers):
    worker = celery_workers("clean", concurrency=4)
    signalled = time.monotonic()
    worker.process.send_signal(signal.SIGTERM)
    code = worker.process.wait(timeout=60 * WAIT_PATIENCE)
    print(f"worker of 4 pool processes stopped {time.monotonic() - signalled:.1f}s after SIGTERM")
    log = worker.log.read_text(errors="replace")
    assert code == 0, log[-4000:]
    assert "Warm shutdown" in log and "ERROR" not in log, log[-4000:]


def _demo_environment(data_dir: Path) -> dict[str, str]:
    """The demo's embedded defaults: SQLite and the file-system broker in its data directory."""
    drop = {"DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "MAGEBENCH_DATA_DIR": str(data_dir)}


def test_the_demo_s_worker_command_ends_by_itself_after_the_signal_the_demo_sends(tmp_path):
    environ = _demo_environment(tmp_path / "var")
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=environ, check=True,
                   timeout=600 * WAIT_PATIENCE)
    log = tmp_path / "worker.log"
    # What scripts/demo runs, in the background as it does (so without a terminal's Ctrl-C of its own).
    with log.open("w") as out:
        worker = subprocess.Popen([python, "manage.py", "run_worker"], cwd=ROOT, env=environ, stdout=out,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120 * WAIT_PATIENCE
        while " ready." not in log.read_text(errors="replace") and worker.poll() is None:
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-4000:]
            time.sleep(0.2)
        assert worker.poll() is None, log.read_text(errors="replace")[-4000:]
        signalled = time.monotonic()
        # The demo's cleanup: SIGTERM to each child it started (a Ctrl-C runs it).
        worker.send_signal(signal.SIGTERM)
        try:
            code = worker.wait(timeout=60 * WAIT_PATIENCE)
        except subprocess.TimeoutExpired:
            pytest.fail("the worker runs on after SIGTERM; its log ends:\n" + log.read_text(errors="replace")[-4000:])
        print(f"the demo's worker ended {time.monotonic() - signalled:.1f}s after SIGTERM")
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    text = log.read_text(errors="replace")
    assert code == 0 and "ERROR" not in text, text[-4000:]
