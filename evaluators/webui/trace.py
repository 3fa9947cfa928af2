"""The Playwright trace of a WebUI attempt, as a team may download it.

The trace records the page as Chromium loaded it: file:// URLs into the temporary folder the page
was rendered in, and the platform's own Python call stacks (source paths of the server). The copy
kept for download drops the stacks and names every folder relative, like the rest of the replay.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

from evaluators.paths import shown

#: Entries that describe the platform, not the page: the Python stack of every browser call.
DROPPED = frozenset({"trace.stacks"})


def write_public_trace(source: Path, target: Path) -> Path:
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as public:
        for entry in original.infolist():
            if entry.filename in DROPPED or entry.filename.endswith(".stacks"):
                continue
            data = original.read(entry)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                public.writestr(entry.filename, data)  # screenshots and other binary resources
                continue
            public.writestr(entry.filename, shown(text).encode("utf-8"))
    return target
