"""Per-attempt downloads of a submission (the board's come from leaderboard.apis): CSV, Parquet and
the trajectories zip. The submission page links here; the session or a token decides what is seen."""
from __future__ import annotations

from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.views import APIView

from accounts.selectors import request_access
from submissions.apis import ErrorOutput, viewable_submission
from submissions.exports import CONTENT_TYPES, FORMATS, export_rows, rows_csv, rows_parquet, trajectories_zip
from submissions.models import Submission

#: What the schema says each format is.
FORMAT_HELP = ("csv: one row per attempt, spreadsheet-safe; parquet: the same rows with typed columns "
               "(pandas.read_parquet, datasets.Dataset.from_parquet); zip: attempts.csv and every attempt's "
               "trajectory folder (trajectory.json with the replies, parsed actions and per-step scores, and "
               "its frames), streamed")
EXPORT_RESPONSES = {
    (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="csv"),
    (200, "application/vnd.apache.parquet"): OpenApiResponse(OpenApiTypes.BINARY, description="parquet"),
    (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="zip"),
    404: ErrorOutput,
}


def export_response(submissions: list[Submission], fmt: str, stem: str) -> HttpResponse | StreamingHttpResponse:
    """The download of these submissions' attempts in ``fmt``; the file is named ``stem``-attempts or
    ``stem``-trajectories. The caller has checked that the visitor may see every one of them."""
    response: HttpResponse | StreamingHttpResponse
    if fmt == "csv":
        response = HttpResponse(rows_csv(export_rows(submissions)), content_type=CONTENT_TYPES[fmt])
    elif fmt == "parquet":
        response = HttpResponse(rows_parquet(export_rows(submissions)), content_type=CONTENT_TYPES[fmt])
    elif fmt == "zip":
        response = StreamingHttpResponse(trajectories_zip(submissions), content_type=CONTENT_TYPES[fmt])
        stem += "-trajectories"
    else:
        raise exceptions.NotFound(f"an export is one of: {', '.join(FORMATS)}")
    name = f"{stem}.zip" if fmt == "zip" else f"{stem}-attempts.{fmt}"
    # The stem is built from ids and slugs only: nothing to escape in the header.
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    # Private rows may be in it: no shared cache keeps a copy.
    response["Cache-Control"] = "private, no-store"
    return response


class SubmissionExportApi(APIView):
    @extend_schema(
        operation_id="submissions_export",
        parameters=[OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(FORMATS), description=FORMAT_HELP)],
        responses=EXPORT_RESPONSES)
    def get(self, request, submission_id: int, fmt: str) -> HttpResponse | StreamingHttpResponse:
        """A submission's attempts, one row each, or their trajectories.

        Each row: scenario, repeat, status, score, outcome, error kind and message, the invalid and
        repeated action flags (IA/RA) and parse errors, steps, model calls, tries, prompt and
        completion tokens, the cost at the model's prices (USD), the seconds it took and per model
        call, when it started and finished, and the folder of its trajectory in the zip. An upload's
        tokens and times are empty (``measured`` false): its replies were played back. A private
        submission of another team is a 404, as if it did not exist.
        """
        if fmt not in FORMATS:
            raise exceptions.NotFound(f"an export is one of: {', '.join(FORMATS)}")
        submission = viewable_submission(request_access(request), submission_id)
        return export_response([submission], fmt, f"magebench-submission-{submission.id}")
