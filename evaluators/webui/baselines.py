"""WebUI baselines: idle (no code), oracle (the target page's own files) and a degraded oracle.

The oracle identifies the page the way a reader would, from the task description's text, and
answers with that page's index.html, style.css and script.js. The degraded oracle answers with the
same page stripped of every style (no stylesheet, no <style> blocks, no style attributes): the
structure and text match, the looks do not, which lands it between idle and the oracle.
"""
from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluators.base import BaselineOptions
from evaluators.webui.tasks import IMAGE_LINK

#: The three files every WebUI prompt names, in the platform's wording and the official alike.
WEBUI_FILES = ("index.html", "style.css", "script.js")
ONLINE_WEBUI_MARKER = "# Regenerate"
_STYLE_BLOCK = re.compile(r"<style\b[^>]*>.*?</style>", re.S | re.I)
_STYLE_ATTR = re.compile(r"\sstyle\s*=\s*(\"[^\"]*\"|'[^']*')", re.I)
_STYLESHEET = re.compile(r"<link\b[^>]*rel\s*=\s*[\"']?stylesheet[^>]*>", re.I)


def is_webui(text: str) -> bool:
    return all(name in text for name in WEBUI_FILES)


def _normalise(text: str) -> str:
    return " ".join(text.split())


def strip_styles(html: str) -> str:
    return _STYLESHEET.sub("", _STYLE_ATTR.sub("", _STYLE_BLOCK.sub("", html)))


class PageIndex:
    """Page folders recognised by the first paragraph of their tasks.md."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.pages: list[tuple[str, Path]] = []
        for root in roots:
            for tasks in sorted(Path(root).glob("*/tasks.md")):
                chunks = [_normalise(c) for c in IMAGE_LINK.split(tasks.read_text(encoding="utf-8"))]
                key = next((c for c in chunks if len(c) > 20), "")
                if key:
                    self.pages.append((key, tasks.parent))

    def find(self, prompt: str) -> Path | None:
        text = _normalise(prompt)
        matches = [(len(key), folder) for key, folder in self.pages if key in text]
        return max(matches)[1] if matches else None


def page_files(folder: Path, *, degrade: bool) -> dict[str, str]:
    files = {kind: (folder / name).read_text(encoding="utf-8")
             for kind, name in (("html", "index.html"), ("css", "style.css"), ("javascript", "script.js"))
             if (folder / name).is_file()}
    if degrade:
        files.pop("css", None)
        if "html" in files:
            files["html"] = strip_styles(files["html"])
    return files


def format_code_reply(files: Mapping[str, str], *, online: bool, analysis: str) -> str:
    blocks = "\n\n".join(f"```{kind}\n{code}\n```" for kind, code in files.items())
    if online:
        return f"# Analyze\n{analysis}\n\n# Regenerate\n{blocks}"
    return f"{analysis}\n\n{blocks}"


class WebUIPolicy:
    def __init__(self, mode: str, pages: PageIndex | None) -> None:
        if mode not in {"idle", "oracle", "degraded"}:
            raise ValueError(f"no WebUI policy {mode!r}")
        self.mode = mode
        self.pages = pages

    def reply(self, prompt: str) -> str:
        online = ONLINE_WEBUI_MARKER in prompt
        if self.mode == "idle":
            return "I will not write any code for this page."
        folder = self.pages.find(prompt) if self.pages is not None else None
        if folder is None:
            return "I do not recognise this page, so I have no code for it."
        files = page_files(folder, degrade=self.mode == "degraded")
        note = "The page as written by its authors" + (", without its styles." if self.mode == "degraded" else ".")
        return format_code_reply(files, online=online, analysis=note)


@functools.lru_cache(maxsize=16)
def _page_index(roots: tuple[Path, ...]) -> PageIndex:
    # Read once per set of roots: the pages of a running server do not change under it.
    return PageIndex(list(roots))


def baseline_reply(agent: str, messages: Sequence[Mapping[str, Any]], rng: random.Random,
                   options: BaselineOptions) -> str | None:
    """The reply of baseline ``agent`` to a WebUI request; None for any other request."""
    from evaluators.baselines.agents import prompt_text

    text = prompt_text(messages)
    if not is_webui(text):
        return None
    # The random agent has no random page to write: it writes none, like idle.
    mode = agent if agent in {"oracle", "degraded"} else "idle"
    index = _page_index(options.pages) if options.pages and mode != "idle" else None
    return WebUIPolicy(mode, index).reply(text)
