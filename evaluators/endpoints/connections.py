"""Connections that go only where the address policy allows, under one deadline per request.

Every socket goes to an address resolved and checked against the request's
:class:`~evaluators.endpoints.address.AddressPolicy`, never to a fresh lookup of the name, and every
connection a request uses is hung up when that request's deadline passes.
"""
from __future__ import annotations

import contextlib
import contextvars
import socket
import threading
import time
from typing import Any

import requests
import requests.adapters
import urllib3.connection
import urllib3.connectionpool
import urllib3.exceptions

from evaluators.endpoints.address import AddressPolicy, resolve_checked

_CURRENT_DEADLINE: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar(
    "endpoint_deadline", default=None
)


class Deadline:
    """One request's deadline and address policy, for the connections made while it runs.

    Socket timeouts bound each wait for data, not the whole: an endpoint sending one byte just
    before each timeout could hold a worker indefinitely. When the deadline passes, a timer shuts
    down every connection the request used, which ends whatever read or write is blocked on it.
    """

    def __init__(self, seconds: float, policy: AddressPolicy) -> None:
        self.policy = policy
        self.at = time.monotonic() + seconds
        self.expired = False
        self._connections: list[urllib3.connection.HTTPConnection] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._token: contextvars.Token[Deadline | None] | None = None

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def watch(self, connection: urllib3.connection.HTTPConnection) -> None:
        with self._lock:
            if connection not in self._connections:
                self._connections.append(connection)
            expired = self.expired
        if expired:
            _hang_up(connection)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            connections = list(self._connections)
        for connection in connections:
            _hang_up(connection)

    def __enter__(self) -> Deadline:
        self._token = _CURRENT_DEADLINE.set(self)
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()
        if self._token is not None:
            _CURRENT_DEADLINE.reset(self._token)


def _current_deadline() -> Deadline:
    deadline = _CURRENT_DEADLINE.get()
    if deadline is None:
        # Only Transport.request uses these connections; anything else has no policy to apply.
        raise RuntimeError("an endpoint connection was opened outside a client request")
    return deadline


def _hang_up(connection: urllib3.connection.HTTPConnection) -> None:
    sock = connection.sock
    if sock is None:
        return
    # The plain socket's shutdown, also for a TLS socket: it acts on the descriptor and wakes a
    # read blocked in another thread without touching the TLS state that read is using.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _connect_checked(connection: urllib3.connection.HTTPConnection) -> socket.socket:
    """Resolve the host once, check every address, and connect to a checked one.

    The socket goes to the address checked here, never to a fresh lookup of the name, so a name
    cannot answer one way for the check and another for the connection. The Host header and TLS
    (SNI and certificate) still use the name.
    """
    deadline = _current_deadline()
    host, port = connection._dns_host, int(connection.port or connection.default_port)
    try:
        infos = resolve_checked(host, port, deadline.policy, deadline.remaining())
    except socket.gaierror as exc:
        raise urllib3.exceptions.NameResolutionError(connection.host, connection, exc) from exc
    except TimeoutError as exc:
        raise urllib3.exceptions.ConnectTimeoutError(connection, "resolving the host name timed out") from exc
    last: OSError | None = None
    for family, kind, proto, _, address in infos:
        remaining = deadline.remaining()
        if remaining <= 0:
            break
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(remaining)
            for option in connection.socket_options or ():
                sock.setsockopt(*option)
            sock.connect(address)
        except OSError as exc:
            sock.close()
            last = exc
            continue
        return sock
    if last is None or isinstance(last, TimeoutError):
        raise urllib3.exceptions.ConnectTimeoutError(connection, "connecting timed out")
    raise urllib3.exceptions.NewConnectionError(connection, "Failed to establish a new connection") from last


class _Checked:
    """What both connection classes do besides urllib3's work: connect through the check, and put
    themselves under the deadline of the request that uses them."""

    sock: socket.socket | None

    def _new_conn(self) -> socket.socket:
        return _connect_checked(self)  # type: ignore[arg-type]

    def connect(self) -> None:
        _current_deadline().watch(self)  # type: ignore[arg-type]
        super().connect()  # type: ignore[misc]

    def request(self, *args: Any, **kwargs: Any) -> None:
        # A kept-alive connection is reused without connect(): this request must watch it too.
        _current_deadline().watch(self)  # type: ignore[arg-type]
        super().request(*args, **kwargs)  # type: ignore[misc]


class _CheckedHTTPConnection(_Checked, urllib3.connection.HTTPConnection):
    pass


class _CheckedHTTPSConnection(_Checked, urllib3.connection.HTTPSConnection):
    pass


class _CheckedHTTPPool(urllib3.connectionpool.HTTPConnectionPool):
    ConnectionCls = _CheckedHTTPConnection


class _CheckedHTTPSPool(urllib3.connectionpool.HTTPSConnectionPool):
    ConnectionCls = _CheckedHTTPSConnection


class _CheckedAdapter(requests.adapters.HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _CheckedHTTPPool, "https": _CheckedHTTPSPool}


def guarded_session() -> requests.Session:
    """A session whose connections are checked and watched by the deadline of their request."""
    session = requests.Session()
    # No proxy from the environment (it would resolve the name itself, unchecked) and no .netrc
    # credentials added to a stranger's host.
    session.trust_env = False
    adapter = _CheckedAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
