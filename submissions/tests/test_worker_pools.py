"""The worker pools come from the registry, and run_worker --other-pools serves those no other
service reads: one Celery worker each, the namespaces a pool needs granted only when said."""
from __future__ import annotations

import io
import signal
import sys
import time

from django.core.management import call_command

from submissions.worker_pools import Pool, declared_pools, supervise


def _other_pools(*args: str) -> tuple[list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("run_worker", "--other-pools", *args, "--dry-run", stdout=out, stderr=err)
    return [line for line in out.getvalue().splitlines() if line], err.getvalue()


def test_each_queue_the_default_environments_send_to_is_a_pool_with_what_it_needs() -> None:
    assert declared_pools() == [Pool("light", ("sokoban",), False), Pool("browser", ("webui",), True),
                                Pool("engine", ("football",), False)]


def test_the_other_pools_are_started_one_worker_each_and_a_namespace_pool_only_where_allowed() -> None:
    commands, said = _other_pools("--except", "light", "--host", "box")
    assert [command.split(" -Q ")[1].split()[0] for command in commands] == ["engine"]
    assert commands[0].endswith("--hostname=engine@box")
    assert "not serving browser (webui): it needs network namespaces" in said
    commands, _ = _other_pools("--except", "light", "--network-namespaces")
    assert [command.split(" -Q ")[1].split()[0] for command in commands] == ["browser", "engine"]
    assert _other_pools("--except", "light,browser,engine") == ([], "")


def test_the_first_worker_to_exit_stops_the_others_and_gives_its_status() -> None:
    before = signal.getsignal(signal.SIGINT)
    started = time.monotonic()
    # supervise() returns once every command has ended: the sleeper was stopped, not waited out.
    status = supervise([["sleep", "60"], [sys.executable, "-c", "import sys; sys.exit(3)"]])
    assert status == 3 and time.monotonic() - started < 30
    assert signal.getsignal(signal.SIGINT) == before  # the caller's handlers are given back
