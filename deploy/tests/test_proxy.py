"""The proxy's configuration (docker/proxy/Caddyfile) run by Debian's Caddy, the one its image
installs, in front of a server that echoes what it receives."""
from __future__ import annotations

import http.client
import http.server
import json
import os
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CADDYFILE = ROOT / "docker" / "proxy" / "Caddyfile"
BODY_MAX = 4096


class Echo(http.server.BaseHTTPRequestHandler):
    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        data = json.dumps({"path": self.path, "headers": dict(self.headers.items()), "body_bytes": len(body)}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Proxy:
    http_port: int
    https_port: int
    cafile: Path

    def https(self, method: str, path: str, body: bytes | None = None,
              headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        context = ssl.create_default_context(cafile=str(self.cafile))
        connection = http.client.HTTPSConnection("localhost", self.https_port, context=context, timeout=30)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            answer = connection.getresponse()
            return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
        finally:
            connection.close()


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    work = tmp_path_factory.mktemp("proxy")
    static = work / "staticfiles"
    (static / "css").mkdir(parents=True)
    (static / "css" / "site.0123456789ab.css").write_text("body{}")
    (static / "robots.txt").write_text("plain")
    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    ports = _free_port(), _free_port()
    env = {**os.environ, "DOMAIN": "localhost", "XDG_DATA_HOME": str(work / "data"),
           "XDG_CONFIG_HOME": str(work / "config"), "MAGEBENCH_PROXY_HTTP_PORT": str(ports[0]),
           "MAGEBENCH_PROXY_HTTPS_PORT": str(ports[1]), "MAGEBENCH_PROXY_BODY_MAX": str(BODY_MAX),
           "MAGEBENCH_PROXY_UPSTREAM": f"127.0.0.1:{upstream.server_address[1]}",
           "MAGEBENCH_PROXY_STATIC_ROOT": str(static)}
    caddy = subprocess.Popen(["caddy", "run", "--config", str(CADDYFILE), "--adapter", "caddyfile"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    found = Proxy(ports[0], ports[1], work / "data" / "caddy" / "pki" / "authorities" / "local" / "root.crt")
    deadline = time.monotonic() + 120
    while True:
        try:
            if found.cafile.exists() and found.https("GET", "/")[0] == 200:
                break
        except (OSError, ssl.SSLError):
            pass
        assert caddy.poll() is None, caddy.stderr.read().decode()[-2000:] if caddy.stderr else "caddy exited"
        assert time.monotonic() < deadline, "the proxy did not answer over HTTPS"
        time.sleep(0.2)
    yield found
    caddy.terminate()
    caddy.wait(30)
    upstream.shutdown()


def test_it_serves_https_with_a_certificate_from_its_local_ca(proxy: Proxy):
    status, _, body = proxy.https("GET", "/boards/")
    assert status == 200 and json.loads(body)["path"] == "/boards/"


def test_it_sends_plain_http_to_https(proxy: Proxy):
    connection = http.client.HTTPConnection("127.0.0.1", proxy.http_port, timeout=30)
    connection.request("GET", "/boards/?x=1", headers={"Host": "localhost"})
    answer = connection.getresponse()
    assert answer.status == 308
    # In the stack the proxy's 443 is the published one: the redirect names no port.
    assert answer.getheader("Location") == "https://localhost/boards/?x=1"


def test_it_replaces_the_forwarded_headers_a_client_sends(proxy: Proxy):
    _, _, body = proxy.https("GET", "/", headers={"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "http",
                                                  "X-Forwarded-Host": "evil.example"})
    seen = json.loads(body)["headers"]
    assert seen["X-Forwarded-For"] == "127.0.0.1"
    assert seen["X-Forwarded-Proto"] == "https"
    assert seen["X-Forwarded-Host"] == f"localhost:{proxy.https_port}"


def test_it_refuses_a_body_above_the_cap_before_the_site_reads_it(proxy: Proxy):
    status, headers, _ = proxy.https("POST", "/api/v1/uploads/", b"x" * (BODY_MAX + 1))
    assert status == 413 and headers["server"] == "Caddy"
    status, _, body = proxy.https("POST", "/api/v1/uploads/", b"x" * BODY_MAX)
    assert status == 200 and json.loads(body)["body_bytes"] == BODY_MAX


def test_it_keeps_metrics_and_health_answers_inside_the_stack(proxy: Proxy):
    for path in ("/metrics", "/metrics/", "/-/ready", "/-/live"):
        status, headers, _ = proxy.https("GET", path)
        assert (path, status, headers["server"]) == (path, 404, "Caddy")
    status, _, _ = proxy.https("GET", "/-/ready", headers={"Authorization": "Bearer anything"})
    assert status == 404


def test_it_passes_a_scrape_with_a_bearer_token_on_for_the_site_to_check(proxy: Proxy):
    status, _, body = proxy.https("GET", "/metrics", headers={"Authorization": "Bearer t0ken"})
    assert status == 200 and json.loads(body)["headers"]["Authorization"] == "Bearer t0ken"


def test_it_serves_static_files_hashed_ones_cached_for_a_year(proxy: Proxy):
    status, headers, body = proxy.https("GET", "/static/css/site.0123456789ab.css")
    assert (status, body) == (200, b"body{}")
    assert headers["cache-control"] == "public, max-age=31536000, immutable"
    status, headers, _ = proxy.https("GET", "/static/robots.txt")
    assert status == 200 and headers["cache-control"] == "public, max-age=3600"
    # A climbing path is cleaned first: it names no file outside the static folder.
    assert b"root:" not in proxy.https("GET", "/static/../../etc/passwd")[2]
