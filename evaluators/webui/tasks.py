"""The task description shown to the model: tasks.md split into interleaved text and images.

As in the official environment (its ``md_to_json``), the Markdown is split at image links and every
non-empty piece is kept, blank ones too (the newline after the last screenshot is a text part of its
own). A piece that ends in ``.png`` is a link target: that image, read from the page folder and
resized so its longest side is the submission's resolution. Any other piece is sent as text, link
targets that are not PNG files included, as officially. The official ``tasks_content.json`` is not
used (the official environment ignores it too).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from PIL import Image

from evaluators.images import resize_longest_side

#: The official pattern: the alt text matches greedily within a line, the target lazily.
IMAGE_LINK = re.compile(r"!\[.*\]\((.*?)\)")


def task_parts(page_dir: Path, resolution: int) -> list[str | Image.Image]:
    """Text and images of tasks.md, in order."""
    source = (page_dir / "tasks.md").read_text(encoding="utf-8")
    parts: list[str | Image.Image] = []
    for piece in IMAGE_LINK.split(source):
        if not piece:
            continue
        image = _page_image(page_dir, piece, resolution) if piece.endswith(".png") else None
        parts.append(image if image is not None else piece)
    return parts


def has_description_image(page_dir: Path) -> bool:
    """Whether the description's second part is an image (read without decoding it): the one the
    official "MergeNoDes" Online flow shows as the target page, and fails without."""
    try:
        source = (page_dir / "tasks.md").read_text(encoding="utf-8")
    except OSError:
        return False
    pieces = [piece for piece in IMAGE_LINK.split(source) if piece]
    return len(pieces) > 1 and pieces[1].endswith(".png") and _page_file(page_dir, pieces[1]) is not None


def _page_file(page_dir: Path, target: str) -> Path | None:
    """The file a link names, inside the page folder only. The official code strips every leading and
    trailing '.' and '/' of a target that starts with './'."""
    relative = target.strip("./") if target.startswith("./") else target
    root = page_dir.resolve()
    path = (page_dir / relative).resolve()
    return path if root in path.parents and path.is_file() else None


def _page_image(page_dir: Path, target: str, resolution: int) -> Image.Image | None:
    """The PNG a link names (:func:`_page_file`). A file the official code cannot open stops its run,
    where here the target stays in the text (a deviation on the metric card)."""
    path = _page_file(page_dir, target)
    if path is None:
        return None
    stat = path.stat()
    return _resized(str(path), stat.st_mtime_ns, stat.st_size, resolution)


@lru_cache(maxsize=32)
def _resized(path: str, mtime_ns: int, size: int, resolution: int) -> Image.Image:
    """One decoding and resize per screenshot file, version and resolution: every attempt of a page
    sends the same images (the file's time and size key a changed file anew). The image is shared
    and never changed in place, so its PNG encoding is shared too (``png_bytes``)."""
    with Image.open(path) as image:
        return resize_longest_side(image.convert("RGB"), resolution)
