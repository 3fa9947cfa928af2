"""Per-attempt downloads (CSV, Parquet, the trajectories zip) of a submission or a board's entries, as
files: a built one is served as it is; one not built yet is sent to a worker and the request answered
at once with 202 and Retry-After (``submissions.export_files``). The caller decides what is seen."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, BinaryIO

from django.conf import settings
from django.http import FileResponse, HttpRequest, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

from submissions.apis import ErrorOutput
from submissions.export_files import ExportSpec, export_build_send, export_requested
from submissions.exports import CONTENT_TYPES, FORMATS

#: What the schema says each format is.
FORMAT_HELP = ("csv: one row per attempt, spreadsheet-safe; parquet: the same rows with typed columns "
               "(pandas.read_parquet, datasets.Dataset.from_parquet); zip: attempts.csv and every attempt's "
               "trajectory folder (trajectory.json with the replies, parsed actions and per-step scores, and "
               "its trace), without the frames unless frames=1. Each file is built once, by a worker: until "
               "it is ready the answer is 202 with Retry-After (seconds) and a JSON body saying so; ask again "
               "then")


class FramesQuery(serializers.Serializer):
    """Whether a trajectories zip holds the frames."""

    frames = serializers.BooleanField(required=False, default=False,
                                      help_text="zip only: 1 adds every frame (PNG/JPEG images), most of the zip's "
                                                "size; by default the zip is frame-free")


EXPORT_RESPONSES = {
    (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="csv"),
    (200, "application/vnd.apache.parquet"): OpenApiResponse(OpenApiTypes.BINARY, description="parquet"),
    (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="zip"),
    202: OpenApiResponse(ErrorOutput, description="the file is being built: ask again after Retry-After seconds"),
    503: OpenApiResponse(ErrorOutput, description="exports are unavailable for a moment: ask again after Retry-After"),
    404: ErrorOutput,
}


class AnyAccept(BaseContentNegotiation):
    """An export answers with its file whatever the Accept header says (a browser following a link asks
    for HTML first): only the 202 and error bodies are rendered, as JSON."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        return next(iter(parsers), None)

    def select_renderer(self, request: Request, renderers: Iterable[BaseRenderer],
                        format_suffix: str | None = None) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


def export_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise exceptions.NotFound(f"an export is one of: {', '.join(FORMATS)}")
    return fmt


def wants_frames(query: Mapping[str, Any], fmt: str) -> bool:
    """Whether the export of ``fmt`` holds the frames, as ``query`` (read by ``FramesQuery``) asks."""
    return fmt == "zip" and bool(query["frames"])


def export_filename(spec: ExportSpec, stem: str) -> str:
    if spec.fmt == "zip":
        return f"{stem}-trajectories{'-frames' if spec.frames else ''}.zip"
    return f"{stem}-attempts.{spec.fmt}"


def export_unavailable(request: HttpRequest) -> HttpResponseBase:
    """No file can be named now (the cache holding the boards' generations is down): ask again later (a
    page that reloads itself for a browser, JSON for anyone else)."""
    retry_after = settings.MAGEBENCH_EXPORT_RETRY_AFTER_SECONDS
    response: HttpResponseBase
    if _wants_page(request):
        response = render(request, "submissions/export_unavailable.html", {"retry_after": retry_after}, status=503)
    else:
        response = JsonResponse({"message": "exports are unavailable for a moment: ask again later",
                                 "extra": {"retry_after": retry_after}}, status=503)
    response["Retry-After"] = str(retry_after)
    return response


def export_response(request: HttpRequest, spec: ExportSpec, stem: str) -> HttpResponseBase:
    """The file of ``spec``, named after ``stem``; or, while it is built, a 202 saying when to ask again
    (a page that reloads itself for a browser, JSON for anyone else). The caller has checked that the
    visitor may see every submission in it."""
    name = export_filename(spec, stem)
    file = _opened(spec)
    response: HttpResponseBase
    if file is None:
        response = _preparing(request, name)
    else:
        response = FileResponse(file, content_type=CONTENT_TYPES[spec.fmt])
        # The stem is built from ids and slugs only: nothing to escape in the header.
        response["Content-Disposition"] = f'attachment; filename="{name}"'
    # Private rows may be in it: no shared cache keeps a copy.
    response["Cache-Control"] = "private, no-store"
    return response


def _opened(spec: ExportSpec) -> BinaryIO | None:
    """The built file, open; or None once its build is sent."""
    path = export_requested(spec)
    if path is None:
        return None
    try:
        return path.open("rb")
    except FileNotFoundError:  # removed since (a newer generation's build removed it): built again
        export_build_send(spec)
        return None


def _preparing(request: HttpRequest, name: str) -> HttpResponseBase:
    retry_after = settings.MAGEBENCH_EXPORT_RETRY_AFTER_SECONDS
    response: HttpResponseBase
    if _wants_page(request):
        response = render(request, "submissions/export_preparing.html", {"name": name, "retry_after": retry_after},
                          status=202)
    else:
        response = JsonResponse({"message": f"{name} is being prepared: ask again in {retry_after} s",
                                 "extra": {"retry_after": retry_after}}, status=202)
    response["Retry-After"] = str(retry_after)
    return response


def _wants_page(request: HttpRequest) -> bool:
    """A browser following a link (it asks for HTML) is shown a page of the site, not the API's JSON."""
    return "text/html" in request.headers.get("Accept", "")
