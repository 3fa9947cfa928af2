"""Talking to the site: one session, the token in the Authorization header only, and the site's errors
and network failures turned into exceptions that say what went wrong."""
from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import IO, Any

import requests

# Uploads may be tens of megabytes and the site validates them before answering.
TIMEOUT = (10.0, 300.0)
#: Bytes of a download written at a time.
DOWNLOAD_BLOCK = 256 * 1024
#: How long a download waits in all for a file the site is building, and the bounds of each wait.
DOWNLOAD_WAIT = 1800.0
DEFAULT_RETRY_AFTER, MIN_RETRY_AFTER, MAX_RETRY_AFTER = 5.0, 0.5, 60.0


class ApiError(Exception):
    """The site answered with an error: its message and every problem it listed."""

    def __init__(self, status: int, message: str, details: list[str]) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details


class Unreachable(Exception):
    """No answer from the site at ``url``: the network's reason, as a person reads it."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(reason)
        self.url = url
        self.reason = reason


class Client:
    """The REST API at ``base_url``; the token only ever goes into the Authorization header."""

    def __init__(self, base_url: str, token: str | None) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._session = requests.Session()
        self._session.headers["User-Agent"] = "magebench-cli/1"

    def __repr__(self) -> str:
        return f"Client({self.base_url!r})"

    def close(self) -> None:
        self._session.close()

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = {"Accept": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        try:
            response = self._session.request(method, self.base_url + path, headers=headers, timeout=TIMEOUT, **kwargs)
        except requests.RequestException as exc:
            raise Unreachable(self.base_url, network_reason(exc)) from None
        if response.status_code >= 400:
            raise api_error(response)
        return response

    def get(self, path: str, params: dict[str, str] | None = None) -> Any:
        return response_json(self.request("GET", path, params=params))

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        return response_json(self.request("POST", path, json=body))

    def post_file(self, path: str, fields: dict[str, str], name: str, file: IO[bytes]) -> Any:
        return response_json(self.request("POST", path, data=fields, files={"file": (name, file)}))

    def download(self, path: str, params: dict[str, str] | None, out: IO[bytes], *, wait: float = DOWNLOAD_WAIT,
                 waiting: Callable[[float], None] | None = None) -> int:
        """Write the file at ``path`` to ``out`` as it arrives (an export may be large); its size.

        A file the site is still building is answered 202 with Retry-After: asked again after that
        many seconds (``waiting`` is told each wait), for ``wait`` seconds at most in all."""
        deadline = time.monotonic() + wait
        while True:
            response = self.request("GET", path, params=params, stream=True)
            if response.status_code != 202:
                break
            response.close()
            delay = retry_after(response)
            if time.monotonic() + delay > deadline:
                raise ApiError(202, f"the site was still preparing {response.url} after {wait:.0f} s; "
                                    "ask again later (or give a longer --wait)", [])
            if waiting is not None:
                waiting(delay)
            time.sleep(delay)
        size = 0
        try:
            for block in response.iter_content(DOWNLOAD_BLOCK):
                out.write(block)
                size += len(block)
        except requests.RequestException as exc:
            raise Unreachable(self.base_url, network_reason(exc)) from None
        finally:
            response.close()
        return size


def retry_after(response: requests.Response) -> float:
    """The seconds a 202 asks to wait (its Retry-After), within reason; a date or nothing is the default."""
    try:
        seconds = float(response.headers.get("Retry-After", ""))
    except ValueError:
        return DEFAULT_RETRY_AFTER
    return min(max(seconds, MIN_RETRY_AFTER), MAX_RETRY_AFTER)


def network_reason(exc: requests.RequestException) -> str:
    if isinstance(exc, requests.Timeout):
        return "no answer in time"
    text = str(exc)
    # urllib3 wraps the socket error several times; the errno text is the part a person needs.
    match = re.search(r"\[Errno -?\d+\] ([^'\")]+)", text)
    return match.group(1).strip() if match else (text or type(exc).__name__)


def response_json(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        kind = response.headers.get("Content-Type", "no content type")
        raise ApiError(response.status_code, f"expected JSON from {response.url}, got {kind}; is --url the "
                                             "MageBench site?", []) from None


def api_error(response: requests.Response) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "message" in body:
        return ApiError(response.status_code, str(body["message"]), error_details(body.get("extra")))
    status = f"HTTP {response.status_code} {response.reason}" if response.reason else f"HTTP {response.status_code}"
    return ApiError(response.status_code, f"{status} from {response.url}", [])


def error_details(extra: Any) -> list[str]:
    """Upload problems one per line, then any per-field validation messages as ``field: message``."""
    if not isinstance(extra, dict):
        return []
    lines = [str(problem) for problem in extra.get("problems") or []]
    for field, value in extra.items():
        if field != "problems":
            lines.append(f"{field}: {'; '.join(map(str, value)) if isinstance(value, list) else value}")
    return lines
