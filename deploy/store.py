"""The backups of a folder: taking one, its manifest, which are complete, which to remove."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from deploy import archive, postgres
from deploy.settings import Settings

FORMAT = 1
MANIFEST = "manifest.json"
DUMP = "database.dump"
DATA = "data.tar.gz"
SECRETS = "secrets.tar"
STAMP = "%Y%m%dT%H%M%SZ"
NAME = re.compile(r"\d{8}T\d{6}Z")
PARTIAL_SUFFIX = ".partial"
#: A partial backup this old belongs to no backup still running: one was killed half way.
STALE_PARTIAL_SECONDS = 86400.0


class BackupError(Exception):
    """A backup could not be taken, or one is damaged or missing."""


@dataclass(frozen=True)
class Backup:
    path: Path

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def created(self) -> datetime:
        return datetime.strptime(self.name, STAMP).replace(tzinfo=UTC)

    def size(self) -> int:
        return sum(entry.stat().st_size for entry in self.path.iterdir() if entry.is_file())


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def backups_complete(dest: Path) -> list[Backup]:
    """The complete backups in ``dest``, newest first: named by their time, with a manifest."""
    if not dest.is_dir():
        return []
    found = [Backup(path) for path in dest.iterdir()
             if NAME.fullmatch(path.name) and path.is_dir() and (path / MANIFEST).is_file()]
    return sorted(found, key=lambda backup: backup.name, reverse=True)


def backup_find(name_or_path: str, dest: Path) -> Backup:
    path = dest / name_or_path if NAME.fullmatch(name_or_path) else Path(name_or_path)
    if not (path / MANIFEST).is_file():
        raise BackupError(f"{name_or_path}: no backup there (a backup's name in {dest}, or a path to one)")
    return Backup(path)


def manifest_read(backup: Backup) -> dict[str, object]:
    try:
        manifest = json.loads((backup.path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BackupError(f"{backup.name}: unreadable manifest ({error})") from error
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT \
            or not isinstance(manifest.get("files"), dict):
        raise BackupError(f"{backup.name}: not a manifest of format {FORMAT}")
    return manifest


def backup_problems(backup: Backup) -> list[str]:
    """What is wrong with ``backup``: files missing, of another size or another sha256 than its manifest says."""
    try:
        files = manifest_read(backup)["files"]
    except BackupError as error:
        return [str(error)]
    assert isinstance(files, dict)
    problems = [f"{name}: not in the manifest" for name in (DUMP, DATA) if name not in files]
    for name, expected in sorted(files.items()):
        path = backup.path / name
        if "/" in name or not path.is_file():
            problems.append(f"{name}: missing")
        elif path.stat().st_size != expected.get("size"):
            problems.append(f"{name}: {path.stat().st_size} bytes, the manifest says {expected.get('size')}")
        elif sha256_of(path) != expected.get("sha256"):
            problems.append(f"{name}: its sha256 is not the manifest's")
    return problems


def _partial_make(dest: Path) -> tuple[str, Path]:
    """A new partial backup folder (0700: it holds secrets), named by a second no other backup has."""
    dest.mkdir(mode=0o700, parents=True, exist_ok=True)
    while True:
        name = datetime.now(UTC).strftime(STAMP)
        partial = dest / (name + PARTIAL_SUFFIX)
        if not (dest / name).exists():
            with contextlib.suppress(FileExistsError):
                partial.mkdir(mode=0o700)
                if not (dest / name).exists():  # another backup of this second completed meanwhile
                    return name, partial
                partial.rmdir()
        time.sleep(0.2)  # a backup of this second exists: the next second's name


def _synced(path: Path) -> None:
    """``path`` on the disk, not only in the page cache: a crash after the rename finds it whole."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _file_entry(path: Path) -> dict[str, object]:
    return {"size": path.stat().st_size, "sha256": sha256_of(path)}


def _fill(settings: Settings, folder: Path) -> dict[str, object]:
    database = postgres.database_from_url(settings.database_url)
    postgres.database_dump(database, folder / DUMP)
    archive.folder_archive(settings.data_dir, folder / DATA, excluded=archive.data_excluded)
    names = [DUMP, DATA]
    if archive.folder_has_entries(settings.secrets_dir):
        archive.folder_archive(settings.secrets_dir, folder / SECRETS, compress=False)
        names.append(SECRETS)
    for name in names:
        os.chmod(folder / name, 0o600)
    return {
        "format": FORMAT,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "pg_dump_version": postgres.pg_dump_version(),
        "database": {"name": database.name, "host": database.host},
        "files": {name: _file_entry(folder / name) for name in names},
    }


def backup_take(settings: Settings) -> Backup:
    """One backup of the database, the data folder and the secrets, in ``settings.dest``.

    Written under a ``.partial`` name and renamed once complete: a backup cut short (a failure, a
    stop, a crash) never looks complete, and what a failure or a stop leaves is removed."""
    name, partial = _partial_make(settings.dest)
    try:
        manifest = _fill(settings, partial)
        manifest_path = partial / MANIFEST
        manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.chmod(manifest_path, 0o600)
        for path in partial.iterdir():
            _synced(path)
        final = settings.dest / name
        os.rename(partial, final)
        _synced(settings.dest)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return Backup(final)


def backups_prune(dest: Path, *, keep: int, now: float | None = None) -> list[str]:
    """Remove all but the ``keep`` newest complete backups (never the newest), and partial ones
    older than a day: the names removed."""
    keep = max(keep, 1)
    removed = [backup.path for backup in backups_complete(dest)[keep:]]
    now = time.time() if now is None else now
    if dest.is_dir():
        removed += [path for path in dest.iterdir()
                    if path.name.endswith(PARTIAL_SUFFIX) and NAME.fullmatch(path.name[:-len(PARTIAL_SUFFIX)])
                    and path.is_dir() and now - path.stat().st_mtime > STALE_PARTIAL_SECONDS]
    for path in removed:
        shutil.rmtree(path)
    return sorted(path.name for path in removed)
