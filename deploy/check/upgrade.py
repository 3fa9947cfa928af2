"""The previous release populated, then upgraded in place to this one while an episode runs."""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deploy.check import platform
from deploy.check.client import Site
from deploy.check.platform import Board
from deploy.check.report import Report, expect
from deploy.check.settings import Settings
from deploy.stack import Project, StackError, say, wait_for

SOKOBAN = Board("sokoban", "global", "mini")
WEBUI = Board("webui", "global", "full")
FOOTBALL = Board("football", "online", "mini")
ORACLE = "Check Oracle"
UPLOADED = "Check Upload"
IN_FLIGHT = "Check Oracle Football"


@dataclass
class Populated:
    """What the previous release stored, to be found unchanged after the upgrade."""

    token: str = ""
    ids: dict[str, int] = field(default_factory=dict)
    exports: dict[str, str] = field(default_factory=dict)
    attempts: dict[str, list[Any]] = field(default_factory=dict)
    in_flight_attempts: int = 0


def wait_site(site: Site, seconds: float) -> bool:
    return wait_for(seconds, lambda: site.get("/").status == 200)


def wait_pools(project: Project, seconds: float) -> bool:
    return wait_for(seconds, lambda: platform.live_queues(project) == "browser engine light", every=5)


def populate(previous: Project, site: Site, settings: Settings, report: Report) -> Populated:
    started = time.monotonic()
    previous.compose("up", "-d", "--no-build")
    if not wait_site(site, 600):
        raise StackError(f"the previous release's site did not answer on {site.base} within 600 s")
    if not wait_pools(previous, 300):
        raise StackError(f"the previous release's worker pools are not all live: {platform.live_queues(previous)!r}")
    report.timing("previous release: start until every pool is live", time.monotonic() - started)
    started = time.monotonic()
    platform.import_fixtures(previous)
    report.timing("previous release: fixture scenarios import (with the page check)", time.monotonic() - started)
    done = Populated(token=platform.make_token(previous, "previous-team"))
    api = site.with_token(done.token)
    started = time.monotonic()
    done.ids["sokoban"] = platform.submit_endpoint(api, ORACLE, SOKOBAN, settings.agent_port)
    done.ids["webui"] = platform.upload(api, UPLOADED)
    for key in ("sokoban", "webui"):
        platform.wait_finished(api, done.ids[key], settings.timeout)
    for model, board in ((ORACLE, SOKOBAN), (UPLOADED, WEBUI)):
        if not wait_for(120, functools.partial(platform.on_board, site, model, board)):
            raise StackError(f"{model} has no row on {board.path}")
    report.timing("previous release: Sokoban endpoint and WebUI upload to their board rows", time.monotonic() - started)
    done.exports = platform.board_exports(site, [SOKOBAN, WEBUI])
    done.attempts = platform.attempt_files(previous)
    # Football's attempts take the longest: the upgrade happens while they run.
    done.ids["football"] = platform.submit_endpoint(api, IN_FLIGHT, FOOTBALL, settings.agent_port)
    running = wait_for(300, lambda: any(a["status"] == "running"
                                        for a in platform.submission(api, done.ids["football"])["attempts"]))
    # Counted once made (a worker prepares a submission's attempts).
    done.in_flight_attempts = len(platform.submission(api, done.ids["football"])["attempts"])
    state = "an attempt is running" if running else "none running yet"
    say(f"Football submission {done.ids['football']}: {state}; upgrading")
    return done


def upgrade(current: Project, report: Report) -> None:
    """This release's images and files over the same project and volumes: compose replaces every
    container whose image changed (the workers get their stop signal and hand back what they run),
    the migrate service runs this release's migrations, the proxy and backup services start."""
    started = time.monotonic()
    current.compose("up", "-d", "--no-build", "--remove-orphans", timeout=1200)
    report.timing("upgrade: compose up with this release's images", time.monotonic() - started)


def check_upgrade(current: Project, site: Site, before: Populated, settings: Settings, report: Report,
                  workdir: Path) -> None:
    api = site.with_token(before.token)
    football: dict[str, Any] = {}

    def in_flight_ends() -> str:
        football.update(platform.wait_finished(api, before.ids["football"], settings.timeout))
        attempts = football["attempts"]
        expect(len(attempts) == before.in_flight_attempts and all(
            a["status"] == "scored" and a["score"] is not None for a in attempts),
            [(a["scenario"], a["status"], a["score"], a.get("error_kind")) for a in attempts])
        return f"{len(attempts)} attempts scored, tries {[a['tries'] for a in attempts]}"

    report.check("upgrade: the submission running during the upgrade ends with every attempt scored", in_flight_ends)
    report.check("upgrade: the migrate service ran this release's migrations", lambda: expect(
        current.state("migrate").startswith("exited 0"), current.state("migrate")))

    def boards_unchanged() -> str:
        after = platform.board_exports(site, [SOKOBAN, WEBUI])
        platform.save(workdir / "exports-upgrade.json", {"before": before.exports, "after": after})
        expect(after == before.exports, {k: (before.exports.get(k), v) for k, v in after.items()
                                         if before.exports.get(k) != v})
        return f"{len(after)} exports byte-identical"

    report.check("upgrade: every board's exports are byte-identical", boards_unchanged)

    def attempts_kept() -> str:
        after = platform.attempt_files(current)
        lost = [key for key in before.attempts if after.get(key) != before.attempts[key]]
        expect(not lost, f"attempts changed or lost: {lost}")
        return f"{len(before.attempts)} attempts and their files unchanged"

    report.check("upgrade: every finished attempt and its files kept", attempts_kept)
