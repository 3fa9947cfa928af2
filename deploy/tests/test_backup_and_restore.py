"""A backup taken of a real database and folders, and brought back over their changed or destroyed state."""
from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from deploy import store
from deploy.restore import backup_restore
from deploy.settings import Settings
from deploy.tests.conftest import SERVER, SOURCE, psql

ROOT = Path(__file__).resolve().parents[2]


def _tree(folder: Path) -> dict[str, tuple[bytes | None, int, int]]:
    """Each entry under ``folder`` but its static files: (bytes, or None for a folder; mode; mtime)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if relative.startswith("staticfiles"):
            continue
        status = path.lstat()
        found[relative] = (None if path.is_dir() else path.read_bytes(), stat.S_IMODE(status.st_mode),
                           int(status.st_mtime))
    return found


def _rows(database: str) -> str:
    return psql(database, "SELECT p.id, p.name, p.avatar, s.points FROM player p LEFT JOIN score s "
                          "ON s.player_id = p.id ORDER BY p.id; SELECT last_value FROM ticket;")


def _data_only(database: str) -> str:
    dump = subprocess.run(["pg_dump", "--data-only", f"--dbname={SERVER}/{database}"], capture_output=True,
                          text=True, check=True).stdout
    # pg_dump fences its script with a random key (\restrict KEY) of its own at each run.
    fence = ("\\restrict", "\\unrestrict")
    return "".join(line for line in dump.splitlines(keepends=True) if not line.startswith(fence))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "deploy.backup", *args], cwd=ROOT, capture_output=True, text=True,
                          check=False, timeout=120)


def _destroy(settings: Settings, database: str) -> None:
    psql(database, "UPDATE player SET avatar = NULL; DELETE FROM score WHERE player_id = 2; "
                   "INSERT INTO player (name) VALUES ('mallory'); SELECT nextval('ticket');")
    (settings.data_dir / "media" / "uploads" / "ab" / "abcdef.zip").write_bytes(b"overwritten")
    (settings.data_dir / "scenarios" / "sokoban" / "level.pkl").unlink()
    os.chmod(settings.data_dir / "trajectories" / "run-1" / "index.json", 0o600)
    (settings.data_dir / "media" / "new-upload.zip").write_bytes(b"after the backup")
    (settings.data_dir / "staticfiles" / "new.css").write_bytes(b"collected after the backup")
    (settings.secrets_dir / "django-secret-key").write_bytes(b"another key")
    (settings.secrets_dir / "field-encryption-key").unlink()


def test_a_backup_holds_the_database_the_data_without_static_files_and_the_secrets(stack: Settings) -> None:
    done = _cli("take")

    assert done.returncode == 0, done.stderr
    name = done.stdout.splitlines()[-1]
    folder = stack.dest / name
    assert store.NAME.fullmatch(name) and stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert sorted(path.name for path in stack.dest.iterdir()) == [name]
    assert sorted(path.name for path in folder.iterdir()) == ["data.tar.gz", "database.dump", "manifest.json",
                                                              "secrets.tar"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["format"] == 1 and manifest["database"] == {"name": SOURCE, "host": "127.0.0.1"}
    assert manifest["pg_dump_version"].startswith("pg_dump (PostgreSQL) ")
    assert manifest["files"] == {file: {"size": (folder / file).stat().st_size,
                                        "sha256": hashlib.sha256((folder / file).read_bytes()).hexdigest()}
                                 for file in ("data.tar.gz", "database.dump", "secrets.tar")}
    assert "not-for-the-manifest" not in (folder / "manifest.json").read_text() + done.stdout + done.stderr
    with tarfile.open(folder / "data.tar.gz") as archive:
        members = archive.getnames()
    # By name, folders before their content; no static files, no half-written files, no locks.
    assert members == ["exports", "exports/empty", "media", "media/uploads", "media/uploads/ab",
                       "media/uploads/ab/abcdef.zip", "scenarios", "scenarios/sokoban", "scenarios/sokoban/level.pkl",
                       "snapshots", "snapshots/board", "trajectories", "trajectories/run-1",
                       "trajectories/run-1/index.json"]
    with tarfile.open(folder / "secrets.tar") as archive:
        assert archive.getnames() == ["django-secret-key", "field-encryption-key"]


def test_the_same_folder_gives_the_same_data_archive(stack: Settings, tmp_path: Path) -> None:
    from deploy.archive import data_excluded, folder_archive

    folder_archive(stack.data_dir, tmp_path / "one.tar.gz", excluded=data_excluded)
    folder_archive(stack.data_dir, tmp_path / "two.tar.gz", excluded=data_excluded)

    assert (tmp_path / "one.tar.gz").read_bytes() == (tmp_path / "two.tar.gz").read_bytes()


def test_a_restore_brings_back_the_rows_the_files_their_modes_and_times_and_the_secrets(stack: Settings) -> None:
    rows, data_only = _rows(SOURCE), _data_only(SOURCE)
    assert rows == "1|alice|\\x00ff10|12.50\n2|bob||3.25\n41\n"
    files = _tree(stack.data_dir)
    secrets = _tree(stack.secrets_dir)
    backup = store.backup_take(stack)
    _destroy(stack, SOURCE)
    assert _rows(SOURCE) != rows and _tree(stack.data_dir) != files

    done = _cli("restore", backup.name)

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"restored {backup.name}"
    assert _rows(SOURCE) == rows
    assert _data_only(SOURCE) == data_only
    expected = {name: entry for name, entry in files.items()
                if not name.endswith((".partial", ".tmp", ".lock")) and name != "celerybeat-schedule"}
    assert _tree(stack.data_dir) == expected
    assert expected["scenarios/sokoban/level.pkl"] == (b"\x80\x04level", 0o755, 1_700_000_004)
    assert expected["trajectories/run-1/index.json"][1:] == (0o640, 1_700_000_002)
    assert expected["exports/empty"] == (None, 0o755, 1_600_000_002)
    # collectstatic writes the static files at each start: a restore leaves them as they are.
    assert sorted(p.name for p in (stack.data_dir / "staticfiles").iterdir()) == ["app.css", "new.css"]
    assert _tree(stack.secrets_dir) == secrets
    assert secrets["django-secret-key"] == (b"a generated secret key", 0o600, 1_700_000_010)


def test_a_backup_with_a_damaged_file_is_refused_before_anything_changes(stack: Settings) -> None:
    backup = store.backup_take(stack)
    _destroy(stack, SOURCE)
    rows, files = _rows(SOURCE), _tree(stack.data_dir)
    dump = backup.path / "database.dump"
    damaged = bytearray(dump.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    dump.write_bytes(bytes(damaged))

    with pytest.raises(store.BackupError, match="database.dump: its sha256 is not the manifest's"):
        backup_restore(backup, stack, say=lambda _: None)

    assert _rows(SOURCE) == rows
    assert "mallory" in rows
    assert _tree(stack.data_dir) == files
    assert "DAMAGED: database.dump" in _cli("list", "--verify").stdout


def _with_data_archive(backup: store.Backup, members: list[tuple[tarfile.TarInfo, bytes]]) -> None:
    """``backup`` with a data archive of ``members``, its manifest saying it is whole."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for info, content in members:
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    (backup.path / "data.tar.gz").write_bytes(buffer.getvalue())
    manifest = json.loads((backup.path / "manifest.json").read_text())
    manifest["files"]["data.tar.gz"] = {"size": len(buffer.getvalue()),
                                        "sha256": hashlib.sha256(buffer.getvalue()).hexdigest()}
    (backup.path / "manifest.json").write_text(json.dumps(manifest))


def test_a_data_archive_reaching_outside_the_data_folder_is_refused_before_anything_changes(
        stack: Settings, tmp_path: Path) -> None:
    backup = store.backup_take(stack)
    _with_data_archive(backup, [(tarfile.TarInfo("media/fine.txt"), b"fine"), (tarfile.TarInfo("../evil"), b"evil")])
    _destroy(stack, SOURCE)
    rows, files = _rows(SOURCE), _tree(stack.data_dir)

    done = _cli("restore", str(backup.path))

    assert done.returncode == 1
    assert "../evil" in done.stderr and "nothing was changed" in done.stderr
    assert not (tmp_path / "evil").exists()
    assert _rows(SOURCE) == rows and _tree(stack.data_dir) == files


def test_a_failed_pg_dump_leaves_no_backup_and_says_why_without_the_password(stack: Settings) -> None:
    url = f"{SERVER.replace('postgres@', 'postgres:a-password-never-shown@')}/magebench_backup_no_such_database"

    done = subprocess.run([sys.executable, "-m", "deploy.backup", "take"], cwd=ROOT, capture_output=True, text=True,
                          check=False, env={**os.environ, "DATABASE_URL": url})

    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("backup take: pg_dump failed: ")
    assert 'database "magebench_backup_no_such_database" does not exist' in done.stderr
    assert "a-password-never-shown" not in done.stderr
    assert list(stack.dest.iterdir()) == []
