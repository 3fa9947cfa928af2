"""HTTP(S) to the stack from the host, verified against the proxy's local CA, redirects not followed."""
from __future__ import annotations

import http.client
import json
import secrets
import socket
import ssl
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass
class Site:
    """One base URL (``https://localhost:18443``) and what every request carries."""

    base: str
    cafile: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 60

    def _connection(self) -> http.client.HTTPConnection:
        parts = urlsplit(self.base)
        host, port = parts.hostname or "localhost", parts.port
        if parts.scheme == "https":
            context = ssl.create_default_context(cafile=self.cafile)
            return http.client.HTTPSConnection(host, port, timeout=self.timeout, context=context)
        return http.client.HTTPConnection(host, port, timeout=self.timeout)

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> Response:
        connection = self._connection()
        try:
            connection.request(method, urlsplit(self.base).path.rstrip("/") + path, body=body,
                               headers={**self.headers, **(headers or {})})
            answer = connection.getresponse()
            return Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read())
        finally:
            connection.close()

    def declared_body(self, method: str, path: str, length: int, content_type: str) -> int:
        """Sends a request's line and headers declaring a body of ``length`` bytes, none of the body, and
        returns the status of the answer: a proxy that caps bodies answers before reading one."""
        parts = urlsplit(self.base)
        host, port = parts.hostname or "localhost", parts.port or 443
        context = ssl.create_default_context(cafile=self.cafile)
        with socket.create_connection((host, port), timeout=self.timeout) as raw, \
                context.wrap_socket(raw, server_hostname=host) as tls:
            head = (f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: {content_type}\r\n"
                    f"Content-Length: {length}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in self.headers.items())
                    + "\r\n")
            tls.sendall(head.encode())
            status_line = tls.makefile("rb").readline().decode("latin-1")
        return int(status_line.split()[1])

    def get(self, path: str, **headers: str) -> Response:
        return self.request("GET", path, headers=headers)

    def post_json(self, path: str, data: Any) -> Response:
        return self.request("POST", path, json.dumps(data).encode(), {"Content-Type": "application/json"})

    def post_form(self, path: str, fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> Response:
        boundary = secrets.token_hex(16)
        parts: list[bytes] = []
        for name, value in fields.items():
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
        for name, (filename, content) in files.items():
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                         "Content-Type: application/octet-stream\r\n\r\n".encode() + content + b"\r\n")
        parts.append(f"--{boundary}--\r\n".encode())
        content_type = f"multipart/form-data; boundary={boundary}"
        return self.request("POST", path, b"".join(parts), {"Content-Type": content_type})

    def with_token(self, token: str) -> Site:
        return Site(self.base, self.cafile, {**self.headers, "Authorization": f"Bearer {token}"}, self.timeout)
