"""A scratch database on the machine's PostgreSQL, and a stack's folders, for the backup tool's tests."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from deploy.settings import Settings, settings_from

#: The machine's PostgreSQL, trusting local connections (MAGEBENCH_BACKUP_TEST_SERVER overrides).
SERVER = os.environ.get("MAGEBENCH_BACKUP_TEST_SERVER", "postgres://postgres@127.0.0.1:5432")
#: One per test process: the suite runs in several at once (pytest -n), each with its own scratch database.
SOURCE = f"magebench_backup_src_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{os.getpid()}"


def psql(database: str, sql: str) -> str:
    done = subprocess.run(["psql", "--no-psqlrc", "-X", "-At", "--set=ON_ERROR_STOP=1", f"--dbname={SERVER}/{database}",
                           "-c", sql], capture_output=True, text=True, check=True)
    return done.stdout


def _drop(database: str) -> None:
    psql("postgres", f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


@pytest.fixture
def source_database() -> Iterator[str]:
    """A scratch database (SOURCE) with two tables (text, numbers, bytea) and a sequence moved on to 41."""
    _drop(SOURCE)
    psql("postgres", f"CREATE DATABASE {SOURCE}")
    try:
        psql(SOURCE, """
            CREATE TABLE player (id serial PRIMARY KEY, name text NOT NULL, avatar bytea);
            CREATE TABLE score (player_id int REFERENCES player, points numeric(6, 2));
            CREATE SEQUENCE ticket START 1;
            INSERT INTO player (name, avatar) VALUES ('alice', '\\x00ff10'), ('bob', NULL);
            INSERT INTO score VALUES (1, 12.50), (2, 3.25);
            SELECT setval('ticket', 41);
        """)
        yield SOURCE
    finally:
        _drop(SOURCE)


def _write(path: Path, content: bytes, mode: int, mtime: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    os.chmod(path, mode)
    os.utime(path, (mtime, mtime))


@pytest.fixture
def stack(tmp_path: Path, source_database: str, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """A data folder (files in subfolders, static files, files the site is half way through writing),
    a secrets folder, and the settings of a backup of them with the source database."""
    data, secrets = tmp_path / "data", tmp_path / "secrets"
    _write(data / "media" / "uploads" / "ab" / "abcdef.zip", bytes(range(256)) * 4, 0o644, 1_700_000_000)
    _write(data / "media" / "uploads" / "cd.partial", b"half an upload", 0o644, 1_700_000_001)
    _write(data / "trajectories" / "run-1" / "index.json", b'{"steps": []}\n', 0o640, 1_700_000_002)
    _write(data / "trajectories" / "run-1" / "index.tmp", b'{"ste', 0o644, 1_700_000_003)
    _write(data / "scenarios" / "sokoban" / "level.pkl", b"\x80\x04level", 0o755, 1_700_000_004)
    _write(data / "snapshots" / "board" / ".lock", b"", 0o644, 1_700_000_005)
    _write(data / "staticfiles" / "app.css", b"body {}", 0o644, 1_700_000_006)
    _write(data / "celerybeat-schedule", b"beat", 0o644, 1_700_000_007)
    (data / "exports" / "empty").mkdir(parents=True)
    for folder, mtime in (("media/uploads/ab", 1_600_000_000), ("trajectories/run-1", 1_600_000_001),
                          ("exports/empty", 1_600_000_002), ("exports", 1_600_000_003)):
        os.utime(data / folder, (mtime, mtime))
    _write(secrets / "django-secret-key", b"a generated secret key", 0o600, 1_700_000_010)
    _write(secrets / "field-encryption-key", b"a generated field key", 0o600, 1_700_000_011)
    environ = {"DATABASE_URL": f"{SERVER.replace('postgres@', 'postgres:not-for-the-manifest@')}/{source_database}",
               "MAGEBENCH_DATA_DIR": str(data), "MAGEBENCH_SECRETS_DIR": str(secrets),
               "MAGEBENCH_BACKUP_DEST": str(tmp_path / "backups")}
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return settings_from(environ)
