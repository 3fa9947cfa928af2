"""The command-line client as a wheel the site serves, so that a submitter installs it with
``pip install https://<site>/client/magebench_client-<version>-py3-none-any.whl#sha256=<digest>``.

The wheel is built from the checkout's client/ folder (client/pyproject.toml) by pip itself, by
``manage.py build_client_wheel`` when the image is built (or the demo starts, or the test session
starts), never by a request. It is written to MAGEBENCH_CLIENT_WHEEL_DIR, outside the data directory
that the web process and every worker may write, in a folder named by a digest of the client's
files, with the wheel's sha256 beside it. A request serves the wheel only when the digest of the
bytes it is about to send equals that recorded one (read once per process, as the web process
starts: apps.py), and every install line
carries it, so a wheel swapped after the build is refused by the site and by pip alike.
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
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse

logger = logging.getLogger(__name__)

CLIENT_DIR = Path(settings.BASE_DIR) / "client"
#: How long pip may take to build the wheel.
BUILD_TIMEOUT = 120

#: The recorded digest of each wheel this process has read, by path: a later change to the file
#: beside the wheel cannot make a swapped wheel pass.
_pinned: dict[str, str] = {}


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


def wheel_path() -> Path:
    return Path(settings.MAGEBENCH_CLIENT_WHEEL_DIR) / sources_digest() / wheel_name()


def _digest_path(wheel: Path) -> Path:
    return wheel.with_name(wheel.name + ".sha256")


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
        # The digest is written first and each file moved into place whole: a reader finds either
        # no wheel, or a wheel with its digest.
        for path, data in ((_digest_path(target), hashlib.sha256(built.read_bytes()).hexdigest().encode()),
                           (target, built.read_bytes())):
            partial = path.with_name(path.name + ".part")
            partial.write_bytes(data)
            partial.replace(path)


def build_client_wheel() -> Path:
    """The client's current wheel, built now unless an earlier build of the same sources exists."""
    target = wheel_path()
    if target.is_file() and _digest_path(target).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # One build at a time (parallel test processes); the others find the wheel once it is there.
    with (target.parent / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target.is_file() and _digest_path(target).is_file()):
            _build(target)
    return target


def pinned_digest() -> str | None:
    """The sha256 recorded when the current wheel was built, or None when it has not been built."""
    target = wheel_path()
    key = str(target)
    if key not in _pinned:
        try:
            recorded = _digest_path(target).read_text().strip()
        except OSError:
            return None
        _pinned[key] = recorded
    return _pinned[key]


def client_wheel_url(request: HttpRequest) -> str:
    """The wheel's address for ``pip install``, with the digest pip checks the download against."""
    url = request.build_absolute_uri(reverse("client-wheel", args=[wheel_name()]))
    digest = pinned_digest()
    return f"{url}#sha256={digest}" if digest else url


def _unavailable(reason: str, *, how: str = "install it from a checkout of the site with: pip install ./client"
                 ) -> HttpResponse:
    return HttpResponse(f"The client's wheel is {reason}; {how}\n", status=503,
                        content_type="text/plain; charset=utf-8")


def client_wheel(request: HttpRequest, name: str) -> HttpResponse:
    """The wheel of the client's current version, only as built; any other name is a 404."""
    if name != wheel_name():
        raise Http404(f"the client's wheel is {wheel_name()}")
    expected = pinned_digest()
    if expected is None:
        logger.error("the client's wheel is not built: run manage.py build_client_wheel (%s)", wheel_path())
        # Building is for the image, the demo's start or an operator, never a web process: pip here
        # would hold a web worker for up to BUILD_TIMEOUT seconds per request.
        return _unavailable("not built on this site", how="the site's operator builds it with: "
                            "python manage.py build_client_wheel (or install the client from a checkout: "
                            "pip install ./client)")
    try:
        # Read whole (tens of kilobytes), so the bytes checked are the bytes sent.
        data = wheel_path().read_bytes()
    except OSError as exc:
        logger.error("the client's wheel cannot be read: %s", exc)
        return _unavailable("not available right now")
    served = hashlib.sha256(data).hexdigest()
    if served != expected:
        logger.error("the client's wheel %s has sha256 %s, not the %s recorded at its build: refused",
                     wheel_path(), served, expected)
        return _unavailable("not the one that was built, and is not served")
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def client_index(request: HttpRequest) -> HttpResponse:
    """A plain-text pointer to the wheel, with the command that installs it (what pip's users read)."""
    url = client_wheel_url(request)
    return HttpResponse(f"The MageBench command-line client {client_version()} (needs Python 3.11+ and requests):\n\n"
                        f"    pip install {url}\n\nthen: magebench --help\n", content_type="text/plain; charset=utf-8")
