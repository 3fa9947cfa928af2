"""REST API for the boards' snapshots: the list (optionally one board's) and one snapshot with its files."""
from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.apis import BoardRefOutput
from leaderboard.dataset_card import BOARD_FILE, dataset_bibtex
from leaderboard.models import BoardSnapshot
from leaderboard.selectors.snapshots import snapshot_get
from submissions.apis import ErrorOutput
from submissions.paging import PAGE_HEADERS, PageQuery, checked_query, paged

HASH_HELP = ("sha256 of the canonical serialisation (JSON lines, keys sorted) of the board's metadata, rows and "
             "attempts: equal for equal content")


@extend_schema_serializer(component_name="SnapshotFile")
class SnapshotFileOutput(serializers.Serializer):
    name = serializers.CharField(help_text="path within the snapshot (and its zip)")
    size = serializers.IntegerField(help_text="bytes")
    sha256 = serializers.CharField()
    url = serializers.URLField()


@extend_schema_serializer(component_name="Snapshot")
class SnapshotOutput(BoardRefOutput):
    version = serializers.CharField(help_text="the day it was made and its number that day: 2026-11-29.1")
    content_hash = serializers.CharField(help_text=HASH_HELP)
    created_at = serializers.DateTimeField()
    prompt_version = serializers.CharField()
    scenarios = serializers.IntegerField()
    entries = serializers.IntegerField()
    attempts = serializers.IntegerField()
    size = serializers.IntegerField(help_text="bytes of the card and the Parquet files")
    url = serializers.URLField(help_text="the snapshot's page")
    api_url = serializers.URLField()
    board_parquet = serializers.URLField(help_text="data/board.parquet: one row per entry (columns: /data/columns/)")


@extend_schema_serializer(component_name="SnapshotDetail")
class SnapshotDetailOutput(SnapshotOutput):
    files = SnapshotFileOutput(many=True, help_text="the card (README.md), both Parquet files and the zip of all three")
    bibtex = serializers.CharField(help_text="how to cite this snapshot")


def _args(snapshot: BoardSnapshot) -> list[str]:
    return [snapshot.env, snapshot.flow, snapshot.subset, snapshot.suite, snapshot.version]


def snapshot_payload(request: Request, snapshot: BoardSnapshot) -> dict[str, Any]:
    def absolute(name: str, *extra: str) -> str:
        return request.build_absolute_uri(reverse(name, args=[*_args(snapshot), *extra]))

    return {"env": snapshot.env, "flow": snapshot.flow, "subset": snapshot.subset, "suite": snapshot.suite,
            "version": snapshot.version, "content_hash": snapshot.content_hash, "created_at": snapshot.created_at,
            "prompt_version": snapshot.prompt_version, "scenarios": snapshot.scenarios, "entries": snapshot.entries,
            "attempts": snapshot.attempts, "size": snapshot.size, "url": absolute("data-snapshot"),
            "api_url": absolute("api-snapshot"), "board_parquet": absolute("data-snapshot-file", BOARD_FILE)}


class SnapshotListApi(APIView):
    class FilterSerializer(serializers.Serializer):
        env = serializers.SlugField(required=False, max_length=32, help_text="only this environment's snapshots")
        flow = serializers.SlugField(required=False, max_length=16, help_text="only this flow's")
        subset = serializers.SlugField(required=False, max_length=8, help_text="only this subset's")
        suite = serializers.SlugField(required=False, max_length=32, help_text="only this suite's")

    @extend_schema(operation_id="snapshots_list", parameters=[FilterSerializer, PageQuery, *PAGE_HEADERS],
                   responses={200: SnapshotOutput(many=True), 400: ErrorOutput})
    def get(self, request: Request) -> Response:
        """Every board's dated snapshots, newest first.

        A snapshot is an immutable release of one public board (its entries and their attempts as
        Parquet, with a dataset card), made when the board's content changed, at most once a day.
        Paged by ``limit`` (1 to 200, 50 by default) and ``offset``: the list's length is in
        X-Total-Count, its next and previous pages in Link.
        """
        filters = checked_query(self.FilterSerializer, request)
        snapshots = BoardSnapshot.objects.filter(**filters).order_by("-created_at", "-id")
        return paged(request, snapshots,
                     lambda page: SnapshotOutput([snapshot_payload(request, s) for s in page], many=True).data)


class SnapshotDetailApi(APIView):
    @extend_schema(operation_id="snapshots_detail", responses={200: SnapshotDetailOutput})
    def get(self, request: Request, env: str, flow: str, subset: str, suite: str, version: str) -> Response:
        """One snapshot of a board, with its files and how to cite it.

        Its version, content hash, creation time and counts; each file (the dataset card README.md,
        data/board.parquet, data/attempts.parquet and a zip of the three) with its size, sha256 and
        URL; and a BibTeX entry naming the version and the hash. A snapshot never changes.
        """
        snapshot = snapshot_get(env, flow, subset, suite, version)
        if snapshot is None:
            raise Http404("no such snapshot")
        files = [{**f, "url": request.build_absolute_uri(reverse("data-snapshot-file", args=[*_args(snapshot),
                                                                                           f["name"]]))}
                 for f in snapshot.files]
        page = request.build_absolute_uri(reverse("data-snapshot", args=_args(snapshot)))
        return Response(SnapshotDetailOutput({**snapshot_payload(request, snapshot), "files": files,
                                              "bibtex": dataset_bibtex(snapshot, page)}).data)
