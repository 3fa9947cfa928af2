"""The zip format: the archive's safety checks before anything is decompressed, then its runs."""
from __future__ import annotations

import io
import math
import re
import stat
import zipfile
from collections.abc import Collection

from submissions.uploads.context import UploadContext, check_upload_size
from submissions.uploads.json_values import shorten
from submissions.uploads.problems import Problem, UploadError
from submissions.uploads.run_folders import ZipReader
from submissions.uploads.runs import DEFAULT_LIMITS, UploadedRun, UploadLimits

#: Below this uncompressed size a high compression ratio is harmless (and common for logs).
RATIO_CHECK_MIN_BYTES = 1024 * 1024

_DRIVE_LETTER = re.compile(r"^[A-Za-z]:")


def parse_zip(data: bytes, *, env: str, flow: str, scenarios: Collection[str], max_repeats: int | None = None,
              limits: UploadLimits = DEFAULT_LIMITS) -> list[UploadedRun]:
    """Parse a zip of the official output directory, reading members into memory within ``limits``."""
    context = UploadContext(env=env, flow=flow, scenarios=scenarios, max_repeats=max_repeats, limits=limits)
    check_upload_size(data, context)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError):
        raise UploadError([Problem("upload", "not a zip archive")]) from None
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.max_members:
            raise UploadError([Problem("upload", f"the archive has {len(infos)} members, the limit is "
                                                 f"{limits.max_members}")])
        names = _check_members(infos, context)
        # Nothing is decompressed from an archive that failed a safety check.
        context.problems.raise_if_any()
        runs = ZipReader(archive, names, context).runs()
    context.problems.raise_if_any()
    return runs


def _check_members(infos: list[zipfile.ZipInfo], context: UploadContext) -> dict[str, zipfile.ZipInfo]:
    """Safety checks on every member; returns the usable file members by their (decoded) name."""
    limits = context.limits
    names: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in infos:
        name = _member_name(info)
        total += info.file_size
        unsafe = _unsafe_name(name)
        if unsafe:
            context.problems.add(shorten(name), f"{unsafe}: the archive is refused")
            continue
        if info.flag_bits & 0x1:
            context.problems.add(name, "encrypted members are not accepted")
        if stat.S_ISLNK(info.external_attr >> 16):
            context.problems.add(name, "symbolic links are not accepted")
        if info.file_size > limits.max_member_bytes:
            context.problems.add(name, f"member is {info.file_size} bytes uncompressed, the limit is "
                                       f"{limits.max_member_bytes}")
        if info.file_size > RATIO_CHECK_MIN_BYTES:
            ratio = info.file_size / info.compress_size if info.compress_size else math.inf
            if ratio > limits.max_ratio:
                context.problems.add(name, f"compression ratio {ratio:.0f} exceeds {limits.max_ratio:g} "
                                           f"(possible zip bomb)")
        if name in names:
            context.problems.add(name, "member appears twice in the archive")
        if not info.is_dir():
            names[name] = info
    if total > limits.max_total_bytes:
        context.problems.add("upload", f"the members total {total} bytes uncompressed, the limit is "
                                       f"{limits.max_total_bytes}")
    return names


def _member_name(info: zipfile.ZipInfo) -> str:
    if info.flag_bits & 0x800:
        return info.filename
    # Many zip tools store UTF-8 names without setting the flag; zipfile then decodes them as cp437.
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except UnicodeError:
        return info.filename


def _unsafe_name(name: str) -> str:
    """Why extracting ``name`` could write outside the folder (zip slip), or ""."""
    if "\\" in name:
        return "member name contains a backslash"
    if name.startswith("/"):
        return "member name is absolute"
    if _DRIVE_LETTER.match(name):
        return "member name starts with a drive letter"
    if ".." in name.split("/"):
        return "member name contains '..'"
    return ""
