"""Request bodies refused on their headers, before Django reads them.

Django parses a multipart body the first time anything touches ``request.POST`` or
``request.FILES`` (the CSRF check does, DRF's parsers do) and spools a large file to a temporary
file while doing so. An upload is therefore judged here, on its headers alone: who sends it and
how large it says it is. A refusal is answered before one byte of the body is read.

The application server has no body limit of its own (gunicorn caps request lines and header
fields only): the reverse proxy in front of it caps the body too (nginx ``client_max_body_size``).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse

#: Room beside the file for the form's other fields and the multipart boundaries.
MULTIPART_OVERHEAD_BYTES = 64 * 1024


@lru_cache(maxsize=1)
def _upload_paths() -> dict[str, bool]:
    """The upload URLs, each with whether it is the API's. The check of a file is one too: it reads as
    large a body, so it is refused from the headers in the same way."""
    return {reverse("upload"): False, reverse("api-upload"): True, reverse("api-upload-check"): True}


def _read_only_allowed() -> set[str]:
    """Upload URLs a read-only token may use: checking a file stores nothing."""
    return {reverse("api-upload-check")}


def upload_body_limit() -> int:
    return settings.MAGEBENCH_UPLOAD_MAX_BYTES + MULTIPART_OVERHEAD_BYTES


class RequestBodyLimitMiddleware:
    """Refuse, before reading it, an upload from someone who may not upload or one announcing more
    than MAGEBENCH_UPLOAD_MAX_BYTES, and any other request announcing more than
    DATA_UPLOAD_MAX_MEMORY_SIZE. Comes after the session and authentication middleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refusal = self._refusal(request)
        return refusal if refusal is not None else self.get_response(request)

    def _refusal(self, request: HttpRequest) -> HttpResponse | None:
        is_api = _upload_paths().get(request.path_info)
        announced = request.META.get("CONTENT_LENGTH") or ""
        if is_api is None or request.method != "POST":
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            if limit is not None and announced.isdigit() and int(announced) > limit:
                return _answer(is_api=request.path_info.startswith("/api/"), status=413,
                               message=f"the request body is {announced} bytes; the limit is {limit}")
            return None
        who = _uploader_refusal(request, is_api=is_api)
        if who is not None:
            return who
        if not announced:
            # Django reads no body without a Content-Length: a chunked upload would arrive empty.
            return _answer(is_api=is_api, status=411, message="an upload needs a Content-Length header")
        if not announced.isdigit():
            return _answer(is_api=is_api, status=400, message="the Content-Length header is not a number")
        if int(announced) > upload_body_limit():
            limit = settings.MAGEBENCH_UPLOAD_MAX_BYTES
            return _answer(is_api=is_api, status=413,
                           message=f"the upload is {announced} bytes; the limit is {limit} bytes for the file",
                           extra={"limit_bytes": limit})
        return None


def _uploader_refusal(request: HttpRequest, *, is_api: bool) -> HttpResponse | None:
    """Why the sender may not upload at all, read from the headers and the session only."""
    from accounts.models import ApiToken
    from accounts.selectors import token_authenticate, user_teams

    scheme, _, raw = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if is_api and scheme == "Bearer":
        token = token_authenticate(raw)
        if token is None:
            return _answer(is_api=True, status=401, message="unknown or revoked API token")
        if token.scope != ApiToken.Scope.WRITE and request.path_info not in _read_only_allowed():
            return _answer(is_api=True, status=403,
                           message="this token is read-only; create a read-write token to submit")
        return None
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        if is_api:
            return _answer(is_api=True, status=401,
                           message="submitting needs a team's read-write token or a logged-in member")
        return _answer(is_api=False, status=403, message="log in to upload")
    if not user_teams(user):
        return _answer(is_api=is_api, status=403, message="create or join a team before uploading")
    return None


def _answer(*, is_api: bool, status: int, message: str, extra: dict[str, Any] | None = None) -> HttpResponse:
    if is_api:
        response: HttpResponse = JsonResponse({"message": message, "extra": extra or {}}, status=status)
        if status == 401:
            response["WWW-Authenticate"] = "Bearer"
        return response
    return HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8")


class UploadSizeLimitHandler(FileUploadHandler):
    """First of FILE_UPLOAD_HANDLERS: stops reading the body once a file grows past
    MAGEBENCH_UPLOAD_MAX_BYTES, before the handlers after it store more of it. The middleware
    already refuses a larger Content-Length; this holds whatever reaches the parser another way."""

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        if start + len(raw_data) > settings.MAGEBENCH_UPLOAD_MAX_BYTES:
            # connection_reset: the parser stops here instead of reading the rest of the body.
            raise StopUpload(connection_reset=True)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None
