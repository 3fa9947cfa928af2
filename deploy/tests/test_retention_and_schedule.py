"""Which backups are kept, and backups taken at an interval until the container stops."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from deploy import store
from deploy.schedule import first_due
from deploy.settings import Settings, settings_from
from deploy.tests.conftest import SOURCE

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["20261101T030000Z", "20261102T030000Z", "20261103T030000Z", "20261104T030000Z", "20261105T030000Z"]


def _fake_backup(dest: Path, name: str) -> Path:
    (dest / name).mkdir(parents=True)
    (dest / name / "manifest.json").write_text('{"format": 1, "files": {}}')
    return dest / name


def _aged(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_prune_keeps_exactly_the_newest_backups_and_removes_partial_ones_a_day_old(tmp_path: Path) -> None:
    for name in NAMES:
        _fake_backup(tmp_path, name)
    (tmp_path / "20261106T030000Z.partial").mkdir()
    (tmp_path / "20261031T030000Z.partial").mkdir()
    _aged(tmp_path / "20261031T030000Z.partial", 86400 + 60)
    (tmp_path / "20261030T030000Z").mkdir()  # no manifest: not a backup, not for prune to judge
    (tmp_path / "notes.txt").write_text("the operator's")

    removed = store.backups_prune(tmp_path, keep=3)

    assert removed == ["20261031T030000Z.partial", "20261101T030000Z", "20261102T030000Z"]
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "20261030T030000Z", "20261103T030000Z", "20261104T030000Z", "20261105T030000Z", "20261106T030000Z.partial",
        "notes.txt"]


def test_prune_never_removes_the_newest_backup(tmp_path: Path) -> None:
    for name in NAMES[:2]:
        _fake_backup(tmp_path, name)

    done = subprocess.run([sys.executable, "-m", "deploy.backup", "prune", "--keep", "0"], cwd=ROOT, text=True,
                          capture_output=True, check=False, env={**os.environ, "MAGEBENCH_BACKUP_DEST": str(tmp_path)})

    assert (done.returncode, done.stdout) == (0, "removed 20261101T030000Z\n")
    assert [backup.name for backup in store.backups_complete(tmp_path)] == ["20261102T030000Z"]


def test_the_first_scheduled_backup_waits_for_an_interval_after_a_recent_one(tmp_path: Path) -> None:
    settings = settings_from({"MAGEBENCH_BACKUP_DEST": str(tmp_path), "MAGEBENCH_BACKUP_EVERY_SECONDS": "3600"})
    ten_past = datetime(2026, 11, 5, 3, 10, tzinfo=UTC).timestamp()
    assert first_due(settings, ten_past) == ten_past
    _fake_backup(tmp_path, "20261105T030000Z")

    assert first_due(settings, ten_past) == datetime(2026, 11, 5, 4, 0, tzinfo=UTC).timestamp()
    assert first_due(settings, ten_past + 3600) == ten_past + 3600


def _schedule(environ: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "deploy.backup", "schedule"], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **environ})


def _events(output: str) -> list[dict[str, object]]:
    events = [json.loads(line) for line in output.splitlines()]
    assert all(set(event) == {"time", "level", "message", "backup"} for event in events)
    return events


def test_the_schedule_takes_and_prunes_backups_and_stops_on_sigterm_leaving_no_partial(stack: Settings) -> None:
    process = _schedule({"MAGEBENCH_BACKUP_EVERY_SECONDS": "1", "MAGEBENCH_BACKUP_KEEP": "2"})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(list(stack.dest.glob("2*"))) < 3:
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        output, errors = process.communicate(timeout=10)
    finally:
        process.kill()

    assert time.monotonic() - stopped < 5
    assert process.returncode == 0, errors
    events = _events(output)
    taken = [str(event["backup"]) for event in events if str(event["message"]).startswith("backup taken")]
    assert len(taken) >= 2
    assert events[-1]["message"] == "stopped (SIGTERM)"
    assert not list(stack.dest.glob("*.partial"))
    kept = [backup.name for backup in store.backups_complete(stack.dest)]
    assert kept == sorted(taken, reverse=True)[:2]
    assert all(not store.backup_problems(backup) for backup in store.backups_complete(stack.dest))


def test_a_failed_scheduled_backup_is_logged_and_tried_again_at_the_next_interval(stack: Settings) -> None:
    process = _schedule({"MAGEBENCH_BACKUP_EVERY_SECONDS": "1",
                         "DATABASE_URL": stack.database_url.replace(SOURCE, "magebench_backup_none")})
    try:
        time.sleep(2.5)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=10)
    finally:
        process.kill()

    failures = [event for event in _events(output) if event["level"] == "error"]
    assert len(failures) >= 2
    assert all(str(event["message"]).startswith("backup failed: pg_dump failed: ") for event in failures)
    assert "not-for-the-manifest" not in output
    assert list(stack.dest.iterdir()) == []
