"""A worker told to stop (SIGTERM, Ctrl-C) ends within seconds, handing its attempts in flight back to
the queue; another worker then plays each of them, and each is scored once."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluators.baselines.agents import make_agent
from evaluators.baselines.server import Latency, start_server
from submissions.models import Attempt
from submissions.shutdown import STOPPED_KIND
from submissions.tests.test_attempts_in_flight import _submission
from submissions.tests.test_fault_tolerance import _assert_each_attempt_ended_once, _finished

ROOT = Path(__file__).resolve().parents[2]


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.integration
def test_a_worker_stopped_with_attempts_in_flight_exits_at_once_and_another_scores_each_once(
        fixture_scenarios, celery_workers, wait_for):
    # Each model call takes 0.8 s: an attempt of a dozen moves runs for longer than the stop may take.
    with start_server(make_agent("oracle"), latency=Latency(0.8, spread=0.0)) as server:
        stopped = celery_workers("stopped", concurrency=3)
        # Four small boards: two or three in flight when the stop comes, and a quick finish after it.
        submission = _submission(server.url, only=4)
        wait_for(lambda: Attempt.objects.filter(submission=submission, worker=stopped.name, model_calls__gte=1,
                                                status=Attempt.Status.RUNNING).count() >= 2, 120,
                 "the worker to be into two episodes at once")
        in_flight = set(Attempt.objects.filter(submission=submission, status=Attempt.Status.RUNNING)
                        .values_list("id", flat=True))
        signalled = time.monotonic()
        stopped.process.send_signal(signal.SIGTERM)
        # A busy machine may be slow to run the exit: the wait is generous, the figure is reported.
        stopped.process.wait(timeout=60)
        took = time.monotonic() - signalled
        wait_for(lambda: _group_gone(stopped.process.pid), 30, "the stopped worker's pool processes to end")
        print(f"worker stopped {took:.1f}s after SIGTERM with {len(in_flight)} attempts in flight")
        assert took < 20, f"the worker took {took:.1f}s to stop: {stopped.output()}"
        handed = Attempt.objects.filter(id__in=in_flight)
        assert not handed.filter(status=Attempt.Status.RUNNING).exists()
        assert set(handed.filter(status=Attempt.Status.RETRYING, error_kind=STOPPED_KIND)
                   .values_list("id", flat=True)) == in_flight - set(
            handed.filter(status=Attempt.Status.SCORED).values_list("id", flat=True))
        # No watchdog: only the messages the stop sent back bring the attempts to the next worker.
        celery_workers("successor", concurrency=4)
        wait_for(lambda: _finished(submission), 300, "the next worker to finish every attempt")
        attempts = _assert_each_attempt_ended_once(submission, server)
    rerun = [a for a in attempts if a.id in in_flight]
    assert rerun and all(a.tries >= 2 and a.worker != stopped.name for a in rerun
                         if a.error_kind == "" and a.tries > 1)
    assert all(a.error_kind == "" and a.error_message == "" for a in attempts)


def test_the_demo_stops_its_children_within_a_bounded_time(wait_for):
    """The demo's cleanup sends SIGTERM to its children, then kills any still there after a bound."""
    lines = (ROOT / "scripts" / "demo").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("cleanup() {"))
    end = lines.index("}", start)
    cleanup = "\n".join(lines[start:end + 1])
    # A child that ignores SIGTERM, as a worker in a hung warm shutdown did.
    body = (f"set -euo pipefail\n{cleanup}\nSTOP_WAIT=2\npids=()\n"
            "trap cleanup EXIT INT TERM\n"
            "sleep 300 & pids+=($!)\n"
            # The child says it ignores SIGTERM through a file; the script says it is ready only once
            # the child's pid is recorded, as the demo's children are long before a Ctrl-C.
            "flag=$(mktemp)\n"
            "bash -c 'trap \"\" TERM; echo on > \"$0\"; exec sleep 300' \"$flag\" & pids+=($!)\n"
            "while [ ! -s \"$flag\" ]; do sleep 0.05; done\n"
            "rm -f \"$flag\"\n"
            "echo ready\n"
            "wait\n")
    # The script starts as from a terminal: SIGINT delivered and handled by default. A test process may
    # have it blocked or ignored, and bash can neither trap nor unblock what it inherits that way.
    launcher = ("import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
                "signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp('bash', ['bash', '-c', sys.argv[1]])")
    process = subprocess.Popen([sys.executable, "-c", launcher, body], stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    signalled = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        # What the script's signal state was, for whoever reads the failure.
        status = Path(f"/proc/{process.pid}/status").read_text()
        raise AssertionError("the script outlived SIGINT: " + " ".join(
            line for line in status.splitlines() if line.startswith(("State", "SigBlk", "SigIgn", "SigCgt")))) from None
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    took = time.monotonic() - signalled
    assert 2 <= took < 30, took  # STOP_WAIT is 2 s here: the stubborn child was waited for, then killed
    # A grandchild killed through its parent is reaped by init, a moment after the script has ended.
    wait_for(lambda: _group_gone(process.pid) or not _alive_children(process.pid), 30,
             "every process the cleanup started to end")


def _alive_children(pgid: int) -> list[int]:
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry.name))
    return alive
