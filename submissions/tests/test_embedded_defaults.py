"""The development defaults: SQLite and kombu's file-system broker with a real worker process."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.integration


def test_a_real_worker_on_sqlite_and_the_file_broker_completes_a_submission(tmp_path, baseline_endpoint):
    server = baseline_endpoint("oracle")
    env = {k: v for k, v in os.environ.items()
           if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "MAGEBENCH_MEDIA_ROOT", "MAGEBENCH_SCENARIO_ROOT"}}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings.base", "MAGEBENCH_ENV": "development",
                "MAGEBENCH_DATA_DIR": str(tmp_path)})

    def manage(*args: str, timeout: float = 300) -> str:
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=timeout)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    manage("migrate", "--noinput")
    imported = manage("import_magebench", "fixtures/magebench", "--suite", "fixture", "--no-verify")
    assert "sokoban:" in imported and "in mini" in imported
    again = manage("import_magebench", "fixtures/magebench", "--suite", "fixture", "--no-verify")
    assert " 0 created, 0 updated" in again  # idempotent

    worker_log = (tmp_path / "worker.log").open("w")
    worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "config", "worker", "--concurrency=1",
                               "--loglevel=INFO"], cwd=ROOT, env=env, stdout=worker_log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        out = manage("submit_endpoint", "--team", "Lab", "--model", "Oracle", "--env", "sokoban", "--flow",
                     "global", "--subset", "mini", "--url", server.url, "--repeats", "1", "--wait")
    except subprocess.TimeoutExpired as stuck:
        worker_log.flush()
        pytest.fail(f"the submission did not finish: {(stuck.stdout or b'')[-300:]!r}\nworker log:\n"
                    + (tmp_path / "worker.log").read_text()[-4000:])
    finally:
        # A warm shutdown first; a machine too busy for it to end in time gets the group killed, so
        # no worker outlives the test.
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        worker_log.close()
    assert "10 attempts queued" in out
    assert "completed  10/10 done" in out, (tmp_path / "worker.log").read_text()[-3000:]
    assert (tmp_path / "db.sqlite3").exists()
