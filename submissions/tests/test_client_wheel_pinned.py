"""The client's wheel is served only as it was built: a request never builds it, a wheel whose bytes
changed after its build is refused, and every install line carries the digest of what is served."""
from __future__ import annotations

import hashlib
import re
import shutil
import subprocess

import pytest
from django.conf import settings
from django.urls import reverse

from submissions import client_wheel
from submissions.client_wheel import wheel_name, wheel_path

pytestmark = pytest.mark.django_db

INSTALL_LINE = re.compile(r"pip install (\S+/client/magebench_client-[^\s#]+\.whl)#sha256=([0-9a-f]{64})")


@pytest.fixture
def built_copy(settings, tmp_path, monkeypatch):
    """The session's build, copied to a folder of this test's own: the test may change its bytes."""
    shutil.copytree(settings.MAGEBENCH_CLIENT_WHEEL_DIR, tmp_path / "wheels")
    settings.MAGEBENCH_CLIENT_WHEEL_DIR = tmp_path / "wheels"
    monkeypatch.setattr(client_wheel, "_pinned", {})
    return wheel_path()


def test_the_served_wheel_s_sha256_is_the_one_on_every_install_line(built_copy, lab):
    served = lab.client.get(reverse("client-wheel", args=[wheel_name()]))
    assert served.status_code == 200
    digest = hashlib.sha256(served.content).hexdigest()
    pages = [lab.client.get(reverse("client-index")).content.decode(),
             lab.client.get(reverse("submit")).content.decode(), lab.client.get(reverse("upload")).content.decode()]
    for page in pages:
        lines = INSTALL_LINE.findall(page)
        assert lines and all(line_digest == digest for _, line_digest in lines), page


def test_a_wheel_whose_bytes_changed_after_its_build_is_refused_with_a_503(built_copy, client, caplog):
    url = reverse("client-wheel", args=[wheel_name()])
    assert client.get(url).status_code == 200
    swapped = bytearray(built_copy.read_bytes())
    swapped[-100] ^= 0xFF
    built_copy.write_bytes(bytes(swapped))
    # The digest beside it rewritten too: the one read at the first request stays the reference.
    built_copy.with_name(built_copy.name + ".sha256").write_text(hashlib.sha256(swapped).hexdigest())
    refused = client.get(url)
    assert refused.status_code == 503 and b"not the one that was built" in refused.content
    assert "refused" in caplog.text and bytes(swapped) not in refused.content


def test_a_request_never_builds_the_wheel_and_answers_503_until_a_build_exists(settings, tmp_path, monkeypatch,
                                                                                client):
    settings.MAGEBENCH_CLIENT_WHEEL_DIR = tmp_path / "empty"
    monkeypatch.setattr(client_wheel, "_pinned", {})

    def no_pip(*args, **kwargs):
        raise AssertionError(f"a request ran {args[0]}")

    monkeypatch.setattr(subprocess, "run", no_pip)
    response = client.get(reverse("client-wheel", args=[wheel_name()]))
    assert response.status_code == 503
    assert b"python manage.py build_client_wheel" in response.content
    assert not (tmp_path / "empty").exists()
    index = client.get(reverse("client-index")).content.decode()
    assert "#sha256=" not in index


def test_the_wheel_folder_is_outside_the_data_directory_by_default():
    assert not settings.MAGEBENCH_CLIENT_WHEEL_DIR.resolve().is_relative_to(settings.DATA_DIR.resolve())


def test_without_a_build_the_wheel_s_address_tells_how_to_build_it_and_builds_nothing(settings, tmp_path,
                                                                                     monkeypatch, client):
    settings.MAGEBENCH_CLIENT_WHEEL_DIR = tmp_path / "wheels"
    (tmp_path / "wheels").mkdir()
    monkeypatch.setattr(client_wheel, "_pinned", {})
    for _ in range(2):
        response = client.get(reverse("client-wheel", args=[wheel_name()]))
        assert response.status_code == 503
        assert response["Content-Type"].startswith("text/plain")
        assert "python manage.py build_client_wheel" in response.content.decode()
    assert list((tmp_path / "wheels").rglob("*")) == []
