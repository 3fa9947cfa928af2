"""The command-line client installs into an empty virtualenv, from the repository's client/ folder and
from the wheel the site serves, and its `magebench` command then talks to the live site."""
from __future__ import annotations

import hashlib
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import requests
from django.urls import reverse

from conftest import ROOT
from submissions.client_wheel import wheel_name

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

CLIENT = ROOT / "client"


def _venv(path: Path) -> Path:
    """An empty virtualenv (pip only, no site packages): its bin folder."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=120)
    bin_dir = path / "bin"
    listed = subprocess.run([bin_dir / "python", "-m", "pip", "list", "--format=freeze"], capture_output=True,
                            text=True, check=True, timeout=120).stdout
    assert "requests" not in listed and "magebench" not in listed
    return bin_dir


def _pip_install(bin_dir: Path, what: str) -> None:
    # requests and its dependencies come from the machine's package index (pip's configuration).
    done = subprocess.run([bin_dir / "python", "-m", "pip", "install", "-q", what], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def _magebench(bin_dir: Path, *args: str, token: str = "") -> subprocess.CompletedProcess[str]:
    # Run from an empty folder with a clean environment: nothing of the checkout is importable.
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "MAGEBENCH_TOKEN": token, "HOME": str(bin_dir.parent)}
    return subprocess.run([bin_dir / "magebench", *args], capture_output=True, text=True, timeout=120, env=env,
                          cwd=bin_dir.parent)


def _works(bin_dir: Path, url: str, token: str) -> None:
    helped = _magebench(bin_dir, "--help")
    assert helped.returncode == 0, helped.stderr
    assert "usage: magebench" in helped.stdout and "export" in helped.stdout and "submit-endpoint" in helped.stdout
    me = _magebench(bin_dir, "--url", url, "me", token=token)
    assert me.returncode == 0, me.stderr
    assert "user ada · token read-only" in me.stdout and "Lab (lab), owner" in me.stdout
    # The module form keeps working too, and imports nothing of the site.
    module = subprocess.run([bin_dir / "python", "-c", "import magebench_client.cli as c, sys; "
                             "print(c.__file__); print(any(m.startswith('django') for m in sys.modules))"],
                            capture_output=True, text=True, timeout=60, cwd=bin_dir.parent)
    where, django_loaded = module.stdout.split()
    assert where.startswith(str(bin_dir.parent)) and django_loaded == "False"


def test_the_client_declares_requests_as_its_only_dependency_and_a_magebench_command():
    project = tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]
    assert [dep.split(">")[0].split("=")[0] for dep in project["dependencies"]] == ["requests"]
    assert project["scripts"] == {"magebench": "magebench_client.cli:main"}


def test_pip_install_of_the_client_folder_into_an_empty_virtualenv_gives_a_working_command(live_server, lab,
                                                                                            tmp_path):
    bin_dir = _venv(tmp_path / "venv")
    _pip_install(bin_dir, str(CLIENT))
    _works(bin_dir, live_server.url, lab.read_token)


def test_the_site_serves_the_clients_wheel_and_pip_installs_it_from_its_url(live_server, lab, tmp_path):
    index = requests.get(f"{live_server.url}/client/", timeout=60)
    url = f"{live_server.url}{reverse('client-wheel', args=[wheel_name()])}"
    assert index.status_code == 200 and f"pip install {url}#sha256=" in index.text
    install_line = index.text.split("pip install ", 1)[1].split()[0]

    wheel = requests.get(url, timeout=300)
    assert wheel.status_code == 200, wheel.text
    (tmp_path / wheel_name()).write_bytes(wheel.content)
    archive = zipfile.ZipFile(tmp_path / wheel_name())
    metadata = next(archive.read(n).decode() for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    assert "Requires-Dist: requests" in metadata
    assert {"magebench_client/cli.py", "magebench_client/csv_safe.py"} <= set(archive.namelist())
    assert requests.get(f"{live_server.url}/client/magebench_client-0.0.1-py3-none-any.whl", timeout=60
                        ).status_code == 404

    assert install_line == f"{url}#sha256={hashlib.sha256(wheel.content).hexdigest()}"
    bin_dir = _venv(tmp_path / "venv")
    # pip checks the download against the line's digest.
    _pip_install(bin_dir, install_line)
    _works(bin_dir, live_server.url, lab.read_token)


def test_the_submit_and_upload_pages_show_how_to_install_the_client(lab):
    for page in ("submit", "upload"):
        html = lab.client.get(reverse(page)).content.decode()
        assert f"pip install http://testserver/client/{wheel_name()}#sha256=" in html
        assert "pip install ./client" in html and "magebench me" in html

