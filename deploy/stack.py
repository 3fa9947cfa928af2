"""One driver for the compose stack on this machine: Docker, compose, the images and the containers.

``scripts/compose-check`` (:mod:`deploy.check`) and the chaos bench on compose
(``bench/_chaos/compose.py``) both run the stack through it, so they build the same images and run
the same files. Standard library only: it runs on the host, before any virtualenv exists.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE_STANDARD = "python:3.11-slim-bookworm"
BASE_LOCAL = "magebench-base:bookworm"
STANDARD_SERVICE_IMAGES = ("postgres:15", "redis:7")
#: The compose files of a stack that stays on this machine (see docker/compose.check.yml).
CHECK_FILES = ("docker-compose.yml", "docker/compose.check.yml")
LOCAL_IMAGES_FILE = "docker/compose.local-images.yml"


def say(message: str) -> None:
    print(f"[compose-check {time.strftime('%H:%M:%S', time.gmtime())}] {message}", file=sys.stderr, flush=True)


class StackError(RuntimeError):
    """A docker or compose command failed; the message ends with what it printed."""


def pick_docker() -> str:
    """DOCKER, else Debian's client (scripts/docker-engine installs it), else the one on PATH: the
    first that reaches a daemon and builds with BuildKit."""
    for candidate in (os.environ.get("DOCKER"), "/usr/bin/docker", "docker"):
        path = shutil.which(candidate) if candidate else None
        if not path:
            continue
        if subprocess.run([path, "info"], capture_output=True).returncode != 0:
            continue
        probe = subprocess.run([path, "build", "--help"], capture_output=True,
                               env={**os.environ, "DOCKER_BUILDKIT": "1"})
        if probe.returncode == 0:
            return path
    raise StackError("no docker client here reaches a daemon and builds with BuildKit "
                     "(start dockerd: scripts/docker-engine)")


def compose_command(docker: str) -> list[str]:
    if os.environ.get("COMPOSE"):
        return shlex.split(os.environ["COMPOSE"])
    if subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    raise StackError("no compose: install the docker compose plug-in or docker-compose")


@dataclass
class Docker:
    """The docker client and compose command, and the environment every call gets."""

    path: str = ""
    compose_cmd: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=lambda: {**os.environ, "DOCKER_BUILDKIT": "1",
                                                         "COMPOSE_DOCKER_CLI_BUILD": "1"})

    @classmethod
    def find(cls) -> Docker:
        path = pick_docker()
        return cls(path=path, compose_cmd=compose_command(path))

    def run(self, *argv: str, check: bool = True, timeout: float = 900, cwd: Path = ROOT,
            env: dict[str, str] | None = None, stdin: str | None = None) -> str:
        done = subprocess.run(argv, cwd=cwd, env={**self.env, **(env or {})}, capture_output=True, text=True,
                              errors="replace", timeout=timeout, input=stdin)
        if check and done.returncode != 0:
            shown = " ".join(shlex.quote(a) for a in argv[:8])
            raise StackError(f"{shown}{' ...' if len(argv) > 8 else ''} exited {done.returncode}: "
                             f"{(done.stderr or done.stdout).strip()[-3000:]}")
        return done.stdout

    def docker(self, *args: str, **kwargs: object) -> str:
        return self.run(self.path, *args, **kwargs)  # type: ignore[arg-type]

    def has_image(self, image: str) -> bool:
        return subprocess.run([self.path, "image", "inspect", image], capture_output=True).returncode == 0

    def image_id(self, image: str) -> str:
        return self.docker("image", "inspect", "-f", "{{.Id}}", image, check=False).strip()

    def versions(self) -> str:
        server = self.docker("version", "--format", "{{.Server.Version}}", check=False).strip()
        compose = self.run(*self.compose_cmd, "version", "--short", check=False).strip()
        return f"docker: {self.path} (server {server}), compose: {' '.join(self.compose_cmd)} ({compose})"


@dataclass
class Project:
    """One compose project: its name, its files and the variables its files read."""

    docker: Docker
    name: str
    files: Sequence[str]
    variables: dict[str, str] = field(default_factory=dict)
    directory: Path = ROOT

    def compose(self, *args: str, check: bool = True, timeout: float = 900) -> str:
        file_args = [arg for f in self.files for arg in ("-f", f)]
        return self.docker.run(*self.docker.compose_cmd, "-p", self.name, *file_args, *args, check=check,
                               timeout=timeout, cwd=self.directory, env=self.variables)

    def containers(self, *services: str, every: bool = True) -> list[str]:
        names: list[str] = []
        for service in services:
            names += self.docker.docker("ps", *(["-a"] if every else []), "--filter",
                                        f"label=com.docker.compose.project={self.name}", "--filter",
                                        f"label=com.docker.compose.service={service}",
                                        "--format", "{{.Names}}").split()
        return sorted(names)

    def one(self, service: str) -> str:
        names = self.containers(service)
        if not names:
            raise StackError(f"no container of {service} in project {self.name}")
        return names[0]

    def exec(self, service: str, *argv: str, timeout: float = 900, check: bool = True,
             stdin: str | None = None) -> str:
        return self.docker.docker("exec", "-i", self.one(service), *argv, timeout=timeout, check=check, stdin=stdin)

    def manage(self, service: str, *args: str, timeout: float = 900) -> str:
        return self.exec(service, "python", "manage.py", *args, timeout=timeout)

    def shell(self, service: str, code: str, timeout: float = 300) -> str:
        """Python run by ``manage.py shell`` in a container; its last line of output."""
        out = self.exec(service, "python", "manage.py", "shell", "--verbosity", "0", "-c", code, timeout=timeout)
        lines = out.strip().splitlines()
        return lines[-1] if lines else ""

    def state(self, service: str) -> str:
        return self.docker.docker("inspect", "-f", "{{.State.Status}} {{.State.ExitCode}} "
                                  "{{if .State.Health}}{{.State.Health.Status}}{{end}}",
                                  self.one(service), check=False).strip()

    def down(self) -> None:
        self.compose("down", "-v", "--remove-orphans", check=False, timeout=900)

    def logs(self, *services: str, tail: int | None = None) -> str:
        args = ["logs", "--no-color", *([f"--tail={tail}"] if tail else []), *services]
        return self.compose(*args, check=False, timeout=300)


#: Where the proxy keeps the root of its local CA (the CA that signs its certificate for localhost).
PROXY_CA = "/caddy/data/caddy/pki/authorities/local/root.crt"


def proxy_ca(project: Project, into: Path) -> Path:
    """The proxy's local CA root, copied to ``into`` for clients to verify the site with."""
    into.write_text(project.exec("proxy", "cat", PROXY_CA))
    return into


def wait_for(seconds: float, condition: Callable[[], bool], every: float = 2.0) -> bool:
    """Polls until the condition holds (True) or the time is up (False): states, never a fixed sleep."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if condition():
                return True
        except (StackError, OSError, ValueError, subprocess.TimeoutExpired):
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(every)


@dataclass
class Images:
    """The images a check or bench run uses and the compose files that name them."""

    mode: str
    base: str
    files: list[str]
    timings: list[tuple[str, float]] = field(default_factory=list)


def _registry_answers(docker: Docker) -> bool:
    for image in (BASE_STANDARD, *STANDARD_SERVICE_IMAGES):
        if docker.has_image(image):
            continue
        try:
            docker.docker("pull", "-q", image, timeout=300)
        except (StackError, subprocess.TimeoutExpired):
            return False
    return True


def build_service_images(docker: Docker, mode: str, rebuild_base: bool = False) -> Images:
    """The base (built from Debian packages where no registry answers), PostgreSQL and Redis where
    local, and the proxy; the app image is built apart (:func:`build_app_image`)."""
    if mode == "auto":
        mode = "standard" if _registry_answers(docker) else "local"
        why = "no registry answered: built from Debian packages" if mode == "local" else "the official ones"
        say(f"images: {mode} ({why})")
    if mode not in ("standard", "local"):
        raise StackError("MAGEBENCH_CHECK_IMAGES must be standard, local or auto")
    images = Images(mode=mode, base=BASE_STANDARD if mode == "standard" else BASE_LOCAL, files=list(CHECK_FILES))
    if mode == "local":
        images.files.append(LOCAL_IMAGES_FILE)
        if rebuild_base or not docker.has_image(BASE_LOCAL):
            started = time.monotonic()
            docker.run(str(ROOT / "docker" / "build-base"), BASE_LOCAL, env={"DOCKER": docker.path}, timeout=1800)
            images.timings.append(("base image build (mmdebstrap)", time.monotonic() - started))
        started = time.monotonic()
        for service in STANDARD_SERVICE_IMAGES:
            name = service.split(":")[0]
            docker.docker("build", "-q", "--build-arg", f"BASE={images.base}", "-f", f"docker/{name}.Dockerfile",
                          "-t", f"magebench-{service}", "docker", timeout=1800)
        images.timings.append(("PostgreSQL and Redis images build", time.monotonic() - started))
    started = time.monotonic()
    docker.docker("build", "-q", "--build-arg", f"BASE={images.base}", "-f", "docker/proxy.Dockerfile",
                  "-t", "magebench-proxy", "docker", timeout=1800)
    images.timings.append(("proxy image build (Caddy)", time.monotonic() - started))
    return images


def ca_bundle() -> str:
    """MAGEBENCH_CHECK_CA, else the system's bundle: given to pip in the build (a TLS-inspecting proxy)."""
    if "MAGEBENCH_CHECK_CA" in os.environ:
        return os.environ["MAGEBENCH_CHECK_CA"]
    system = Path("/etc/ssl/certs/ca-certificates.crt")
    return str(system) if system.exists() else ""


def build_app_image(docker: Docker, images: Images, tag: str, context: Path = ROOT, log: Path | None = None) -> str:
    """The app image from ``context`` (this checkout, or a worktree of an earlier release); how many
    of its steps came from the cache, for the report."""
    args = ["build", "--progress=plain", "--build-arg", f"BASE={images.base}", "-t", tag]
    if ca_bundle():
        args += ["--secret", f"id=ca,src={ca_bundle()}"]
    started = time.monotonic()
    done = subprocess.run([docker.path, *args, "."], cwd=context, env=docker.env, capture_output=True, text=True,
                          errors="replace", timeout=3600)
    output = done.stdout + done.stderr
    if log:
        log.write_text(output)
    if done.returncode != 0:
        raise StackError(f"the app image {tag} did not build:\n{output[-4000:]}")
    cached = sum(1 for line in output.splitlines() if line.startswith("#") and line.endswith(" CACHED"))
    what = f"app image {tag} build ({cached} steps cached)"
    images.timings.append((what, time.monotonic() - started))
    return what
