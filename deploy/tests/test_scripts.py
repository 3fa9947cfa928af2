"""scripts/backup and scripts/restore drive the stack through compose: the commands they give it."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: A compose that records its arguments and answers as a stack of postgres, redis, web, beat and backup.
FAKE_COMPOSE = r"""#!/usr/bin/env bash
echo "$*" >>"$COMPOSE_LOG"
case "$*" in
  *"config --services") printf 'postgres\nredis\nmigrate\nweb\nbeat\nbackup\n' ;;
  *"deploy.backup take") printf 'database.dump: 10 bytes\n20261129T030000Z\n' ;;
  *"deploy.backup restore"*) echo "${RESTORE_SAYS:-restored}"; exit "${RESTORE_EXIT:-0}" ;;
esac
"""


def _run(tmp_path: Path, script: str, *args: str, **environ: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    compose = tmp_path / "compose"
    compose.write_text(FAKE_COMPOSE)
    compose.chmod(0o755)
    log = tmp_path / "compose.log"
    done = subprocess.run([str(ROOT / "scripts" / script), *args], cwd=tmp_path, capture_output=True, text=True,
                          check=False, timeout=60,
                          env={**os.environ, "COMPOSE": str(compose), "COMPOSE_LOG": str(log), **environ})
    return done, log.read_text().splitlines() if log.exists() else []


def test_backup_takes_one_in_the_backup_service_and_prints_its_name(tmp_path: Path) -> None:
    done, calls = _run(tmp_path, "backup")

    assert done.returncode == 0, done.stderr
    assert calls == ["exec -T backup python -m deploy.backup take"]
    assert done.stdout == "backup taken: 20261129T030000Z\n"


def test_restore_stops_the_app_restores_in_a_one_off_backup_container_and_starts_the_stack(tmp_path: Path) -> None:
    done, calls = _run(tmp_path, "restore", "20261129T030000Z",
                       MAGEBENCH_COMPOSE_FILES="-f docker/compose.check.yml")

    assert done.returncode == 0, done.stderr
    files = "-f docker-compose.yml -f docker/compose.check.yml"
    assert calls == [f"{files} config --services", f"{files} stop web beat backup", f"{files} up -d postgres redis",
                     f"{files} exec -T postgres pg_isready -h 127.0.0.1 -q",
                     f"{files} run --rm --no-deps -T backup python -m deploy.backup restore 20261129T030000Z",
                     f"{files} exec -T redis redis-cli DEL magebench:broker-marker", f"{files} up -d"]
    assert done.stdout.splitlines()[-1] == "[restore] the stack is back, as of backup 20261129T030000Z"


def test_restore_clears_the_very_marker_key_the_watchdog_keeps() -> None:
    # scripts/restore is bash and names the key itself: the two must not drift apart.
    from submissions.watchdog import BROKER_MARKER_KEY

    script = (Path(__file__).resolve().parents[2] / "scripts" / "restore").read_text()
    assert f"redis-cli DEL {BROKER_MARKER_KEY} " in script


def test_a_refused_backup_starts_the_stack_again_and_a_failed_restore_leaves_the_app_stopped(tmp_path: Path) -> None:
    refused, calls = _run(tmp_path, "restore", "20261129T030000Z", RESTORE_EXIT="1",
                          RESTORE_SAYS="backup restore: 20261129T030000Z is damaged; nothing was changed:")
    assert refused.returncode == 1
    assert calls[-1] == "up -d"
    (tmp_path / "compose.log").unlink()

    failed, calls = _run(tmp_path, "restore", "20261129T030000Z", RESTORE_EXIT="1",
                         RESTORE_SAYS="backup restore: pg_restore failed: out of disk")
    assert failed.returncode == 1
    assert calls[-1].startswith("run --rm --no-deps -T backup")
    assert "left stopped" in failed.stdout
