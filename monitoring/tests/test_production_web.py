"""The web process as the Dockerfile runs it in production (gunicorn, three workers): its probes and
scrapes over plain HTTP from inside the stack, and metrics summed over all its worker processes."""
from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

from bench._abuse.stack import gunicorn_command

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    # A redirect is an answer here, not something to follow.
    opener = urllib.request.build_opener(type("NoRedirect", (urllib.request.HTTPRedirectHandler,),
                                              {"redirect_request": lambda *args, **kwargs: None}))
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.fixture
def production_web(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    port = _free_port()
    db = connection.settings_dict
    metrics_dir = tmp_path / "prometheus"
    metrics_dir.mkdir()
    (metrics_dir / "counter_1.db").write_bytes(b"left by an earlier run")
    env = {
        **os.environ, "MAGEBENCH_ENV": "production", "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DJANGO_SECRET_KEY": "monitoring-test-secret-key-not-for-any-real-site-0123456789",
        "FIELD_ENCRYPTION_KEY": base64.urlsafe_b64encode(b"monitoring test key".ljust(32, b".")).decode(),
        "DJANGO_ALLOWED_HOSTS": "board.example.org", "MAGEBENCH_NUM_PROXIES": "1",
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "MAGEBENCH_DATA_DIR": str(tmp_path / "data"), "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        "MAGEBENCH_LOG_FORMAT": "json",
    }
    env.pop("MAGEBENCH_TEST_PROCESS_OF", None)
    log = (tmp_path / "gunicorn.log").open("w")
    web = subprocess.Popen(gunicorn_command(port), cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                           start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert web.poll() is None, (tmp_path / "gunicorn.log").read_text()[-3000:]
            try:
                if _get(f"{base}/-/live", Host="web:8000")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "gunicorn did not answer"
            time.sleep(0.3)
        yield base, metrics_dir, tmp_path / "gunicorn.log"
    finally:
        os.killpg(web.pid, signal.SIGTERM)
        web.wait(timeout=30)
        log.close()


def test_the_production_web_process_answers_probes_and_scrapes_over_plain_http_and_sums_its_workers(production_web):
    base, metrics_dir, log = production_web
    assert not (metrics_dir / "counter_1.db").exists()  # emptied as gunicorn started
    assert _get(f"{base}/-/ready", Host="web:8000") == (
        200, '{"status": "ok", "checks": {"database": "ok", "broker": "ok"}, "failed": []}')
    # Every other request still goes through host validation and the HTTPS redirect.
    assert _get(f"{base}/queue/", Host="web:8000")[0] == 400
    for _ in range(9):
        assert _get(f"{base}/queue/", Host="board.example.org")[0] == 301
    # Scrapes land on any of the three workers; each sums what all of them counted.
    line = 'magebench_http_responses_total{method="GET",route="unmatched",status_class="3xx"} 9.0'
    for _ in range(6):
        status, text = _get(f"{base}/metrics", Host="web:8000")
        assert status == 200 and line in text.splitlines()
    assert len(list(metrics_dir.glob("counter_*.db"))) >= 1
    # From outside, through the proxy, without the token: nothing.
    assert _get(f"{base}/metrics", Host="board.example.org", **{"X-Forwarded-For": "203.0.113.9",
                                                                "X-Forwarded-Proto": "https"}) == (403, "Forbidden\n")
    # Production's log lines, gunicorn's own included, are JSON objects.
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert any(line["logger"] == "gunicorn.error" and line["message"].startswith("Booting worker") for line in lines)
    assert any(line["logger"] == "django.security.DisallowedHost" for line in lines)
