"""Archives read back safely: nothing lands outside the folder they are extracted into."""
from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from deploy.archive import UnsafeArchive, archive_extract


def _archive(path: Path, *members: tarfile.TarInfo) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for member in members:
            archive.addfile(member, io.BytesIO(b"x" * member.size))
    path.write_bytes(buffer.getvalue())
    return path


def _file(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = 1
    return info


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize("member", [
    _file("../evil"), _file("/tmp/evil"), _file("media/../../evil"),
    _link("media/passwd", "/etc/passwd"), _link("media/up", "../../evil"),
    _link("media/hard", "../evil", tarfile.LNKTYPE),
], ids=lambda member: f"{member.name} -> {member.linkname}" if member.linkname else member.name)
def test_a_member_reaching_outside_the_folder_is_refused_before_any_is_written(tmp_path: Path,
                                                                              member: tarfile.TarInfo) -> None:
    source = _archive(tmp_path / "bad.tar", _file("media/first.txt"), member)

    with pytest.raises(UnsafeArchive):
        archive_extract(source, tmp_path / "data")

    assert not (tmp_path / "data" / "media" / "first.txt").exists() and not (tmp_path / "evil").exists()


def test_links_inside_the_folder_are_extracted(tmp_path: Path) -> None:
    source = _archive(tmp_path / "good.tar", _file("media/a.txt"), _link("media/b.txt", "a.txt"),
                      _link("c.txt", "media/a.txt", tarfile.LNKTYPE))

    assert archive_extract(source, tmp_path / "data") == 3

    assert (tmp_path / "data" / "media" / "b.txt").read_bytes() == b"x"
    assert (tmp_path / "data" / "c.txt").read_bytes() == b"x"
