"""A minimal OpenAI-compatible chat-completions server for the baseline agents.

It serves ``POST /v1/chat/completions`` (non-streaming) and ``GET /v1/models`` from the standard
library alone, so the demo and the tests talk to baselines exactly as the platform talks to a
team's endpoint. A :class:`Fault` makes it misbehave on purpose, to exercise the platform's
handling of infrastructure failures against a real socket.
"""
from __future__ import annotations

import contextlib
import json
import logging
import math
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evaluators.baselines.agents import BaselineAgent, message_image_urls, message_text

logger = logging.getLogger(__name__)

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
#: Requests carry a few 640-px frames; far larger bodies are a client bug, not a conversation.
MAX_REQUEST_BYTES = 64 * 1024 * 1024
#: What a vision model roughly bills for one image, so the usage numbers look plausible.
_TOKENS_PER_IMAGE = 85

FAULT_MODES = ("500", "429", "timeout", "garbage", "drop", "empty_choices", "rambling")
#: What a ``rambling`` fault answers: a well-formed completion holding no action, a model's failure
#: (the parser's to report), unlike the other modes, which are the infrastructure's.
RAMBLING_REPLY = "Let me look at the picture more carefully before deciding what to do."


@dataclass(frozen=True)
class Fault:
    """A way for the server to fail on chosen chat-completions requests.

    Requests are numbered from 1 in arrival order. With ``first_n`` only requests 1..N fail; with
    ``every_n`` only every N-th request fails; with both, only every N-th among the first N; with
    neither, all fail. ``delay`` is how long a ``timeout`` fault stalls before answering normally;
    the default outlasts the client's default 60 s timeout. ``retry_after`` is the header a
    ``429`` sends.
    """

    mode: str
    first_n: int | None = None
    every_n: int | None = None
    delay: float = 90.0
    retry_after: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in FAULT_MODES:
            raise ValueError(f"unknown fault mode {self.mode!r}; choose one of {FAULT_MODES}")
        for name in ("first_n", "every_n"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1")

    def applies_to(self, number: int) -> bool:
        if self.first_n is not None and number > self.first_n:
            return False
        return self.every_n is None or number % self.every_n == 0


@dataclass(frozen=True)
class Latency:
    """How long the server takes to answer, standing in for a real model's thinking time.

    Each chat-completions answer waits a duration drawn from a lognormal distribution whose mean is
    ``mean`` seconds and whose log has standard deviation ``spread``; the draws come from one
    generator seeded with ``seed``, in arrival order, so a run's sequence of waits repeats.
    """

    mean: float
    spread: float = 0.5
    seed: int | None = 0

    def __post_init__(self) -> None:
        if self.mean < 0 or self.spread < 0:
            raise ValueError("latency mean and spread cannot be negative")

    def sampler(self) -> Callable[[], float]:
        rng = random.Random(self.seed)
        lock = threading.Lock()
        # The lognormal's mean is exp(mu + sigma²/2): mu is chosen so that it is ``mean``.
        mu = math.log(self.mean) - self.spread ** 2 / 2 if self.mean > 0 else 0.0

        def draw() -> float:
            if self.mean == 0:
                return 0.0
            with lock:
                return rng.lognormvariate(mu, self.spread)

        return draw


class _BaselineHTTPServer(ThreadingHTTPServer):
    # Handler threads may be stalled by a timeout fault; they must not keep the process alive
    # or make shutdown wait for them.
    daemon_threads = True
    block_on_close = False

    def __init__(
        self,
        address: tuple[str, int],
        agent: BaselineAgent,
        api_key: str | None,
        fault: Fault | None,
        latency: Latency | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        super().__init__(address, _Handler)
        self.agent = agent
        self.api_key = api_key or None
        self.fault = fault
        self.delay = latency.sampler() if latency is not None else None
        # Requests beyond the limit wait for a free place, as a model server's queue makes them.
        self.places = threading.BoundedSemaphore(max_concurrency) if max_concurrency else None
        self.stopping = threading.Event()
        self._count_lock = threading.Lock()
        self.chat_requests = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.serving = 0
        self.most_serving = 0

    def next_request_number(self) -> int:
        with self._count_lock:
            self.chat_requests += 1
            return self.chat_requests

    def request_started(self) -> None:
        with self._count_lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)

    def request_ended(self) -> None:
        with self._count_lock:
            self.in_flight -= 1

    @contextlib.contextmanager
    def place(self) -> Iterator[None]:
        """Hold one of the server's places (waiting for one beyond ``max_concurrency``) for an answer."""
        if self.places is not None:
            self.places.acquire()
        with self._count_lock:
            self.serving += 1
            self.most_serving = max(self.most_serving, self.serving)
        try:
            yield
        finally:
            with self._count_lock:
                self.serving -= 1
            if self.places is not None:
                self.places.release()


class _Handler(BaseHTTPRequestHandler):
    server: _BaselineHTTPServer
    # Keep-alive, as real endpoints do, so clients reuse connections across a conversation.
    protocol_version = "HTTP/1.1"
    server_version = "MageBenchBaseline/1"
    # Headers and body go out in two writes; with Nagle on, the body waits for the client's delayed
    # ACK (about 40 ms a request), which the online flows would pay once per step.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        logger.debug("%s %s", self.address_string(), format % args)

    # -- routes -------------------------------------------------------------------------------

    def do_GET(self) -> None:
        if self._path() != MODELS_PATH:
            self._send_error(404, f"no route for GET {self._path()}", "not_found")
            return
        if not self._authorised():
            return
        self._send_json(
            200,
            {
                "object": "list",
                "data": [
                    {
                        "id": self.server.agent.name,
                        "object": "model",
                        "created": 0,
                        "owned_by": "magebench-baselines",
                    }
                ],
            },
        )

    def do_POST(self) -> None:
        body = self._read_body()
        if body is None:
            return
        if self._path() != CHAT_PATH:
            self._send_error(404, f"no route for POST {self._path()}", "not_found")
            return
        if not self._authorised():
            return
        number = self.server.next_request_number()
        self.server.request_started()
        try:
            with self.server.place():
                if self.server.delay is not None:
                    time.sleep(self.server.delay())
                fault = self.server.fault
                if fault is not None and fault.applies_to(number) and self._inject(fault, body):
                    return
                self._answer(body)
        finally:
            self.server.request_ended()

    # -- chat completions ---------------------------------------------------------------------

    def _answer(self, body: bytes, text: str | None = None) -> None:
        try:
            request = json.loads(body)
        except ValueError:
            self._send_error(400, "the request body is not valid JSON", "invalid_request_error")
            return
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            self._send_error(400, "'messages' must be a list", "invalid_request_error")
            return
        if request.get("stream"):
            self._send_error(400, "streaming is not supported", "invalid_request_error")
            return
        messages: Sequence[Any] = request["messages"]
        try:
            text = self.server.agent.reply(messages) if text is None else text
        except Exception:  # noqa: BLE001 - a crashing agent is a server error, as anywhere else
            logger.exception("baseline agent %s failed", self.server.agent.name)
            self._send_error(500, "the agent failed to answer", "server_error")
            return
        model = request.get("model")
        prompt_tokens = _rough_prompt_tokens(messages)
        completion_tokens = _rough_tokens(text)
        self._send_json(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model if isinstance(model, str) and model else self.server.agent.name,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _inject(self, fault: Fault, body: bytes) -> bool:
        """Misbehave as ``fault`` says; False when the request should then be answered."""
        if fault.mode == "500":
            self._send_error(500, "injected server error", "server_error")
        elif fault.mode == "429":
            self._send_error(
                429,
                "injected rate limit",
                "rate_limit_exceeded",
                headers={"Retry-After": f"{fault.retry_after:g}"},
            )
        elif fault.mode == "garbage":
            # A body cut short by a dropped proxy connection: worth asking again, unlike an HTML page.
            self._send_raw(200, b'{"id": "chatcmpl-cut", "object": "chat.completion", "choi', "application/json")
        elif fault.mode == "rambling":
            self._answer(body, RAMBLING_REPLY)
        elif fault.mode == "empty_choices":
            self._send_json(200, {"id": "chatcmpl-empty", "object": "chat.completion", "choices": []})
        elif fault.mode == "drop":
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
        elif fault.mode == "timeout":
            # Waiting on the stop event lets stop() end the stall at once.
            if self.server.stopping.wait(fault.delay):
                self.close_connection = True
                return True
            return False
        return True

    # -- plumbing -----------------------------------------------------------------------------

    def _path(self) -> str:
        path = self.path.split("?", 1)[0]
        return path.rstrip("/") or "/"

    def _authorised(self) -> bool:
        expected = self.server.api_key
        if expected is None:
            return True
        if self.headers.get("Authorization", "") == f"Bearer {expected}":
            return True
        self._send_error(401, "invalid or missing API key", "invalid_api_key")
        return False

    def _read_body(self) -> bytes | None:
        length_header = self.headers.get("Content-Length")
        if length_header is None:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                self.close_connection = True
                self._send_error(411, "chunked requests are not supported", "invalid_request_error")
                return None
            return b""
        try:
            length = int(length_header)
        except ValueError:
            self.close_connection = True
            self._send_error(400, "bad Content-Length", "invalid_request_error")
            return None
        if length < 0 or length > MAX_REQUEST_BYTES:
            # The body stays unread, so the connection cannot be reused.
            self.close_connection = True
            self._send_error(413, "the request body is too large", "invalid_request_error")
            return None
        return self.rfile.read(length)

    def _send_error(
        self, status: int, message: str, code: str, headers: dict[str, str] | None = None
    ) -> None:
        error_type = "server_error" if status >= 500 else "invalid_request_error"
        self._send_json(
            status, {"error": {"message": message, "type": error_type, "code": code}}, headers
        )

    def _send_json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self._send_raw(status, json.dumps(payload).encode("utf-8"), "application/json", headers)

    def _send_raw(
        self,
        status: int,
        body: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (e.g. after its timeout); nobody is left to tell.
            self.close_connection = True


def _rough_tokens(text: str) -> int:
    # About four characters per token for English text; enough for usage bookkeeping.
    return math.ceil(len(text) / 4)


def _rough_prompt_tokens(messages: Sequence[Any]) -> int:
    total = 0
    for message in messages:
        if isinstance(message, dict):
            total += 4 + _rough_tokens(message_text(message))
            total += _TOKENS_PER_IMAGE * len(message_image_urls(message))
    return total


# --------------------------------------------------------------------------------------------
# Running it
# --------------------------------------------------------------------------------------------


class RunningServer:
    """A server answering from a background thread; stop it (or use ``with``) when done."""

    def __init__(self, server: _BaselineHTTPServer, thread: threading.Thread) -> None:
        self._server = server
        self._thread = thread

    @property
    def host(self) -> str:
        return _public_host(str(self._server.server_address[0]))

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base URL a client is configured with (``…/v1``)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def chat_requests(self) -> int:
        """How many chat-completions requests reached the agent or a fault so far."""
        return self._server.chat_requests

    @property
    def most_in_flight(self) -> int:
        """The most chat-completions requests it was serving at one moment: how hard it was pushed."""
        return self._server.most_in_flight

    @property
    def most_serving(self) -> int:
        """The most requests it answered at one moment (at most its ``max_concurrency``; the rest waited)."""
        return self._server.most_serving

    def stop(self) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"RunningServer(url={self.url!r}, agent={self._server.agent.name!r})"


def _public_host(host: str) -> str:
    # A server bound to every interface is still reached through the loopback address locally.
    return "127.0.0.1" if host in ("", "0.0.0.0") else host


def start_server(
    agent: BaselineAgent,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    api_key: str | None = None,
    fault: Fault | None = None,
    latency: Latency | None = None,
    max_concurrency: int | None = None,
) -> RunningServer:
    """Serve ``agent`` from a background thread; port 0 picks a free port."""
    server = _BaselineHTTPServer((host, port), agent, api_key, fault, latency, max_concurrency)
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name=f"baseline-{agent.name}-{server.server_address[1]}",
        daemon=True,
    )
    thread.start()
    return RunningServer(server, thread)


def serve_forever(
    agent: BaselineAgent,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    api_key: str | None = None,
    fault: Fault | None = None,
    ready: Callable[[str], None] | None = None,
    latency: Latency | None = None,
    max_concurrency: int | None = None,
) -> None:
    """Serve ``agent`` in this thread until interrupted; ``ready`` receives the base URL."""
    server = _BaselineHTTPServer((host, port), agent, api_key, fault, latency, max_concurrency)
    url = f"http://{_public_host(str(server.server_address[0]))}:{server.server_address[1]}/v1"
    if ready is not None:
        ready(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping.set()
        server.server_close()
