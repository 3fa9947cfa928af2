"""The entry point: an upload in either format, told apart by its first bytes."""
from __future__ import annotations

from collections.abc import Collection

from submissions.uploads.archive import parse_zip
from submissions.uploads.jsonl import parse_jsonl
from submissions.uploads.problems import Problem, UploadError
from submissions.uploads.runs import DEFAULT_LIMITS, UploadedRun, UploadLimits

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")


def parse_upload(data: bytes, *, env: str, flow: str, scenarios: Collection[str], max_repeats: int | None = None,
                 limits: UploadLimits = DEFAULT_LIMITS) -> list[UploadedRun]:
    """Detect the format (zip by magic bytes PK\\x03\\x04 / empty-zip PK\\x05\\x06, else JSONL) and parse it."""
    parse = parse_zip if data[:4] in _ZIP_MAGIC else parse_jsonl
    try:
        return parse(data, env=env, flow=flow, scenarios=scenarios, max_repeats=max_repeats, limits=limits)
    except MemoryError:
        # The caps keep a file's parsed size near its byte size; a process short of memory even so
        # refuses this file and goes on serving the others.
        raise UploadError([Problem("upload", "the file needs more memory to check than the site has free now; "
                                             "upload it in parts")]) from None
