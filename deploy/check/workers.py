"""A second host's workers (docker-compose.workers.yml) take part of the main stack's queue."""
from __future__ import annotations

import json
import time
from collections import Counter

from deploy.check import platform
from deploy.check.client import Site
from deploy.check.platform import Board
from deploy.check.report import Report, expect
from deploy.check.settings import Settings
from deploy.stack import Project, StackError, wait_for

BOARD = Board("sokoban", "global", "mini")
MODEL = "Check Oracle Two Hosts"


# Which host scored each attempt is the platform's own record (not in the public API).
HOSTS_CODE = """
import json
from submissions.models import Attempt
print(json.dumps([a.worker for a in Attempt.objects.filter(submission_id={id}, status="scored")]))
"""


def _hosts(main: Project, submission_id: int) -> Counter[str]:
    workers = json.loads(main.shell("web", HOSTS_CODE.format(id=submission_id)))
    return Counter(worker.split("@", 1)[-1] for worker in workers)


def check_second_host(main: Project, extra: Project, site: Site, token: str, settings: Settings,
                      report: Report) -> None:
    started = time.monotonic()
    extra.compose("up", "-d", "--no-build", "worker-light", "agent-light")
    if not wait_for(300, lambda: "light@second-host" in main.shell("web", (
            "from submissions.models import LiveWorker; print(sorted(w.hostname for w in LiveWorker.objects.all()))")),
            every=5):
        raise StackError("the second host's light worker never registered with the main stack")
    report.timing("second host: its light pool live in the main stack", time.monotonic() - started)
    # The main stack's light pool is held still while the submission starts, so that the second host
    # surely takes some of its attempts; released, it runs the rest.
    main.docker.docker("pause", main.one("worker-light"))
    api = site.with_token(token)
    started = time.monotonic()
    try:
        submission_id = platform.submit_endpoint(api, MODEL, BOARD, settings.agent_port)
        wait_for(300, lambda: _hosts(main, submission_id)["second-host"] >= 1, every=2)
    finally:
        main.docker.docker("unpause", main.one("worker-light"))
    data = platform.wait_finished(api, submission_id, settings.timeout)
    report.timing("second host: a Sokoban Global mini submission shared by both hosts", time.monotonic() - started)

    def shared() -> str:
        attempts = data["attempts"]
        hosts = _hosts(main, submission_id)
        expect(all(a["status"] == "scored" for a in attempts) and hosts["second-host"] >= 1, hosts)
        return ", ".join(f"{host}: {n}" for host, n in hosts.items())

    report.check("a second compose project's workers scored part of a submission", shared)
