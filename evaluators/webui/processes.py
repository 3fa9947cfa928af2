"""The Chromium processes a page renderer launched: finding its browser and renderers, killing them.

A process is known by its pid *and* its start time (:class:`ProcessRecord`). A pid alone is not an
identity: once a browser exits, the kernel hands its pid to whatever process starts next (pid_max is
often 32768, and a machine running browsers and workers goes round it in minutes), and a kill meant
for a dead browser would land on a newer one, another renderer's or another test's. Every signal is
sent only after the start time read for the pid matches the record, through a pidfd that pins the
process between that check and the signal.
"""
from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass

import psutil

#: Environment variable that marks the Chromium processes a renderer launched (to find them).
TOKEN_VARIABLE = "MAGEBENCH_PAGE_RENDERER"


def start_ticks(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (None when it is gone or unreadable).

    The kernel's own figure, not psutil's ``create_time``: that one adds the boot time, which the
    kernel reports in whole seconds that move when the clock is adjusted, and a record compared
    against a second reading must not see its process change."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # field 22 of stat(5); the split starts at field 3, after the command name
    return int(fields[19]) if len(fields) > 19 else None


@dataclass(frozen=True)
class ProcessRecord:
    """One process: its pid and when it started, which together no other process can share."""

    pid: int
    started: int

    @classmethod
    def of(cls, pid: int) -> ProcessRecord | None:
        """The process ``pid`` is now (None when there is none)."""
        started = start_ticks(pid)
        return None if started is None else cls(pid, started)

    def is_running(self) -> bool:
        """Whether the pid still belongs to this process (False once it exited, even if the pid
        was given to another process since)."""
        return start_ticks(self.pid) == self.started

    def kill(self) -> bool:
        """SIGKILL this process, never another that took its pid; whether a signal was sent."""
        try:
            handle = os.pidfd_open(self.pid)
        except ProcessLookupError:
            return False
        except OSError:  # no pidfds (an old kernel): check and signal as close together as can be
            if not self.is_running():
                return False
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)
                return True
            return False
        try:
            # Checked after the pidfd was opened: from here on the pid cannot pass to another
            # process, so if it is this one now, the signal goes to this one.
            if not self.is_running():
                return False
            signal.pidfd_send_signal(handle, signal.SIGKILL)
            return True
        except (ProcessLookupError, PermissionError):
            return False
        finally:
            os.close(handle)


def browser_process(token: str) -> ProcessRecord | None:
    """The Chromium browser process whose environment carries ``token``."""
    for process in psutil.process_iter(["cmdline"]):
        command = " ".join(process.info["cmdline"] or ())
        # its zygotes, renderers and crash handler inherit the environment too
        if "--type=" in command or "crashpad" in command or "chrom" not in command:
            continue
        try:
            if process.environ().get(TOKEN_VARIABLE) == token:
                record = ProcessRecord.of(process.pid)
                # the environment read belongs to the record only if the pid did not change hands
                if record is not None and process.is_running():
                    return record
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


def renderer_processes(browser: ProcessRecord) -> list[ProcessRecord]:
    """The renderer processes descending from ``browser`` (none once it exited: the processes
    under its pid then are another's)."""
    if not browser.is_running():
        return []
    try:
        descendants = psutil.Process(browser.pid).children(recursive=True)
    except psutil.Error:
        return []
    found = []
    for process in descendants:
        record = ProcessRecord.of(process.pid)
        # a child starts after its parent; one that started before took a dead child's pid
        if record is not None and record.started >= browser.started and is_renderer(process):
            found.append(record)
    # listed while the browser was still the one recorded, else they may be the children of a newer one
    return found if browser.is_running() else []


def kill(records: Sequence[ProcessRecord]) -> None:
    """SIGKILL each of ``records``; those gone (whoever has their pid now) or not ours are skipped."""
    for record in records:
        record.kill()
