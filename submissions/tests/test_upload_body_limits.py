"""Uploads are refused on their headers alone: who sends them and how large they say they are are
checked before one byte of the body is read, so no temporary file is ever written for them."""
from __future__ import annotations

import http.client
import io
import select
import socket
from pathlib import Path

import pytest
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.http.multipartparser import MultiPartParser
from django.urls import reverse

from submissions.middleware import UploadSizeLimitHandler

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

ANNOUNCED = 300 * 1024 * 1024
#: More than loopback's socket buffers hold: a client that got this far had its body read by the server.
READ_BY_THE_SERVER = 48 * 1024 * 1024
PIECE = b"0" * 65536
BOUNDARY = "magebench-test-boundary"


@pytest.fixture
def upload_temp_dir(settings, tmp_path) -> Path:
    folder = tmp_path / "upload-temp"
    folder.mkdir()
    settings.FILE_UPLOAD_TEMP_DIR = str(folder)
    settings.MEDIA_ROOT = tmp_path / "media"
    return folder


def _head(path: str, *, length: int | None = ANNOUNCED, **headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: localhost", f"Content-Type: multipart/form-data; boundary={BOUNDARY}",
             "Connection: close", *(f"{name}: {value}" for name, value in headers.items())]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    else:
        lines.append("Transfer-Encoding: chunked")
    part = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"runs.jsonl\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n")
    return ("\r\n".join(lines) + "\r\n\r\n" + part).encode()


def _send_until_answered(live_server, head: bytes) -> tuple[int, bytes, int]:
    """Send the headers, then the body piece by piece as fast as the server takes it, and stop as soon
    as an answer arrives. Returns the status, the answer's body and how many body bytes were sent."""
    with socket.create_connection((live_server.thread.host, live_server.thread.port), timeout=60) as sock:
        sock.sendall(head)
        sent = 0
        while True:
            # Waits for the server: either it answers, or it takes more of the body.
            readable, writable, _ = select.select([sock], [sock], [], 60)
            if readable:
                break
            assert writable, "the server neither answered nor read for 60 s"
            assert sent < READ_BY_THE_SERVER, f"the server read {sent} bytes of the body without answering"
            try:
                sent += sock.send(PIECE)
            except (BrokenPipeError, ConnectionResetError):
                break
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, response.read(), sent


def test_an_anonymous_upload_announcing_300_mb_is_refused_before_its_body_is_read(live_server, upload_temp_dir):
    status, body, sent = _send_until_answered(live_server, _head(reverse("api-upload")))
    assert status == 401, body
    assert b"token" in body and sent < READ_BY_THE_SERVER
    assert list(upload_temp_dir.iterdir()) == []


def test_a_teams_upload_over_the_size_limit_is_refused_with_413_before_its_body_is_read(live_server, lab,
                                                                                       upload_temp_dir, settings):
    status, body, sent = _send_until_answered(
        live_server, _head(reverse("api-upload"), Authorization=f"Bearer {lab.write_token}"))
    assert status == 413, body
    assert str(settings.MAGEBENCH_UPLOAD_MAX_BYTES).encode() in body and sent < READ_BY_THE_SERVER
    assert list(upload_temp_dir.iterdir()) == []


def test_the_upload_page_refuses_an_oversized_body_from_a_member_and_any_body_from_a_visitor(live_server, lab,
                                                                                            upload_temp_dir):
    session = f"sessionid={lab.client.cookies['sessionid'].value}"
    status, _, sent = _send_until_answered(live_server, _head(reverse("upload"), Cookie=session))
    assert status == 413 and sent < READ_BY_THE_SERVER
    status, _, sent = _send_until_answered(live_server, _head(reverse("upload")))
    assert status == 403 and sent < READ_BY_THE_SERVER
    assert list(upload_temp_dir.iterdir()) == []


def test_a_read_only_token_or_an_unknown_one_cannot_start_an_upload(live_server, lab, upload_temp_dir):
    for token, expected in ((lab.read_token, 403), ("mbw_nothing_here", 401)):
        status, body, sent = _send_until_answered(
            live_server, _head(reverse("api-upload"), length=10 * 1024 * 1024, Authorization=f"Bearer {token}"))
        assert status == expected, body
        assert sent < READ_BY_THE_SERVER
    assert list(upload_temp_dir.iterdir()) == []


def test_an_upload_without_a_content_length_is_refused_before_its_body_is_read(live_server, lab, upload_temp_dir):
    status, body, _ = _send_until_answered(
        live_server, _head(reverse("api-upload"), length=None, Authorization=f"Bearer {lab.write_token}"))
    assert status == 411, body
    assert list(upload_temp_dir.iterdir()) == []


def test_the_upload_handler_stops_reading_a_file_that_grows_past_the_limit(settings, tmp_path):
    settings.MAGEBENCH_UPLOAD_MAX_BYTES = 100_000
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # straight to a temporary file, as a large upload would go
    body = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"runs.jsonl\"\r\n\r\n".encode()
            + b"1" * 1_000_000 + f"\r\n--{BOUNDARY}--\r\n".encode())
    stream = io.BytesIO(body)
    meta = {"CONTENT_TYPE": f"multipart/form-data; boundary={BOUNDARY}", "CONTENT_LENGTH": str(len(body))}
    _, files = MultiPartParser(meta, stream, [UploadSizeLimitHandler(), TemporaryFileUploadHandler()]).parse()
    assert "file" not in files
    assert stream.tell() < len(body) // 2  # the rest of the body was never read
    assert list(tmp_path.iterdir()) == []


def test_a_file_check_is_judged_on_its_headers_like_an_upload_and_takes_a_read_only_token(live_server, lab,
                                                                                        upload_temp_dir, settings):
    path = reverse("api-upload-check")
    status, body, sent = _send_until_answered(live_server, _head(path))
    assert status == 401 and sent < READ_BY_THE_SERVER, body
    # Checking stores nothing, so a read-only token may ask; a file over the upload limit is still refused
    # with the upload's limit, not the 2.5 MB that caps every other request.
    status, body, sent = _send_until_answered(live_server, _head(path, Authorization=f"Bearer {lab.read_token}"))
    assert status == 413 and sent < READ_BY_THE_SERVER, body
    assert str(settings.MAGEBENCH_UPLOAD_MAX_BYTES).encode() in body
    assert list(upload_temp_dir.iterdir()) == []
