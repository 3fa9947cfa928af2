"""The Chromium processes a page renderer launched: finding its browser and renderers, killing them."""
from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Sequence

import psutil

#: Environment variable that marks the Chromium processes a renderer launched (to find them).
TOKEN_VARIABLE = "MAGEBENCH_PAGE_RENDERER"


def browser_pid(token: str) -> int | None:
    """The Chromium browser process whose environment carries ``token``."""
    for process in psutil.process_iter(["cmdline"]):
        command = " ".join(process.info["cmdline"] or ())
        # its zygotes, renderers and crash handler inherit the environment too
        if "--type=" in command or "crashpad" in command or "chrom" not in command:
            continue
        try:
            if process.environ().get(TOKEN_VARIABLE) == token:
                return process.pid
        except psutil.Error:
            continue
    return None


def parent_pid(pid: int) -> int | None:
    """The parent of process ``pid`` (None when it is gone or unreadable)."""
    try:
        return psutil.Process(pid).ppid()
    except psutil.Error:
        return None


def is_renderer(process: psutil.Process) -> bool:
    """Whether ``process`` is a Chromium renderer (False when it is gone or unreadable)."""
    try:
        return any("--type=renderer" in argument for argument in process.cmdline())
    except psutil.Error:
        return False


def renderer_pids(browser: int) -> list[int]:
    """The renderer processes descending from the browser process ``browser``."""
    try:
        descendants = psutil.Process(browser).children(recursive=True)
    except psutil.Error:
        return []
    return [process.pid for process in descendants if is_renderer(process)]


def kill(pids: Sequence[int]) -> None:
    """SIGKILL each of ``pids``; those already gone or not ours are skipped."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
