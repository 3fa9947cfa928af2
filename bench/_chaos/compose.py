"""The chaos bench on the compose stack (docker-compose.yml), with real restarts.

The images and compose files are the compose check's (``deploy/stack.py``, one driver for both), the
stack runs as its own project (``magebench-chaos``) with ``compose.chaos.yml`` on top, its proxy on
https://localhost:18443 (verified against the proxy's local CA) and nothing else published. Teams
submit through the API with a token each; their endpoints run on every light worker's loopback. The
events are Docker's: ``docker kill -s KILL`` of a worker container (started again 2 s later),
``docker stop`` of one (its stop time measured; started again), FLUSHALL of Redis then a restart of
its container, a restart of the PostgreSQL container and one of the web container. The stored side
is checked inside the web container (``python -m bench._chaos.outcome``). The stack, its network and
its volumes are removed at the end, whatever happened; the images are kept.
"""
from __future__ import annotations

import json
import os
import random
import secrets
import subprocess
import time
from pathlib import Path
from typing import Any

from bench._chaos.agents import UPLOADER
from bench._chaos.record import FINISHED, Checks, Record, refused_results
from bench._chaos.stack import Refused, log
from bench._chaos.traffic import TEAMS, wait_web
from deploy.stack import Docker, Project, build_app_image, build_service_images, proxy_ca, wait_for

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "magebench-chaos"
PORT = 18443
#: The teams' endpoints on each light worker's loopback: this port and the next ones (agents.PLANS;
#: compose.chaos.yml starts them).
AGENT_PORT = 18201
OVERRIDE = Path(__file__).with_name("compose.chaos.yml")
EVENTS = ("worker_kill", "worker_stop", "redis_restart", "db_restart", "web_restart")
WORKER_SERVICES = ("worker-light", "worker-browser", "worker-engine")

TOKENS_SCRIPT = """
import json
from django.contrib.auth import get_user_model
from accounts.services import team_create, token_create
tokens = {}
for i, name in enumerate(%r):
    user = get_user_model().objects.create_user(f"chaos{i}", f"chaos{i}@example.com", %r)
    team = team_create(user=user, name=name)
    tokens[name] = token_create(team=team, user=user, name="chaos", scope="write")[1]
print(json.dumps(tokens))
"""


class ComposeStack:
    kinds: tuple[str, ...] = EVENTS
    site = f"https://localhost:{PORT}"
    #: The stack's own proxy sets the forwarded headers.
    headers: dict[str, str] = {}

    def __init__(self, light_workers: int) -> None:
        self.light_workers = light_workers
        self.description = (f"compose stack (project {PROJECT}): PostgreSQL, Redis, gunicorn, {light_workers} light "
                            "worker container(s), the browser and engine pools, beat")
        self.driver = Docker.find()
        self.docker = self.driver.path
        #: The compose check's files and the bench's (set by prepare), run as project PROJECT.
        self.project = Project(self.driver, PROJECT, [])
        self.stop_seconds: list[float] = []
        self.tokens: dict[str, str] = {}
        self.upload = b""
        self.logs = Path()
        self.up = False
        #: The proxy's local CA, which signs its certificate for localhost (requests verify with it).
        self.cafile = ""

    # --- the run --------------------------------------------------------------------------------
    def prepare(self, workdir: Path) -> None:
        """The images (the compose check's driver builds them), and Django in this process for the upload."""
        self.logs = workdir / "logs"
        self.logs.mkdir(exist_ok=True)
        log("building the images (deploy/stack.py, as scripts/compose-check does)")
        images = build_service_images(self.driver, os.environ.get("MAGEBENCH_CHECK_IMAGES", "auto"))
        build_app_image(self.driver, images, "magebench:current", log=self.logs / "images.log")
        self.project.files = [*images.files, str(OVERRIDE.relative_to(ROOT))]
        self.cafile = str(workdir / "proxy-ca.pem")
        os.environ.update({"DJANGO_SETTINGS_MODULE": "config.settings.base", "MAGEBENCH_DATA_DIR": str(workdir),
                           "DATABASE_URL": f"sqlite:///{workdir / 'unused.sqlite3'}"})
        import django

        django.setup()

    def start(self, workdir: Path, upload: bytes) -> None:
        self.upload = upload
        # The one command's stack (secrets made by its secrets service), published on 127.0.0.1 only.
        self.project.variables.update({
            "DOMAIN": "localhost", "MAGEBENCH_IMAGE": "magebench:current", "MAGEBENCH_HTTP_PUBLISH": "127.0.0.1:18080",
            "MAGEBENCH_HTTPS_PUBLISH": f"127.0.0.1:{PORT}", "MAGEBENCH_BACKUP_DIR": str(workdir / "backups")})
        self.project.down()  # what an interrupted run left
        self.up = True
        started = time.monotonic()
        log("starting the stack")
        self.project.compose("up", "-d", "--no-build", "--scale", f"worker-light={self.light_workers}")
        self._read_ca()
        if not wait_web(self, 600):
            raise SystemExit(f"the site did not answer on {self.site}/ within 600 s")
        log(f"the site answers after {time.monotonic() - started:.0f} s; importing the Sokoban scenarios")
        self.project.manage("web", "import_magebench", "fixtures/magebench", "--suite", "fixture", "--env", "sokoban")
        password = secrets.token_urlsafe(18)
        out = self.project.manage("web", "shell", "--verbosity", "0", "-c", TOKENS_SCRIPT % (TEAMS, password))
        self.tokens = json.loads(out.strip().splitlines()[-1])
        log(f"stack ready after {time.monotonic() - started:.0f} s")

    def _read_ca(self, limit: float = 180) -> None:
        if not wait_for(limit, lambda: bool(proxy_ca(self.project, Path(self.cafile)).read_text().strip()), every=1):
            raise SystemExit("the proxy made no local CA")
        os.environ["REQUESTS_CA_BUNDLE"] = self.cafile  # wait_web and poll_web verify with it too

    def request(self, method: str, path: str, team: str, **kwargs: Any) -> Any:
        import requests

        headers = {**self.headers, "Authorization": f"Bearer {self.tokens[team]}"}
        return requests.request(method, f"{self.site}{path}", headers=headers, timeout=60, verify=self.cafile,
                                **kwargs)

    def submit(self, team: str, rng: random.Random) -> None:
        import requests

        board = {"model_name": f"{team} model {rng.randrange(3)}", "env": "sokoban", "flow": "online",
                 "subset": "mini", "suite": "fixture", "public": True}
        try:
            if team == UPLOADER:
                response = self.request("POST", "/api/v1/uploads/", team, data={**board, "public": "true"},
                                        files={"file": ("oracle-runs.zip", self.upload, "application/zip")})
            else:
                port = AGENT_PORT + TEAMS.index(team)
                response = self.request("POST", "/api/v1/submissions/", team, json={
                    **board, "endpoint_url": f"http://127.0.0.1:{port}/v1",
                    "settings": {"repeats": 1, "resolution": 256}})
        except requests.RequestException as exc:
            raise Refused(f"no answer: {exc.__class__.__name__}") from None
        if response.status_code != 201:
            raise Refused(f"HTTP {response.status_code}: {response.text[:200]}")

    def event(self, kind: str, rng: random.Random, record: Record, started: float) -> str:
        if kind in ("worker_kill", "worker_stop"):
            container = rng.choice(self.project.containers(*WORKER_SERVICES))
            if kind == "worker_kill":
                self.driver.docker("kill", "-s", "KILL", container)
                time.sleep(2)
                what = f"{container} SIGKILLed (docker kill), started again"
            else:
                at = time.monotonic()
                self.driver.docker("stop", "-t", "60", container, timeout=120)
                took = time.monotonic() - at
                self.stop_seconds.append(took)
                what = f"{container} SIGTERMed (docker stop), gone after {took:.1f}s, started again"
            self.driver.docker("start", container)
            return what
        if kind == "redis_restart":
            redis = self.project.one("redis")
            self.driver.docker("exec", redis, "redis-cli", "FLUSHALL")
            self.driver.docker("restart", redis)
            self.wait("redis", redis, "redis-cli", "ping")
            return "Redis emptied (FLUSHALL), its container restarted"
        if kind == "db_restart":
            postgres = self.project.one("postgres")
            down = time.monotonic() - started
            self.driver.docker("restart", "-t", "30", postgres, timeout=120)
            self.wait("PostgreSQL", postgres, "pg_isready", "-U", "magebench")
            up = time.monotonic() - started
            record.db_down.append((down, up))
            return f"PostgreSQL container restarted, answering again after {up - down:.1f}s"
        web = self.project.one("web")
        down = time.monotonic() - started
        self.driver.docker("restart", web, timeout=120)
        wait_web(self, 120)
        up = time.monotonic() - started
        record.web_down.append((down, up))
        return f"web container restarted, answering again after {up - down:.1f}s"

    def wait(self, what: str, container: str, *probe: str, limit: float = 120) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if subprocess.run([self.docker, "exec", container, *probe], capture_output=True).returncode == 0:
                return
            time.sleep(0.5)
        log(f"{what} did not answer within {limit:.0f} s")

    def active_count(self) -> int:
        """Submissions not over yet, from the API's list (every bench submission is public)."""
        import requests

        try:
            response = self.request("GET", "/api/v1/submissions/?limit=200", TEAMS[0])
            rows = response.json()
        except (requests.RequestException, ValueError):
            return -1  # not known now: the drain goes on
        return sum(1 for row in rows if row.get("status") not in FINISHED)

    def outcome(self, record: Record) -> tuple[Checks, list[str]]:
        out = self.driver.docker("exec", self.project.one("web"), "python", "-m", "bench._chaos.outcome", timeout=900)
        stored = json.loads(out.strip().splitlines()[-1])
        checks = Checks()
        for ok, text in stored["checks"]:
            checks.check(ok, text)
        figures = list(stored["figures"])
        logs = []
        for name in self.project.containers(*WORKER_SERVICES):
            done = subprocess.run([self.docker, "logs", name], capture_output=True, text=True, errors="replace",
                                  timeout=300)
            logs.append(done.stdout + done.stderr)
        figures.append(f"second results refused by the try guard (worker logs): {refused_results(logs)}")
        restarts = {name.removeprefix(f"{PROJECT}_"): self.driver.docker("inspect", "-f", "{{.RestartCount}}",
                                                               name).strip()
                    for name in self.project.containers(*WORKER_SERVICES)}
        figures.append(f"worker containers that exited on their own and were started again by Docker: {restarts}")
        return checks, figures

    def stop(self) -> None:
        if not self.up:
            return
        (self.logs / "compose.log").write_text(self.project.logs())
        self.project.down()
        self.up = False
        log(f"stack torn down; its logs: {self.logs / 'compose.log'}")
