"""Requests as a client behind the reverse proxy sees them (first byte, last byte, status, or how
the connection ended), and the web process's memory and the machine's load sampled meanwhile."""
from __future__ import annotations

import http.client
import json
import math
import os
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from bench._abuse.stack import PROXY_HEADERS

#: Bytes read from an answer at a time, and the most of a JSON answer kept when its body is not asked for.
READ = 64 * 1024
KEEP = 1024 * 1024
#: The longest Retry-After honoured while polling for a file being built, and the shortest.
MAX_RETRY_AFTER = 10.0
MIN_RETRY_AFTER = 0.2
#: What a polled resource's JSON ``status`` says while its work is not done.
PENDING = frozenset({"pending", "queued", "running", "building", "preparing", "started"})
#: Redirects and 202 polls followed before giving up.
MAX_HOPS = 200


@dataclass
class Answer:
    """One download as the client saw it. ``status`` is the final HTTP status, or how it failed."""

    status: str
    first_byte: float | None = None
    total: float = 0.0
    size: int = 0
    #: 202s answered before the file (a file built off the request path), and redirects followed.
    polls: int = 0
    redirects: int = 0
    body: bytes = b""

    @property
    def ok(self) -> bool:
        return self.status == "200"


def _retry_after(value: str | None) -> float:
    try:
        seconds = float(value) if value else 1.0
    except ValueError:
        seconds = 1.0
    return min(MAX_RETRY_AFTER, max(MIN_RETRY_AFTER, seconds))


def _one(port: int, method: str, path: str, headers: dict[str, str], body: bytes | None, deadline: float,
         keep: bool) -> tuple[int, dict[str, str], float, int, bytes]:
    """A single request: its status, headers, seconds to the answer's head, bytes read, and the body
    when ``keep`` (else read and dropped). Raises on a reset, a close mid-body or the deadline."""
    timeout = max(0.1, deadline - time.monotonic())
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    started = time.monotonic()
    try:
        connection.request(method, path, body=body, headers={"Host": "127.0.0.1", **PROXY_HEADERS, **headers})
        response = connection.getresponse()
        head = time.monotonic() - started
        size, kept = 0, []
        while chunk := response.read(READ):
            size += len(chunk)
            # A 202's body may name where the file will be, a polled resource's say it is pending:
            # JSON answers are kept (up to KEEP bytes) to be read.
            json_answer = response.getheader("Content-Type", "").startswith("application/json")
            if keep or response.status == 202 or (json_answer and size <= KEEP):
                kept.append(chunk)
            if time.monotonic() > deadline:
                raise TimeoutError("deadline passed while reading the body")
        return response.status, {k.lower(): v for k, v in response.getheaders()}, head, size, b"".join(kept)
    finally:
        connection.close()


#: Where a 202's JSON body may say the file will be, when no Location header does.
URL_KEYS = ("location", "url", "download_url", "download", "href", "poll_url", "status_url")


def _named_url(body: bytes) -> str:
    """A local path or URL a 202's JSON body names under one of URL_KEYS, or ""."""
    try:
        found = json.loads(body)
    except ValueError:
        return ""
    if not isinstance(found, dict):
        return ""
    for key in URL_KEYS:
        value = found.get(key)
        if isinstance(value, str) and value.startswith(("/", "http://", "https://")):
            return value
    return ""


def _path_of(url: str) -> str:
    location = urllib.parse.urlsplit(url)
    return location.path + (f"?{location.query}" if location.query else "")


def _as_get(headers: dict[str, str]) -> dict[str, str]:
    """The headers of a follow-up GET: the credentials and the proxy's, none describing the first body."""
    return {key: value for key, value in headers.items() if key.lower() not in ("content-type", "content-length")}


def _pending(body: bytes) -> bool:
    """Whether a polled resource says its work is not done yet (a stored check still ``pending``)."""
    try:
        found = json.loads(body)
    except ValueError:
        return False
    return isinstance(found, dict) and str(found.get("status", "")).lower() in PENDING


def fetch(port: int, path: str, *, timeout: float, method: str = "GET", headers: dict[str, str] | None = None,
          body: bytes | None = None, keep: bool = False) -> Answer:
    """Follow the answer to a file: redirects, and 202 + Retry-After (polled until the file comes, or
    until the resource a 202 named is no longer pending); ``first_byte`` is the first answer's head,
    ``total`` until the last byte of the file or of the finished resource."""
    started = time.monotonic()
    deadline = started + timeout
    answer = Answer(status="?")
    headers = dict(headers or {})
    try:
        for _ in range(MAX_HOPS):
            status, got, head, size, data = _one(port, method, path, headers, body, deadline, keep)
            if answer.first_byte is None:
                answer.first_byte = head
            answer.size, answer.body, answer.status = size, data, str(status)
            if status in (301, 302, 303, 307, 308) and got.get("location"):
                answer.redirects += 1
                path = _path_of(got["location"])
                if status == 303 or method == "GET":
                    method, body, headers = "GET", None, _as_get(headers)
                continue
            waiting = status == 202 or (status == 200 and answer.polls > 0 and _pending(data))
            if not waiting:
                break
            answer.polls += 1
            following = got.get("location") or _named_url(data)
            if not following and method != "GET":
                break  # accepted, with nothing named to poll: sending the body again would be another request
            if following:
                path = _path_of(following)
                method, body, headers = "GET", None, _as_get(headers)
            time.sleep(min(_retry_after(got.get("retry-after")), max(0.0, deadline - time.monotonic())))
            if time.monotonic() >= deadline:
                answer.status = f"timeout (still {status}{' pending' if status == 200 else ''})"
                break
    except TimeoutError:
        answer.status = "timeout"
    except ConnectionResetError:
        answer.status = "connection reset"
    except (http.client.RemoteDisconnected, http.client.IncompleteRead, BrokenPipeError) as exc:
        answer.status = f"closed ({type(exc).__name__})"
    except OSError as exc:
        answer.status = f"error ({exc.strerror or type(exc).__name__})"
    answer.total = time.monotonic() - started
    return answer


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(child) for child in task.read_text().split()]
        except OSError:
            continue
    return found


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants, read from /proc."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            continue
        pending += _children(current)
    return total


@dataclass
class Sampler:
    """Samples the RSS of process trees and the 1-minute load average every ``every`` seconds."""

    pids: dict[str, int]
    every: float = 0.1
    peak: dict[str, int] = field(default_factory=dict)
    before: dict[str, int] = field(default_factory=dict)
    load_max: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Sampler:
        self.before = {name: tree_rss(pid) for name, pid in self.pids.items()}
        self.peak = dict(self.before)
        self.load_max = os.getloadavg()[0]
        self._thread = threading.Thread(target=self._run, name="abuse-sampler", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            for name, pid in self.pids.items():
                self.peak[name] = max(self.peak[name], tree_rss(pid))
            self.load_max = max(self.load_max, os.getloadavg()[0])

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def growth_mib(self, name: str) -> float:
        return (self.peak[name] - self.before[name]) / 2**20


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (``share`` in 0-1) of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]
