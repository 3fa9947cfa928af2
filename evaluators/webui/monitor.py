"""Caps on the memory and CPU time of a page: its renderer processes are sampled and killed past them."""
from __future__ import annotations

import contextlib
import logging
import math
import threading

import psutil

from evaluators.webui.processes import ProcessRecord, is_renderer, parent_pid

log = logging.getLogger(__name__)


class ResourceMonitor:
    """Caps what a page may take: while a page is open, samples the browser's renderer processes and
    kills one whose resident memory or CPU time passes the page's limit.

    Processes are known by pid and start time (``processes.ProcessRecord``): once the browser exits,
    its pid, and those of its renderers, may go to any later process (another renderer's browser),
    which must be neither adopted, limited nor killed. Nothing is watched once the browser is gone.

    Every page gets renderer processes of its own (a fresh browser context), so a renderer's totals
    are its page's; workers run in it too. What a page does between two samples is caught by two
    hard limits some way above the caps: V8's heap limit (a launch flag) and RLIMIT_DATA and
    RLIMIT_CPU, set on every renderer when it is first seen (allocations past the first fail, the
    kernel stops a process past the second).
    """

    INTERVAL = 0.05
    #: How far above the caps the hard limits sit, so that sampling is what normally stops a page.
    MEMORY_MARGIN_MB = 512
    CPU_MARGIN_SECONDS = 5.0
    #: What an idle renderer has mapped writable (about 600 MB here, mostly untouched): a renderer
    #: seen right after its fork has not mapped it yet, and must not be limited as if it never would.
    DATA_BASELINE_MB = 1024

    def __init__(self, memory_mb: int, cpu_seconds: float) -> None:
        self.memory_mb = memory_mb
        self.cpu_seconds = cpu_seconds
        self._condition = threading.Condition()
        self._browser: ProcessRecord | None = None
        self._pages = 0
        self._closed = False
        self._overrun: str | None = None
        #: Every pid looked at once, and the processes descending from the browser, by pid.
        self._seen: set[int] = set()
        self._family: dict[int, ProcessRecord] = {}
        self._family_of: ProcessRecord | None = None
        #: The renderers among them, sampled each round.
        self._processes: dict[int, tuple[ProcessRecord, psutil.Process]] = {}
        self._thread = threading.Thread(target=self._run, name="page-resources", daemon=True)
        self._thread.start()

    def begin(self, browser: ProcessRecord | None) -> None:
        """A page opens: watch the browser's renderers until :meth:`end`."""
        with self._condition:
            if self._pages == 0:
                self._overrun = None
            self._pages += 1
            self._browser = browser
            self._condition.notify_all()

    @property
    def watching(self) -> ProcessRecord | None:
        """The browser whose renderers are watched (None when none is, or it was found gone)."""
        with self._condition:
            return self._browser if self._pages else None

    def forget(self, browser: ProcessRecord | None) -> None:
        """``browser`` was closed or discarded: stop watching it (and anything that takes its pid)."""
        with self._condition:
            if browser is not None and self._browser == browser:
                self._browser = None

    def end(self) -> str | None:
        """A page closed: what it went past while open, if anything."""
        with self._condition:
            self._pages = max(0, self._pages - 1)
            return self._overrun

    def close(self) -> None:
        """Stop the monitor's thread."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    def _run(self) -> None:
        while True:
            with self._condition:
                while not self._closed and (self._pages == 0 or self._browser is None):
                    self._condition.wait()
                if self._closed:
                    return
                browser = self._browser
            assert browser is not None  # the wait above ends only with a browser to watch or when closed
            try:
                self._rescan(browser)
                self._sample()
            except Exception:  # the monitor must outlive whatever it watches
                log.exception("page resource monitor failed a round")
            with self._condition:
                self._condition.wait(self.INTERVAL)

    def _rescan(self, browser: ProcessRecord) -> None:
        """Find new renderers: only processes not seen before are looked up (reading every
        process's stat 20 times a second would cost more than the sampling itself)."""
        if self._family_of != browser:
            self._seen, self._family, self._family_of = set(), {browser.pid: browser}, browser
            self._processes.clear()
        alive = set(psutil.pids())
        self._adopt({pid: parent_pid(pid) for pid in alive - self._seen})
        self._seen = alive
        # Checked after the parents were read: had the browser gone before, a process taking its pid
        # could have passed for its child. Once it is gone, its pid and its renderers' are free.
        if not browser.is_running():
            self._family, self._processes = {}, {}
            self.forget(browser)
            return
        self._family = {pid: record for pid, record in self._family.items()
                        if record == browser or (pid in alive and record.is_running())}
        for pid, (record, _) in list(self._processes.items()):
            if self._family.get(pid) != record:
                del self._processes[pid]
        for pid, record in self._family.items():
            if pid in self._processes or record == browser:
                continue
            with contextlib.suppress(psutil.Error):
                process = psutil.Process(pid)
                # re-read each time: a process forked from the zygote takes a moment to name its type
                if is_renderer(process) and record.is_running():
                    self._processes[pid] = (record, process)
                    self._hard_limits(process)

    def _adopt(self, parents: dict[int, int | None]) -> None:
        """Add to the family each of ``parents``' pids whose parent is in it."""
        grown = True
        while grown:  # a child may be listed before its new parent
            grown = False
            for pid, parent in parents.items():
                record = self._family.get(parent) if parent is not None and pid not in self._family else None
                child = ProcessRecord.of(pid) if record is not None else None
                # a child starts after its parent: one that started before took the pid of a dead one
                if record is not None and child is not None and child.started >= record.started:
                    self._family[pid] = child
                    grown = True

    def _hard_limits(self, process: psutil.Process) -> None:
        try:
            data = (max(process.memory_info().data, self.DATA_BASELINE_MB * 2**20)
                    + (self.memory_mb + self.MEMORY_MARGIN_MB) * 2**20)
            process.rlimit(psutil.RLIMIT_DATA, (data, data))
            cpu = math.ceil(self.cpu_seconds + self.CPU_MARGIN_SECONDS)
            process.rlimit(psutil.RLIMIT_CPU, (cpu, cpu + 1))
        except (psutil.Error, OSError) as exc:
            log.warning("could not set hard limits on renderer %s: %s", process.pid, exc)

    def _sample(self) -> None:
        for pid, (record, process) in list(self._processes.items()):
            if not record.is_running():  # its pid may be another process's by now
                del self._processes[pid]
                continue
            try:
                with process.oneshot():
                    resident = process.memory_info().rss
                    times = process.cpu_times()
            except psutil.Error:
                continue
            cpu = times.user + times.system
            if resident > self.memory_mb * 2**20:
                why = (f"the page exceeded its {self.memory_mb} MB memory limit "
                       f"({resident / 2**20:.0f} MB resident) and was stopped")
            elif cpu > self.cpu_seconds:
                why = f"the page exceeded its {self.cpu_seconds:g} s CPU time limit and was stopped"
            else:
                continue
            with self._condition:
                self._overrun = self._overrun or why
            log.warning("%s: killing renderer %s", why, pid)
            record.kill()
            self._processes.pop(pid, None)
