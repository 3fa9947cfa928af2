"""A renderer's processes are known by pid and start time: a pid that passed to another process
(pid numbers come round again) is never signalled, adopted or limited in its old owner's name."""
from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace

import psutil
import pytest

from evaluators.webui import processes
from evaluators.webui.monitor import ResourceMonitor
from evaluators.webui.processes import ProcessRecord

#: A stand-in browser: a process with one child whose command line says it is a Chromium renderer.
#: The parent reaps the child, so a killed child leaves no zombie behind that would still look alive.
FAKE_BROWSER = ("import subprocess, sys, time\n"
                "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '--type=renderer'])\n"
                "child.wait()\n"
                "time.sleep(600)\n")


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.Popen]]:
    started: list[subprocess.Popen] = []

    def start(*command: str) -> subprocess.Popen:
        process = subprocess.Popen(command)
        started.append(process)
        return process

    yield start
    for process in started:
        with contextlib.suppress(psutil.Error):  # not reaped yet, so the pid is still this process's
            for child in psutil.Process(process.pid).children(recursive=True):
                child.kill()
        process.kill()
        process.wait(timeout=30)


def stale(record: ProcessRecord) -> ProcessRecord:
    """What a record of an earlier process that had the same pid looks like now."""
    return replace(record, started=record.started - 1)


def test_a_record_whose_pid_now_belongs_to_another_process_does_not_kill_it(spawn):
    sleeper = spawn("sleep", "600")
    record = ProcessRecord.of(sleeper.pid)
    assert record is not None and record.is_running()
    assert not stale(record).is_running()

    processes.kill([stale(record)])
    assert not stale(record).kill()
    assert sleeper.poll() is None and record.is_running()  # the pid's current owner lives on

    processes.kill([record])
    assert sleeper.wait(timeout=30) == -9 and not record.is_running()
    assert not record.kill()  # gone: nothing to signal, whoever has the pid next


def test_the_renderers_under_a_reused_browser_pid_are_not_that_browsers(spawn, wait_for):
    browser = ProcessRecord.of(spawn(sys.executable, "-c", FAKE_BROWSER).pid)
    assert browser is not None
    wait_for(lambda: len(processes.renderer_processes(browser)) == 1, 30, "the stand-in renderer")
    assert processes.renderer_processes(stale(browser)) == []


def test_a_monitor_leaves_alone_the_processes_of_whatever_took_its_browser_pid(spawn, wait_for):
    browser = ProcessRecord.of(spawn(sys.executable, "-c", FAKE_BROWSER).pid)
    assert browser is not None
    wait_for(lambda: len(processes.renderer_processes(browser)) == 1, 30, "the stand-in renderer")
    (renderer,) = processes.renderer_processes(browser)
    monitor = ResourceMonitor(memory_mb=1, cpu_seconds=600)  # any renderer is past 1 MB
    try:
        monitor.begin(stale(browser))
        wait_for(lambda: monitor.watching is None, 30, "the monitor to find its browser gone")
        assert renderer.is_running() and monitor.end() is None

        # the same monitor does stop the renderer of the browser it was given
        monitor.begin(browser)
        wait_for(lambda: not renderer.is_running(), 30, "the monitor to stop the renderer")
        assert "1 MB memory limit" in (monitor.end() or "")
    finally:
        monitor.close()
