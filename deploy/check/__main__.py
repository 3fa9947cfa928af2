"""scripts/compose-check: see deploy/check/__init__.py and settings.py."""
from __future__ import annotations

import functools
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

from deploy.check import restore, site_checks, stacks, upgrade, workers
from deploy.check.release import Worktree, build_previous_image, previous_release
from deploy.check.report import Report
from deploy.check.settings import Settings
from deploy.check.stacks import CURRENT_IMAGE, PREVIOUS_IMAGE
from deploy.stack import (
    Docker,
    Images,
    Project,
    StackError,
    build_app_image,
    build_service_images,
    proxy_ca,
    say,
    wait_for,
)


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def build(docker: Docker, settings: Settings, report: Report, workdir: Path) -> Images:
    images = build_service_images(docker, settings.images, settings.rebuild_base)
    previous_id = docker.image_id(CURRENT_IMAGE)
    say(f"building the app image (log: {workdir / 'build.log'})")
    build_app_image(docker, images, CURRENT_IMAGE, log=workdir / "build.log")
    # The bench and an operator's `docker compose up` name the image without a tag.
    docker.docker("tag", CURRENT_IMAGE, "magebench")
    if previous_id and previous_id != docker.image_id(CURRENT_IMAGE):
        docker.docker("rmi", previous_id, check=False)  # the 3.6 GB image it replaces, unless in use
    for what, seconds in images.timings:
        report.timing(what, seconds)
    return images


def run(docker: Docker, images: Images, settings: Settings, report: Report, workdir: Path) -> None:
    commit = previous_release(settings.previous)
    say(f"previous release: {commit[:12]}")
    tree = Worktree(commit)
    keys = stacks.Secrets()
    backups = workdir / "backups"
    backups.mkdir(mode=0o700)
    current = stacks.current_project(docker, images, settings, backups, keys)
    extra: Project | None = None
    try:
        build_previous_image(docker, images, tree, PREVIOUS_IMAGE, workdir / "build-previous.log")
        report.timing(*images.timings[-1])
        current.down()
        docker.docker("tag", PREVIOUS_IMAGE, "magebench")
        previous = stacks.previous_project(docker, images, settings, tree.path, keys)
        populated = upgrade.populate(previous, stacks.previous_site(settings), settings, report)
        upgrade.upgrade(current, report)
        started = time.monotonic()
        site = ready(current, settings, workdir)
        report.timing("upgrade: until the site answers through the proxy and every pool is live",
                      time.monotonic() - started)
        upgrade.check_upgrade(current, site, populated, settings, report, workdir)
        # From here on the secrets are the ones in the secrets volume, as after the one command.
        stack = stacks.current_project(docker, images, settings, backups)
        new = site_checks.run_new_submission(site, stack, settings, report)
        site_checks.check_submissions(site, populated, new, report)
        plain = stacks.Site(f"http://localhost:{settings.http_port}")
        site_checks.check_proxy(site, plain, stack, settings, report)
        site_checks.check_services(stack, settings, report)
        extra = stacks.workers_project(docker, settings, stack)
        workers.check_second_host(stack, extra, site, new["token"], settings, report)
        extra.down()
        boards = [upgrade.SOKOBAN, upgrade.WEBUI, upgrade.FOOTBALL, site_checks.ONLINE, workers.BOARD]
        restore.check_backup_and_restore(
            stack, lambda: stacks.current_site(settings, workdir / "ca.pem"), site, boards, backups,
            functools.partial(ready, stack, settings, workdir), settings, report, workdir)
    finally:
        if report.failed:
            (workdir / "logs.txt").write_text(current.logs(tail=200))
            say(f"the last lines of every container's logs: {workdir / 'logs.txt'}")
        if settings.keep:
            say(f"left running; tear down with: COMPOSE_PROJECT_NAME={settings.project} scripts/... or "
                f"{' '.join(docker.compose_cmd)} -p {settings.project} down -v")
        else:
            started = time.monotonic()
            if extra is not None:
                extra.down()
            current.down()
            report.timing("teardown (containers, networks, volumes)", time.monotonic() - started)
        # The untagged name is this release again (the previous release's stack ran under it), and
        # the previous release's image goes: its layers stay in the build cache for the next run.
        docker.docker("tag", CURRENT_IMAGE, "magebench")
        if not settings.keep:
            docker.docker("rmi", PREVIOUS_IMAGE, check=False)
        tree.close()


def ready(project: Project, settings: Settings, workdir: Path) -> stacks.Site:
    """The site through the proxy (its CA read once the proxy made it) and every pool live."""
    ca = workdir / "ca.pem"
    if not wait_for(180, lambda: bool(proxy_ca(project, ca).read_text().strip())):
        raise StackError("the proxy made no local CA within 180 s")
    site = stacks.current_site(settings, ca)
    if not upgrade.wait_site(site, 600):
        raise StackError(f"the site did not answer on {site.base} within 600 s")
    if not upgrade.wait_pools(project, 300):
        raise StackError("not every worker pool is live")
    return site


def main() -> int:
    settings = Settings()
    report = Report()
    workdir = Path(tempfile.mkdtemp(prefix="magebench-check-"))
    try:
        docker = Docker.find()
        say(docker.versions())
        taken = [p for p in (settings.http_port, settings.https_port, settings.previous_port) if not _port_free(p)]
        if taken and not settings.images_only:
            raise StackError(f"127.0.0.1 ports {taken} are taken; set MAGEBENCH_CHECK_HTTP_PORT, _HTTPS_PORT, _PORT")
        images = build(docker, settings, report, workdir)
        if settings.images_only:
            print("compose files: " + " ".join(f"-f {f}" for f in images.files))
            return 0
        run(docker, images, settings, report, workdir)
    except StackError as error:
        report.failed.append(("the run", str(error)))
        say(f"FAILED: {error}")
    print(report.summary(f"compose-check summary ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
                         f"{os.cpu_count()} cores)"))
    ok = not report.failed
    print("compose-check: OK" if ok else f"compose-check: FAILED (work files in {workdir})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
