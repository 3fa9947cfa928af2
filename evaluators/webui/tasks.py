"""The task description shown to the model: tasks.md split into interleaved text and images.

As in the official environment, the Markdown is split at image links; a link to a ``.png`` inside
the page folder becomes that image, resized so its longest side is the submission's resolution.
The official ``tasks_content.json`` is not used (the official environment ignores it too).
"""
from __future__ import annotations

import re
from pathlib import Path

from PIL import Image

from evaluators.images import resize_longest_side

IMAGE_LINK = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
MISSING_IMAGE = "image not available."


def task_parts(page_dir: Path, resolution: int) -> list[str | Image.Image]:
    """Text and images of tasks.md, in order; images the folder does not hold become a note."""
    source = (page_dir / "tasks.md").read_text(encoding="utf-8")
    parts: list[str | Image.Image] = []
    position = 0
    root = page_dir.resolve()
    for match in IMAGE_LINK.finditer(source):
        text = source[position:match.start()]
        if text.strip():
            parts.append(text)
        position = match.end()
        target = (page_dir / match.group(1)).resolve()
        if target.suffix.lower() == ".png" and root in target.parents and target.is_file():
            with Image.open(target) as image:
                parts.append(resize_longest_side(image.convert("RGB"), resolution))
        else:
            parts.append(MISSING_IMAGE)
    tail = source[position:]
    if tail.strip():
        parts.append(tail)
    return parts
