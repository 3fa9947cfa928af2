"""The platform's side of a check: scenarios, a team token, submissions, boards and stored files."""
from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deploy.check.client import Site
from deploy.stack import ROOT, Project, StackError, say, wait_for

FINISHED = ("completed", "incomplete", "failed", "cancelled")
SUITE = "fixture"
UPLOAD_FILE = ROOT / "fixtures" / "uploads" / "example-webui-global.jsonl"

TOKEN_CODE = """
from django.contrib.auth import get_user_model
from accounts.services import team_create, token_create
user = get_user_model().objects.create_user({user!r}, {email!r}, {password!r})
team = team_create(user=user, name={team!r})
print(token_create(team=team, user=user, name="check", scope="write")[1])
"""

LIVE_QUEUES_CODE = """
from datetime import timedelta
from django.utils import timezone
from submissions.models import LiveWorker
fresh = LiveWorker.objects.filter(last_seen__gte=timezone.now() - timedelta(minutes=3))
print(" ".join(sorted({q for w in fresh for q in w.queues})))
"""

# Every attempt's stored files, one digest per attempt: what a restore must bring back byte for byte.
ATTEMPT_FILES_CODE = """
import hashlib, json
from submissions.models import Attempt
from submissions.selectors import trajectory_dir
out = {}
for attempt in Attempt.objects.order_by("id"):
    digest, count = hashlib.sha256(), 0
    directory = trajectory_dir(attempt)
    if directory and directory.exists():
        for path in sorted(p for p in directory.rglob("*") if p.is_file()):
            digest.update(str(path.relative_to(directory)).encode() + b"\\0" + path.read_bytes())
            count += 1
    out[attempt.id] = [attempt.status, attempt.score, count, digest.hexdigest()]
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Board:
    env: str
    flow: str
    subset: str

    @property
    def path(self) -> str:
        return f"/boards/{self.env}/{self.flow}/{self.subset}/"

    @property
    def api(self) -> str:
        return f"/api/v1/boards/{self.env}/{self.flow}/{self.subset}/"


def import_fixtures(project: Project) -> None:
    # In the browser worker's container: the import renders every WebUI page in Chromium, which needs
    # the user and network namespaces only that container may make.
    project.manage("worker-browser", "import_magebench", "fixtures/magebench", "--suite", SUITE, timeout=1800)


def make_token(project: Project, name: str) -> str:
    token = project.shell("web", TOKEN_CODE.format(user=name, email=f"{name}@example.com",
                                                   password=secrets.token_urlsafe(18), team=name.title()))
    if not token.startswith("mbw_"):
        raise StackError(f"no write token was made: {token[-300:]}")
    return token


def live_queues(project: Project) -> str:
    return project.shell("web", LIVE_QUEUES_CODE)


def submit_endpoint(site: Site, model: str, board: Board, agent_port: int) -> int:
    answer = site.post_json("/api/v1/submissions/", {
        "model_name": model, "env": board.env, "flow": board.flow, "subset": board.subset, "suite": SUITE,
        "public": True, "endpoint_url": f"http://127.0.0.1:{agent_port}/v1", "settings": {"repeats": 1}})
    if answer.status != 201:
        raise StackError(f"the {board.env} endpoint submission was refused (HTTP {answer.status}): {answer.text[:500]}")
    data = answer.json()
    say(f"endpoint submission {data['id']} ({board.env} {board.flow} {board.subset}): {data['attempts']} attempts")
    return int(data["id"])


def upload(site: Site, model: str) -> int:
    fields = {"model_name": model, "env": "webui", "flow": "global", "subset": "full", "suite": SUITE, "public": "true"}
    answer = site.post_form("/api/v1/uploads/", fields, {"file": (UPLOAD_FILE.name, UPLOAD_FILE.read_bytes())})
    if answer.status != 201:
        raise StackError(f"the upload was refused (HTTP {answer.status}): {answer.text[:500]}")
    data = answer.json()
    say(f"upload {data['id']}: {data['attempts']} attempts")
    return int(data["id"])


def submission(site: Site, submission_id: int) -> dict[str, Any]:
    answer = site.get(f"/api/v1/submissions/{submission_id}/")
    if answer.status != 200:
        raise StackError(f"submission {submission_id}: HTTP {answer.status}")
    data: dict[str, Any] = answer.json()
    return data


def wait_finished(site: Site, submission_id: int, seconds: float) -> dict[str, Any]:
    started = time.monotonic()
    seen: dict[str, Any] = {}

    def ended() -> bool:
        seen.update(submission(site, submission_id))
        return seen.get("status") in FINISHED

    if not wait_for(seconds, ended, every=3):
        raise StackError(f"submission {submission_id} did not end within {seconds:.0f} s "
                         f"(status {seen.get('status')})")
    say(f"submission {submission_id} ended {seen['status']} after {time.monotonic() - started:.1f} s")
    return seen


def on_board(site: Site, model: str, board: Board) -> bool:
    answer = site.get(f"{board.api}?suite={SUITE}")
    return answer.status == 200 and model in answer.text


def board_exports(site: Site, boards: list[Board]) -> dict[str, str]:
    """sha256 of each board's exports (the board as CSV and JSON, every attempt as CSV)."""
    digests: dict[str, str] = {}
    for board in boards:
        for path in (f"{board.path}export.csv?suite={SUITE}", f"{board.path}export.json?suite={SUITE}",
                     f"{board.api}attempts.csv?suite={SUITE}"):
            digests[path] = hashlib.sha256(_download(site, path)).hexdigest()
    return digests


def _download(site: Site, path: str, seconds: float = 600) -> bytes:
    """The body of a 200; a 202 is a download the workers build on first request: asked again."""
    deadline = time.monotonic() + seconds
    while True:
        answer = site.get(path)
        if answer.status == 200:
            return answer.body
        if answer.status != 202 or time.monotonic() > deadline:
            raise StackError(f"GET {path}: HTTP {answer.status}")
        time.sleep(3)


def attempt_files(project: Project) -> dict[str, list[Any]]:
    result: dict[str, list[Any]] = json.loads(project.shell("web", ATTEMPT_FILES_CODE, timeout=600))
    return result


def save(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True))
