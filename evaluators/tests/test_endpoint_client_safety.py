"""What a hostile endpoint cannot do to the client: redirect it, hold it, flood it, or be quoted.

Every server here is a real process-local server on 127.0.0.1.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import pytest

from evaluators.baselines.agents import IdleAgent
from evaluators.baselines.server import start_server
from evaluators.endpoints import (
    INVALID_REQUEST,
    INVALID_RESPONSE,
    REQUEST_TIMEOUT,
    SERVER_ERROR,
    ChatClient,
    InfraError,
    text_part,
)
from evaluators.endpoints.address import AddressPolicy
from evaluators.tests.scripted_server import ScriptedServer

SECRET = "sk-live-4f3e2d1c0b9a8877"
MESSAGES = [{"role": "user", "content": [text_part("# action?")]}]
STRICT = AddressPolicy.parse(allow_private=False)


def _ask(client: ChatClient) -> Any:
    return client.complete(MESSAGES, temperature=0.1, max_tokens=10)


class TricklingServer:
    """Accepts one connection at a time and sends its answer one byte every ``pause`` seconds.

    ``head`` is sent at once unless ``trickle_head`` is set; ``body_bytes`` bytes follow the head,
    one at a time. The server gives up after ``body_bytes`` bytes, so a client without a deadline
    is held about ``body_bytes × pause`` seconds.
    """

    def __init__(self, *, head: bytes, body_bytes: int, pause: float = 0.5, trickle_head: bool = False) -> None:
        self.head, self.body_bytes, self.pause, self.trickle_head = head, body_bytes, pause, trickle_head
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def _serve(self) -> None:
        self._listener.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                continue
            with conn:
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        received = b""
        try:
            while b"\r\n\r\n" not in received:
                received += conn.recv(65536)
            trickled = (self.head if self.trickle_head else b"") + b" " * self.body_bytes
            if not self.trickle_head:
                conn.sendall(self.head)
            for index in range(len(trickled)):
                if self._stop.wait(self.pause):
                    return
                conn.sendall(trickled[index:index + 1])
        except OSError:
            return  # the client hung up, which is what a deadline does

    def __enter__(self) -> TricklingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()


# --- one deadline for the whole request ----------------------------------------------------------


@pytest.mark.parametrize(("head", "body_bytes", "pause", "trickle_head"), [
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n",
                 40, 0.5, False, id="a body trickled one byte at a time"),
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"a" * 60 + b"\r\n\r\n",
                 0, 0.3, True, id="headers trickled one byte at a time"),
])
def test_an_answer_trickled_one_byte_at_a_time_fails_within_the_deadline(
        head: bytes, body_bytes: int, pause: float, trickle_head: bool) -> None:
    timeout = 1.5
    with TricklingServer(head=head, body_bytes=body_bytes, pause=pause, trickle_head=trickle_head) as server:
        client = ChatClient(server.url, "m", timeout=timeout, max_retries=0)
        started = time.monotonic()
        with pytest.raises(InfraError) as caught:
            _ask(client)
        elapsed = time.monotonic() - started
    assert caught.value.kind == REQUEST_TIMEOUT
    assert elapsed < timeout + 1.0, f"held for {elapsed:.1f}s with a {timeout}s deadline"


def test_a_body_larger_than_the_cap_is_refused_before_it_is_read() -> None:
    announced = b"x" * 5000
    with (
        ScriptedServer([(200, announced, {"Content-Type": "application/json"})]) as server,
        pytest.raises(InfraError) as caught,
    ):
        _ask(ChatClient(server.url, "m", max_retries=0, max_response_bytes=1000))
    assert caught.value.kind == INVALID_RESPONSE and "1000 bytes" in str(caught.value)


# --- redirects ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_reported_and_never_followed(status: int) -> None:
    with ScriptedServer([(200, b"{}", {})]) as target:
        location = f"http://127.0.0.1:{target.port}/v1/chat/completions"
        with ScriptedServer([(status, b"", {"Location": location})]) as redirecting:
            with pytest.raises(InfraError) as caught:
                _ask(ChatClient(redirecting.url, "m", max_retries=2))
            assert redirecting.hits == 1
        assert target.hits == 0
    assert caught.value.kind == INVALID_REQUEST and "redirects" in str(caught.value)


# --- addresses at connection time ----------------------------------------------------------------


def test_a_name_that_resolves_to_loopback_is_refused_at_connection_time() -> None:
    with start_server(IdleAgent()) as server:
        by_name = server.url.replace("127.0.0.1", "localhost")
        with pytest.raises(InfraError) as caught:
            _ask(ChatClient(by_name, "idle", policy=STRICT, max_retries=2))
        assert server.chat_requests == 0
    assert caught.value.kind == INVALID_REQUEST and caught.value.attempts == 1
    assert "not allowed" in str(caught.value)


@pytest.mark.parametrize("host", ["127.0.0.1", "[::ffff:127.0.0.1]"])
def test_a_loopback_address_is_refused_at_connection_time(host: str) -> None:
    with start_server(IdleAgent()) as server:
        with pytest.raises(InfraError) as caught:
            _ask(ChatClient(server.url.replace("127.0.0.1", host), "idle", policy=STRICT, max_retries=0))
        assert server.chat_requests == 0
    assert caught.value.kind == INVALID_REQUEST


@pytest.mark.parametrize("allowed", ["127.0.0.0/8", "localhost"])
def test_the_allow_list_lets_a_trusted_local_endpoint_through_at_connection_time(allowed: str) -> None:
    policy = AddressPolicy.parse(allow_private=False, allowed=[allowed])
    with start_server(IdleAgent()) as server:
        completion = _ask(ChatClient(server.url.replace("127.0.0.1", "localhost"), "idle", policy=policy))
    assert completion.text.endswith("# action")


# --- what is said about a failure ----------------------------------------------------------------


def test_an_html_error_page_is_never_quoted() -> None:
    page = (b"<html><body><h1>502 from internal-gateway.corp</h1><pre>DB_PASSWORD=hunter2\n"
            b"Traceback (most recent call last): /srv/app/secret_settings.py</pre></body></html>")
    with (
        ScriptedServer([(502, page, {"Content-Type": "text/html"})], reason="Bad Gateway at 10.1.2.3") as server,
        pytest.raises(InfraError) as caught,
    ):
        _ask(ChatClient(server.url, "m", max_retries=0))
    said = str(caught.value)
    assert caught.value.kind == SERVER_ERROR and "502" in said
    for leaked in ("internal-gateway", "hunter2", "Traceback", "secret_settings", "10.1.2.3", "<"):
        assert leaked not in said


def test_a_non_json_success_body_is_never_quoted() -> None:
    with (
        ScriptedServer([(200, b"<html>welcome to the admin console of intranet.corp</html>", {})]) as server,
        pytest.raises(InfraError) as caught,
    ):
        _ask(ChatClient(server.url, "m", max_retries=0))
    assert caught.value.kind == INVALID_RESPONSE and "intranet" not in str(caught.value)


def test_an_openai_error_message_is_kept_short_and_clean() -> None:
    message = "model \x1b[31mgpt-x\x1b[0m <b>not found</b>\r\nInjected: line " + "z" * 400
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()
    with (
        ScriptedServer([(404, body, {"Content-Type": "application/json"})]) as server,
        pytest.raises(InfraError) as caught,
    ):
        _ask(ChatClient(server.url, "m", max_retries=0))
    said = caught.value.message
    assert "model" in said and "gpt-x" in said and "not found" in said
    assert not any(ord(c) < 32 or ord(c) == 127 for c in said) and "<b>" not in said
    assert "z" * 130 not in said and len(said) < 200


def test_a_fragment_of_the_api_key_echoed_by_the_endpoint_is_not_repeated() -> None:
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {SECRET[:14]}****"}}).encode()
    with (
        ScriptedServer([(401, body, {"Content-Type": "application/json"})]) as server,
        pytest.raises(InfraError) as caught,
    ):
        _ask(ChatClient(server.url, "m", SECRET, max_retries=0))
    assert "Incorrect API key" in str(caught.value) and SECRET[:14] not in str(caught.value)


def test_secrets_in_a_stored_url_do_not_reach_the_error_message() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = ChatClient(f"http://ann:hunter2@127.0.0.1:{port}/v1?api-key=sk-url-secret", "m", max_retries=0)
    with pytest.raises(InfraError) as caught:
        _ask(client)
    said = f"{caught.value} {client!r}"
    assert "sk-url-secret" not in said and "hunter2" not in said



# --- TLS through the checked connection ----------------------------------------------------------


def _self_signed(tmp_path: Any) -> tuple[str, str]:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


def test_tls_to_a_checked_address_still_names_the_host_and_verifies_its_certificate(tmp_path: Any) -> None:
    import ssl

    cert, key = _self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    names: list[str | None] = []
    context.sni_callback = lambda sock, name, ctx: names.append(name)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        try:
            with context.wrap_socket(conn, server_side=True):
                pass
        except (ssl.SSLError, OSError):
            pass  # the client refuses the self-signed certificate
        finally:
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with pytest.raises(InfraError) as caught:
            _ask(ChatClient(f"https://localhost:{port}/v1", "m", max_retries=0, timeout=5))
        thread.join(timeout=5)
    finally:
        listener.close()
    assert names == ["localhost"]  # SNI carries the name, though the socket went to a checked address
    assert "certificate could not be verified" in str(caught.value)


def test_a_tls_handshake_that_never_completes_fails_within_the_deadline() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True)
    thread.start()
    timeout = 1.0
    try:
        client = ChatClient(f"https://127.0.0.1:{listener.getsockname()[1]}/v1", "m", timeout=timeout,
                            max_retries=0)
        started = time.monotonic()
        with pytest.raises(InfraError) as caught:
            _ask(client)
        elapsed = time.monotonic() - started
    finally:
        thread.join(timeout=5)
        for conn in accepted:
            conn.close()
        listener.close()
    assert caught.value.kind == REQUEST_TIMEOUT
    assert elapsed < timeout + 1.0
