"""Tar archives of a folder: written in a fixed order with modes and times, read back safely."""
from __future__ import annotations

import gzip
import os
import shutil
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

#: Left out of the data volume's backup, at its top: static files (collectstatic writes them again at
#: each start), the development broker's message files (a queue, like Redis's) and Celery beat's
#: schedule (rewritten while beat runs; beat makes it again).
DATA_EXCLUDED_TOP = ("staticfiles", "broker")
DATA_EXCLUDED_TOP_PREFIXES = ("celerybeat-schedule",)
#: Files the site writes beside their final name and renames, or holds open as locks: half-written
#: or empty, and gone or rewritten once their writer is done.
DATA_EXCLUDED_SUFFIXES = (".tmp", ".partial", ".part", ".lock")

#: What a restore leaves in the data folder before extracting.
DATA_KEPT_ON_RESTORE = ("staticfiles",)


class UnsafeArchive(Exception):
    """A member would land outside the folder it is extracted into, or is not a file, folder or link."""


def data_excluded(relative: PurePosixPath) -> bool:
    top = relative.parts[0]
    if top in DATA_EXCLUDED_TOP or top.startswith(DATA_EXCLUDED_TOP_PREFIXES):
        return True
    return relative.name.endswith(DATA_EXCLUDED_SUFFIXES)


def _members_below(folder: Path, relative: PurePosixPath,
                   excluded: Callable[[PurePosixPath], bool]) -> Iterator[tuple[Path, str]]:
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except FileNotFoundError:
        return  # removed while the backup ran
    for entry in entries:
        child = relative / entry.name
        if excluded(child):
            continue
        yield Path(entry.path), child.as_posix()
        if entry.is_dir(follow_symlinks=False):
            yield from _members_below(Path(entry.path), child, excluded)


def _add(archive: tarfile.TarFile, path: Path, name: str) -> None:
    try:
        info = archive.gettarinfo(str(path), arcname=name)
    except FileNotFoundError:
        return  # removed while the backup ran
    if not (info.isfile() or info.isdir() or info.issym()):
        return  # sockets and pipes hold nothing to restore
    if not info.isfile():
        archive.addfile(info)
        return
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return
    with handle:
        archive.addfile(info, handle)


def folder_archive(root: Path, target: Path, *, excluded: Callable[[PurePosixPath], bool] = lambda _: False,
                   compress: bool = True) -> int:
    """Write ``root``'s content (not ``root`` itself) to the tar ``target``: how many members.

    Members go in by name, folders before their content, with their modes, times and owners; the
    gzip header carries no name nor time, so the same folder gives the same bytes."""
    count = 0
    with target.open("wb") as raw:
        stream = gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) if compress else raw
        with stream, tarfile.open(fileobj=stream, mode="w", format=tarfile.PAX_FORMAT) as archive:
            for path, name in _members_below(root, PurePosixPath(), excluded):
                _add(archive, path, name)
                count += 1
    return count


def _inside(folder: Path, name: str) -> bool:
    if PurePosixPath(name).is_absolute() or ".." in PurePosixPath(name).parts:
        return False
    return os.path.realpath(folder / name).startswith(os.path.realpath(folder) + os.sep)


def _check(member: tarfile.TarInfo, folder: Path) -> None:
    """UnsafeArchive unless ``member`` lands inside ``folder`` and is a file, a folder or a link inside it.

    tarfile's "data" filter checks the same where the Python has it; it is not the extraction's
    filter because it changes modes and drops owners, and a restore brings the files back as they were."""
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        raise UnsafeArchive(f"{member.name}: not a file, folder or link")
    if not _inside(folder, member.name):
        raise UnsafeArchive(f"{member.name}: outside the folder it is restored into")
    if member.issym() and not _inside(folder, str(PurePosixPath(member.name).parent / member.linkname)):
        raise UnsafeArchive(f"{member.name}: a link to {member.linkname}, outside the folder")
    if member.islnk() and not _inside(folder, member.linkname):
        raise UnsafeArchive(f"{member.name}: a link to {member.linkname}, outside the folder")
    data_filter = getattr(tarfile, "data_filter", None)
    if data_filter is not None:
        try:
            data_filter(member, str(folder))
        except tarfile.FilterError as error:
            raise UnsafeArchive(str(error)) from error


def _checked_members(archive: tarfile.TarFile, folder: Path) -> list[tarfile.TarInfo]:
    members = archive.getmembers()
    for member in members:
        _check(member, folder)
        member.mode &= 0o777  # no setuid, setgid or sticky bit
    return members


def archive_check(source: Path, folder: Path) -> int:
    """Every member of the tar ``source`` checked as if extracted into ``folder``: how many there are."""
    with tarfile.open(source, mode="r:*") as archive:
        return len(_checked_members(archive, folder))


def archive_extract(source: Path, folder: Path) -> int:
    """Extract the tar ``source`` into ``folder`` with modes, times and (as root) owners, refusing
    any unsafe member before writing anything."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(source, mode="r:*") as archive:
        members = _checked_members(archive, folder)
        if hasattr(tarfile, "data_filter"):
            # Checked above, by hand and by the "data" filter.
            archive.extractall(folder, members=members, numeric_owner=True, filter="fully_trusted")
        else:
            archive.extractall(folder, members=members, numeric_owner=True)
    return len(members)


def folder_empty(folder: Path, *, kept: tuple[str, ...] = ()) -> int:
    """Remove everything in ``folder`` (it may be a mount point, so it stays) but ``kept``: how many entries."""
    removed = 0
    for entry in os.scandir(folder):
        if entry.name in kept:
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)
        removed += 1
    return removed


def folder_has_entries(folder: Path) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(True for _ in entries)
    except FileNotFoundError:
        return False
