"""The load of a chaos run: teams submitting at random intervals and a reader of the site's pages."""
from __future__ import annotations

import contextlib
import random
import threading
import time
from pathlib import Path

from bench._chaos.agents import PLANS, UPLOADER
from bench._chaos.record import Record
from bench._chaos.stack import Refused, Stack, log

TEAMS = (*(plan.team for plan in PLANS), UPLOADER)


def wait_web(stack: Stack, limit: float) -> bool:
    import requests

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{stack.site}/", headers=stack.headers, timeout=5).status_code < 500:
                return True
        time.sleep(0.2)
    return False


def poll_web(stack: Stack, record: Record, started: float, stop: threading.Event) -> None:
    """The home page and the queue page, in turn, every 0.5 s."""
    import requests

    paths = ["/", "/queue/"]
    i = 0
    while not stop.wait(0.5):
        path = paths[i % len(paths)]
        i += 1
        try:
            response = requests.get(f"{stack.site}{path}", headers=stack.headers, timeout=30)
        except requests.RequestException:
            record.refused += 1
            continue
        record.requests += 1
        if response.status_code >= 500:
            record.server_errors.append((time.monotonic() - started, path, response.status_code))


def submitter(stack: Stack, record: Record, rng: random.Random, stop: threading.Event,
              pause: tuple[float, float]) -> None:
    """A submission by a team drawn at random every ``pause`` seconds (drawn uniformly)."""
    while not stop.wait(rng.uniform(*pause)):
        team = TEAMS[rng.randrange(len(TEAMS))]
        try:
            stack.submit(team, rng)
        except Refused as exc:  # the team tries again later
            record.submit_failures += 1
            log(f"{team}'s submission refused ({exc}); trying again later")
            continue
        record.submitted[team] = record.submitted.get(team, 0) + 1


def oracle_upload(workdir: Path) -> bytes:
    """The oracle's runs of the Sokoban Online mini list, laid out as the official harness writes them."""
    from bench.upload_agreement import fixture_scenarios, play
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import start_server
    from submissions.official_layout import zip_runs

    folders = []
    with start_server(make_agent("oracle")) as server:
        for spec in fixture_scenarios("sokoban"):
            folders.append(play(spec, "online", server.url, "oracle", workdir / "upload" / spec.key)[1])
    return zip_runs(folders)
