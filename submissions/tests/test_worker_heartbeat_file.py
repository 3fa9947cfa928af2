"""A worker's heartbeat file, which its container's health check reads without starting Django."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from submissions.models import LiveWorker
from submissions.workers import _Beat

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "config" / "heartbeat.py"


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    # As the compose file's health check runs it: a plain script, without Django's settings.
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    return subprocess.run([sys.executable, str(CHECK), *args], capture_output=True, text=True, timeout=30, env=env)


@pytest.mark.django_db(transaction=True)
def test_each_beat_of_a_worker_records_its_row_and_touches_its_heartbeat_file(settings, tmp_path):
    heartbeat = tmp_path / "run" / "worker-heartbeat"
    settings.MAGEBENCH_WORKER_HEARTBEAT_FILE = heartbeat
    beat = _Beat("light@test", ["light"], 3)
    beat.beat()
    assert heartbeat.exists() and LiveWorker.objects.filter(hostname="light@test").exists()
    os.utime(heartbeat, (time.time() - 600, time.time() - 600))
    beat.beat()
    assert time.time() - heartbeat.stat().st_mtime < 60


def test_a_worker_that_cannot_record_itself_leaves_its_heartbeat_file_alone(settings, tmp_path, monkeypatch):
    from django.db import OperationalError

    from submissions import workers

    def database_down(**_: object) -> None:
        raise OperationalError("the database is restarting")

    settings.MAGEBENCH_WORKER_HEARTBEAT_FILE = tmp_path / "worker-heartbeat"
    monkeypatch.setattr(workers, "worker_seen", database_down)
    _Beat("light@test", ["light"], 3).beat()
    assert not (tmp_path / "worker-heartbeat").exists()


def test_the_heartbeat_check_passes_on_a_fresh_file_and_fails_on_a_stale_or_missing_one(tmp_path):
    heartbeat = tmp_path / "worker-heartbeat"
    missing = _check("--file", str(heartbeat), "--max-age", "120")
    assert missing.returncode == 1 and "no heartbeat file" in missing.stderr
    heartbeat.touch()
    assert _check("--file", str(heartbeat), "--max-age", "120").returncode == 0
    os.utime(heartbeat, (time.time() - 300, time.time() - 300))
    stale = _check("--file", str(heartbeat), "--max-age", "120")
    assert stale.returncode == 1 and "s old (limit 120 s)" in stale.stderr


def test_the_heartbeat_check_reads_the_file_the_setting_names(tmp_path):
    heartbeat = tmp_path / "elsewhere"
    heartbeat.touch()
    env = {**os.environ, "MAGEBENCH_WORKER_HEARTBEAT_FILE": str(heartbeat)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    assert subprocess.run([sys.executable, str(CHECK)], env=env, timeout=30).returncode == 0


def test_beats_schedule_file_counts_as_its_heartbeat_whichever_files_its_store_writes(tmp_path):
    # dbm.dumb keeps a schedule as schedule.dat, .dir and .bak; dbm.gnu as the file itself.
    (tmp_path / "celerybeat-schedule.dat").touch()
    assert _check("--file", str(tmp_path / "celerybeat-schedule"), "--max-age", "600").returncode == 0
