"""A scripted HTTP endpoint on 127.0.0.1 for the endpoint client's tests."""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: One answer: the status, the body (bytes, or a dict or list sent as JSON) and the headers.
Answer = tuple[int, Any, dict[str, str]]


class ScriptedServer:
    """Answers each request with the next scripted ``(status, body, headers)``; records requests.

    The last answer repeats; ``reason`` replaces the status line's standard phrase. A body given as
    a dict is sent as JSON; ``{auth}`` in a bytes body is replaced by the request's Authorization
    header, to play an endpoint that echoes it. ``answers`` may instead be a function of the
    recorded request, for a server whose answer depends on what it was asked.
    """

    def __init__(self, answers: list[tuple[int, Any, dict[str, str]]] | Callable[[dict[str, Any]], Answer], *,
                 reason: str | None = None) -> None:
        self.answers = answers
        self.requests: list[dict[str, Any]] = []
        script = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                script.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": dict(self.headers),
                        "json": json.loads(raw) if raw else None,
                    }
                )
                if callable(script.answers):
                    status, body, headers = script.answers(script.requests[-1])
                else:
                    index = min(len(script.requests), len(script.answers)) - 1
                    status, body, headers = script.answers[index]
                if isinstance(body, (dict, list)):
                    data = json.dumps(body).encode()
                else:
                    auth = self.headers.get("Authorization", "")
                    data = body.replace(b"{auth}", auth.encode())
                self.send_response(status, reason)
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = _serve
            do_POST = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def hits(self) -> int:
        return len(self.requests)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
