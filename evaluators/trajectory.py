"""Trajectory files: every step's frame, the model exchanges and the per-step bookkeeping.

A trajectory is a folder with PNG frames and one ``trajectory.json`` index. Model requests are
stored with their images replaced by references to those frames, so a replay shows exactly what
the model saw without storing any image twice.
"""
from __future__ import annotations

import json
import os
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from evaluators.images import png_bytes
from evaluators.paths import shown

INDEX_NAME = "trajectory.json"


class TrajectoryRecorder:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        self.frames: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []
        self.meta: dict[str, Any] = {}
        # By identity, with a weak reference to tell a live image from a new one that took the id
        # of a collected one (ids are reused once an object is gone).
        self._image_names: dict[int, tuple[weakref.ref[Image.Image], str]] = {}

    def frame(self, image: Image.Image) -> str:
        """Store a frame once (by identity) and return its file name."""
        known = self._image_names.get(id(image))
        if known is not None and known[0]() is image:
            return known[1]
        name = f"frame_{len(self.frames):04d}.png"
        # The bytes the model was sent, when it was sent this image: one encoding for both.
        (self.directory / name).write_bytes(png_bytes(image))
        self.frames.append(name)
        self._image_names[id(image)] = (weakref.ref(image), name)
        return name

    def record_call(self, call: dict[str, Any]) -> int:
        call = dict(call)
        call["index"] = len(self.calls)
        self.calls.append(call)
        return call["index"]

    def record_step(self, step: dict[str, Any]) -> None:
        step = dict(step)
        step["index"] = len(self.steps) + 1
        self.steps.append(step)

    def finish(self, summary: dict[str, Any]) -> Path:
        document = {**self.meta, **summary, "frames": self.frames, "calls": self.calls, "steps": self.steps}
        path = self.directory / INDEX_NAME
        tmp = path.with_suffix(".tmp")
        # Replays are public: files the episode quotes are named relative to the data directory.
        tmp.write_text(shown(json.dumps(document, ensure_ascii=False, indent=1, default=str)))
        os.replace(tmp, path)  # readers never see a half-written index
        return path


def load_trajectory(directory: Path) -> dict[str, Any]:
    # Indexes written before paths were made relative are rewritten as they are read.
    return json.loads(shown((directory / INDEX_NAME).read_text()))


#: Steps (and model calls) a replay page embeds; its script fetches the rest, a page at a time, from
#: the trajectory API. A long Football attack has hundreds of engine steps of 22 players each.
REPLAY_PAGE = 50


def document_page(document: Mapping[str, Any], keys: Sequence[str], *, offset: int, limit: int) -> dict[str, Any]:
    """``document`` with each list under ``keys`` cut to ``[offset, offset + limit)``; ``page`` says
    which part it is and how long each whole list is, so that a reader knows what is left to fetch."""
    page = dict(document)
    totals = {}
    for key in keys:
        items = document.get(key)
        if isinstance(items, list):
            page[key] = items[offset:offset + limit]
            totals[key] = len(items)
    page["page"] = {"offset": offset, "limit": limit, "totals": totals}
    return page
