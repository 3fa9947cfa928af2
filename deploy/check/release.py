"""The previous release: which commit, a git worktree of it, and its app image."""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from deploy.stack import ROOT, Docker, Images, StackError, build_app_image

PREVIOUS_FILE = ROOT / "docker" / "previous-release"


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise StackError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def previous_release(named: str = "") -> str:
    """The commit to upgrade from: the one named, else the newest v* tag, else docker/previous-release."""
    if named:
        return _git("rev-parse", "--verify", f"{named}^{{commit}}")
    tags = _git("tag", "--list", "v*", "--sort=-version:refname").split()
    if tags:
        return _git("rev-parse", "--verify", f"{tags[0]}^{{commit}}")
    text = PREVIOUS_FILE.read_text().splitlines()
    lines = [line.strip() for line in text if line.strip() and not line.startswith("#")]
    if not lines:
        raise StackError(f"{PREVIOUS_FILE} names no commit")
    try:
        return _git("rev-parse", "--verify", f"{lines[0]}^{{commit}}")
    except StackError:
        raise StackError(f"the previous release {lines[0]} is not in this clone: fetch its history "
                         "(git fetch --unshallow) or set MAGEBENCH_CHECK_PREVIOUS") from None


class Worktree:
    """A detached worktree of one commit, removed on close."""

    def __init__(self, commit: str) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="magebench-previous-")) / "tree"
        _git("worktree", "add", "--detach", str(self.path), commit)

    def close(self) -> None:
        subprocess.run(["git", "worktree", "remove", "--force", str(self.path)], cwd=ROOT, capture_output=True)


def build_previous_image(docker: Docker, images: Images, worktree: Worktree, tag: str, log: Path) -> str:
    return build_app_image(docker, images, tag, context=worktree.path, log=log)
