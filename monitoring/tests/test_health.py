"""/-/live and /-/ready: answered to a probe inside the stack, over plain HTTP, whatever its Host."""
from __future__ import annotations

import json
import socket
import time

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def production_like(settings) -> None:
    """What production runs behind its proxy: HTTPS only and one public host name."""
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.ALLOWED_HOSTS = ["board.example.org"]
    settings.DEBUG = False


def test_live_and_ready_answer_a_plain_http_probe_with_an_unknown_host_in_production(client, production_like):
    for path in ("/-/live", "/-/ready", "/-/live/", "/-/ready/"):
        response = client.get(path, HTTP_HOST="web:8000")
        assert response.status_code == 200, path
        assert response.json()["status"] == "ok"
    # Everything else is still refused on its host, and redirected to HTTPS on a known one.
    assert client.get("/queue/", HTTP_HOST="web:8000").status_code == 400
    redirect = client.get("/queue/", HTTP_HOST="board.example.org")
    assert redirect.status_code == 301 and redirect["Location"] == "https://board.example.org/queue/"


def test_metrics_answer_a_plain_http_scrape_of_web_8000_in_production(client, production_like):
    response = client.get("/metrics", HTTP_HOST="web:8000")
    assert response.status_code == 200 and b"magebench_attempts" in response.content


def test_ready_names_both_checks_when_all_answer(client):
    response = client.get("/-/ready")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}, "failed": []}
    assert response["Cache-Control"] == "no-store"


def test_ready_is_503_naming_the_broker_when_it_does_not_answer(client, settings):
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{_closed_port()}/0"
    started = time.monotonic()
    response = client.get("/-/ready")
    assert time.monotonic() - started < 5
    assert response.status_code == 503
    assert json.loads(response.content) == {"status": "unavailable", "failed": ["broker"],
                                            "checks": {"database": "ok", "broker": "unavailable"}}


def test_ready_is_503_naming_the_database_when_it_does_not_answer(client, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("moves the PostgreSQL connection's port")
    monkeypatch.setitem(connection.settings_dict, "PORT", str(_closed_port()))
    response = client.get("/-/ready")
    assert response.status_code == 503
    assert response.json()["failed"] == ["database"] and response.json()["checks"]["broker"] == "ok"


def test_live_answers_without_the_database(client, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("moves the PostgreSQL connection's port")
    monkeypatch.setitem(connection.settings_dict, "PORT", str(_closed_port()))
    assert client.get("/-/live").json() == {"status": "ok"}


def test_the_operators_paths_answer_only_reads(client):
    for path in ("/-/live", "/-/ready", "/metrics"):
        response = client.post(path)
        assert response.status_code == 405 and response["Allow"] == "GET, HEAD"
