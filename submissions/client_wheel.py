"""The command-line client as a wheel the site serves, so that a submitter installs it with
``pip install https://<site>/client/magebench_client-<version>-py3-none-any.whl``.

The wheel is built from the checkout's client/ folder (client/pyproject.toml) by pip itself, on the
first request for it, and kept under the data directory in a folder named by a digest of the
client's files, so that a changed client is built again even when its version number stayed. The
build runs on a copy of the folder (setuptools writes its build/ and egg-info beside the sources) and
without build isolation, so it needs no package index.
"""
from __future__ import annotations

import fcntl
import hashlib
import logging
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from django.conf import settings
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.urls import reverse

logger = logging.getLogger(__name__)

CLIENT_DIR = Path(settings.BASE_DIR) / "client"
#: How long pip may take to build the wheel before the request gives up.
BUILD_TIMEOUT = 120


class WheelBuildFailed(Exception):
    """pip could not build the client's wheel: its last lines of output."""


def client_version() -> str:
    with (CLIENT_DIR / "pyproject.toml").open("rb") as file:
        return str(tomllib.load(file)["project"]["version"])


def wheel_name() -> str:
    """The file name pip gives the client's wheel (a pure-Python one, for any Python 3)."""
    return f"magebench_client-{client_version()}-py3-none-any.whl"


def sources_digest() -> str:
    """A digest of what goes into the wheel: the package's files and its pyproject.toml."""
    digest = hashlib.sha256()
    for path in [CLIENT_DIR / "pyproject.toml", *sorted((CLIENT_DIR / "magebench_client").rglob("*.py"))]:
        digest.update(path.relative_to(CLIENT_DIR).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def wheel_dir() -> Path:
    return Path(settings.DATA_DIR) / "client" / sources_digest()


def _build(target: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="magebench-client-") as tmp:
        source = Path(tmp) / "client"
        shutil.copytree(CLIENT_DIR, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        out = Path(tmp) / "dist"
        done = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
             "-w", str(out), str(source)], capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False)
        built = out / target.name
        if done.returncode != 0 or not built.is_file():
            raise WheelBuildFailed("\n".join((done.stderr or done.stdout).splitlines()[-5:]))
        # Moved into place whole: a reader never sees half a wheel.
        partial = target.with_suffix(".part")
        shutil.copyfile(built, partial)
        partial.replace(target)


def client_wheel_path() -> Path:
    """The client's current wheel, built now if no request has built it yet."""
    target = wheel_dir() / wheel_name()
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # One build at a time across the site's processes; the others find the wheel once it is there.
    with (target.parent / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.is_file():
            _build(target)
    return target


def client_wheel_url(request: HttpRequest) -> str:
    return request.build_absolute_uri(reverse("client-wheel", args=[wheel_name()]))


def client_wheel(request: HttpRequest, name: str) -> HttpResponse | FileResponse:
    """The wheel of the client's current version; any other name is a 404."""
    if name != wheel_name():
        raise Http404(f"the client's wheel is {wheel_name()}")
    try:
        path = client_wheel_path()
    except (WheelBuildFailed, OSError, subprocess.TimeoutExpired) as exc:
        # The operators see why in the log; the submitter can still install from a checkout.
        logger.error("the client's wheel could not be built: %s", exc)
        return HttpResponse("The client's wheel cannot be built right now; install it from a checkout of the site "
                            "with: pip install ./client\n", status=503, content_type="text/plain; charset=utf-8")
    return FileResponse(path.open("rb"), as_attachment=True, filename=name, content_type="application/zip")


def client_index(request: HttpRequest) -> HttpResponse:
    """A plain-text pointer to the wheel, with the command that installs it (what pip's users read)."""
    url = client_wheel_url(request)
    return HttpResponse(f"The MageBench command-line client {client_version()} (needs Python 3.11+ and requests):\n\n"
                        f"    pip install {url}\n\nthen: magebench --help\n", content_type="text/plain; charset=utf-8")
