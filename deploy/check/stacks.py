"""The check's compose projects: the previous release, this release, and a second host's workers."""
from __future__ import annotations

import base64
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from deploy.check.client import Site
from deploy.check.settings import Settings
from deploy.stack import LOCAL_IMAGES_FILE, Docker, Images, Project

CURRENT_IMAGE = "magebench:current"
#: The scrape token of the check's stack (a scraper outside the stack sends it).
METRICS_TOKEN = secrets.token_urlsafe(24)
PREVIOUS_IMAGE = "magebench:previous"
WORKERS_FILES = ("docker-compose.workers.yml", "docker/compose.workers.check.yml")


@dataclass
class Secrets:
    """What an operator of the previous release set by hand; this release adopts them."""

    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(48))
    field_key: str = field(default_factory=lambda: base64.urlsafe_b64encode(os.urandom(32)).decode())


def previous_project(docker: Docker, images: Images, settings: Settings, tree: Path, keys: Secrets) -> Project:
    files = ["docker-compose.yml", "docker/compose.check.yml"]
    if images.mode == "local":
        files.append(LOCAL_IMAGES_FILE)
    return Project(docker, settings.project, files, {
        "DJANGO_SECRET_KEY": keys.secret_key, "FIELD_ENCRYPTION_KEY": keys.field_key,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost", "MAGEBENCH_NUM_PROXIES": "1",
        "MAGEBENCH_WEB_PUBLISH": f"127.0.0.1:{settings.previous_port}",
        "MAGEBENCH_CHECK_AGENT_PORT": str(settings.agent_port)}, directory=tree)


def current_project(docker: Docker, images: Images, settings: Settings, backups: Path,
                    keys: Secrets | None = None) -> Project:
    """This release as an operator runs it: DOMAIN=localhost and the check's published ports. With
    ``keys``, the secrets come from the environment (an upgrade); without, from the secrets volume."""
    variables = {
        "DOMAIN": "localhost", "MAGEBENCH_IMAGE": CURRENT_IMAGE,
        "MAGEBENCH_HTTP_PUBLISH": f"127.0.0.1:{settings.http_port}",
        "MAGEBENCH_HTTPS_PUBLISH": f"127.0.0.1:{settings.https_port}",
        "MAGEBENCH_BACKUP_DIR": str(backups), "MAGEBENCH_CHECK_AGENT_PORT": str(settings.agent_port),
        "MAGEBENCH_METRICS_TOKEN": METRICS_TOKEN,
        "DJANGO_SECRET_KEY": keys.secret_key if keys else "", "FIELD_ENCRYPTION_KEY": keys.field_key if keys else ""}
    return Project(docker, settings.project, list(images.files), variables)


def workers_project(docker: Docker, settings: Settings, main: Project) -> Project:
    """A second host's workers, on this machine: the main stack's network and data volume joined."""
    read = {name: main.exec("web", "cat", f"/run/magebench-secrets/{name}").strip()
            for name in ("django_secret_key", "field_encryption_key")}
    return Project(docker, settings.workers_project, list(WORKERS_FILES), {
        "MAGEBENCH_DATABASE_URL": "postgres://magebench:magebench@postgres:5432/magebench",
        "MAGEBENCH_BROKER_URL": "redis://redis:6379/0", "MAGEBENCH_RESULT_URL": "redis://redis:6379/1",
        "MAGEBENCH_CACHE_URL": "redis://redis:6379/2",
        "DJANGO_SECRET_KEY": read["django_secret_key"], "FIELD_ENCRYPTION_KEY": read["field_encryption_key"],
        "MAGEBENCH_DATA_VOLUME": f"{settings.project}_data", "MAGEBENCH_JOIN_NETWORK": f"{settings.project}_default",
        "MAGEBENCH_WORKER_HOST": "second-host", "MAGEBENCH_IMAGE": CURRENT_IMAGE,
        "MAGEBENCH_CHECK_AGENT_PORT": str(settings.agent_port)})


def previous_site(settings: Settings) -> Site:
    # The previous release had no proxy in its stack: requests play it, as its own check did.
    return Site(f"http://127.0.0.1:{settings.previous_port}",
                headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "127.0.0.1"})


def current_site(settings: Settings, cafile: Path) -> Site:
    return Site(f"https://localhost:{settings.https_port}", cafile=str(cafile))
