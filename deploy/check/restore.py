"""A backup taken with scripts/backup, every volume destroyed, scripts/restore into the empty stack."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from deploy.check import platform
from deploy.check.client import Site
from deploy.check.platform import Board
from deploy.check.report import Report, expect
from deploy.check.settings import Settings
from deploy.stack import ROOT, Project, StackError


def _script(project: Project, name: str, *args: str) -> str:
    """scripts/backup or scripts/restore as an operator runs them, on this project and its files."""
    env = {**project.variables, "COMPOSE": " ".join(project.docker.compose_cmd),
           "COMPOSE_PROJECT_NAME": project.name,
           "MAGEBENCH_COMPOSE_FILES": " ".join(f"-f {f}" for f in project.files)}
    return project.docker.run(str(ROOT / "scripts" / name), *args, env=env, timeout=1800)


def _volumes(project: Project) -> list[str]:
    out = project.docker.docker("volume", "ls", "-q", "--filter", f"label=com.docker.compose.project={project.name}")
    return sorted(out.split())


def check_backup_and_restore(project: Project, site_after: Callable[[], Site], site: Site, boards: list[Board],
                             backups: Path, wait_ready: Callable[[], object], settings: Settings,
                             report: Report, workdir: Path) -> None:
    exports = platform.board_exports(site, boards)
    attempts = platform.attempt_files(project)
    started = time.monotonic()
    out = _script(project, "backup")
    # Its last line: "backup taken: NAME".
    name = out.strip().splitlines()[-1].rsplit(":", 1)[-1].strip()
    report.timing("scripts/backup", time.monotonic() - started)

    def backup_taken() -> str:
        files = sorted(p.name for p in (backups / name).iterdir())
        expect({"database.dump", "data.tar.gz", "manifest.json"} <= set(files), files)
        size = sum(p.stat().st_size for p in (backups / name).iterdir())
        return f"{name}: {', '.join(files)}, {size:,} bytes"

    if not report.check("a backup taken (pg_dump and the data volume)", backup_taken):
        raise StackError("no backup to restore")
    started = time.monotonic()
    project.down()
    left = _volumes(project)
    report.check("every volume destroyed", lambda: expect(not left, left))
    report.timing("stack and volumes destroyed", time.monotonic() - started)
    started = time.monotonic()
    _script(project, "restore", name)
    wait_ready()
    report.timing("scripts/restore until the site and every pool answer again", time.monotonic() - started)
    restored = site_after()

    def exports_identical() -> str:
        after = platform.board_exports(restored, boards)
        platform.save(workdir / "exports-restore.json", {"before": exports, "after": after})
        expect(after == exports, {k: (exports.get(k), v) for k, v in after.items() if exports.get(k) != v})
        return f"{len(after)} exports of {len(boards)} boards"

    report.check("restore: every board's exports byte-identical", exports_identical)

    def files_identical() -> str:
        after = platform.attempt_files(project)
        differ = [key for key in attempts if after.get(key) != attempts[key]]
        expect(not differ and set(after) == set(attempts), f"attempts that differ: {differ}")
        return f"{len(attempts)} attempts, {sum(v[2] for v in attempts.values())} files"

    report.check("restore: every attempt's files byte-identical", files_identical)
