"""The data release's pages: the snapshots of every board, one snapshot with its files and how to load
them, the column dictionary, and the link a board shows to its latest snapshot. They only read: a
snapshot is made by a worker or a command (``leaderboard.snapshots``)."""
from __future__ import annotations

import re
from typing import Any

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from evaluators.base import all_plugins, get_plugin
from leaderboard.columns import ATTEMPT_COLUMNS, board_columns
from leaderboard.dataset_card import ATTEMPTS_FILE, BOARD_FILE, CARD, CSV_NOTE, dataset_bibtex, score_scale
from leaderboard.models import BoardSnapshot
from leaderboard.selectors.snapshots import snapshot_get, snapshot_latest, snapshot_latest_link, snapshots_by_board
from leaderboard.snapshots import snapshot_folder, zip_name
from submissions.exports import CONTENT_TYPES

#: A cached board page's slot for the link to its latest snapshot (filled per request: a snapshot is
#: made without the board changing, so the cached page cannot hold it).
SNAPSHOT_SLOT = re.compile(r'<span data-snapshot-slot data-board="(?P<board>[\w-]+/[\w-]+/[\w-]+/[\w-]+)"></span>')
FILE_TYPES = {".parquet": CONTENT_TYPES["parquet"], ".zip": CONTENT_TYPES["zip"], ".md": "text/markdown; charset=utf-8"}


def snapshot_args(snapshot: BoardSnapshot) -> list[str]:
    return [snapshot.env, snapshot.flow, snapshot.subset, snapshot.suite, snapshot.version]


def file_url(request: HttpRequest, snapshot: BoardSnapshot, name: str) -> str:
    return request.build_absolute_uri(reverse("data-snapshot-file", args=[*snapshot_args(snapshot), name]))


def snapshot_index(request: HttpRequest) -> HttpResponse:
    return render(request, "leaderboard/data/snapshots.html", {"boards": snapshots_by_board()})


def _snapshot_or_404(env: str, flow: str, subset: str, suite: str, version: str) -> BoardSnapshot:
    snapshot = snapshot_get(env, flow, subset, suite, version)
    if snapshot is None:
        raise Http404("no such snapshot")
    return snapshot


def snapshot_detail(request: HttpRequest, env: str, flow: str, subset: str, suite: str, version: str) -> HttpResponse:
    snapshot = _snapshot_or_404(env, flow, subset, suite, version)
    board_url, attempts_url = file_url(request, snapshot, BOARD_FILE), file_url(request, snapshot, ATTEMPTS_FILE)
    latest = snapshot_latest(env, flow, subset, suite)
    try:
        board_title = get_plugin(env).title
    except KeyError:  # an environment no longer configured: its snapshots still serve, under its slug
        board_title = env
    return render(request, "leaderboard/data/snapshot.html", {
        "snapshot": snapshot, "board_title": board_title,
        "files": [{**f, "url": file_url(request, snapshot, f["name"])} for f in snapshot.files],
        "zip_url": file_url(request, snapshot, zip_name(snapshot.board_name, snapshot.version)),
        "card_url": file_url(request, snapshot, CARD), "latest": latest,
        "one_liners": [f'pd.read_parquet("{board_url}")', f'pd.read_parquet("{attempts_url}")',
                       f'datasets.load_dataset("parquet", data_files="{board_url}")',
                       f'datasets.load_dataset("parquet", data_files="{attempts_url}")'],
        "bibtex": dataset_bibtex(snapshot, request.build_absolute_uri(request.path)), "csv_note": CSV_NOTE})


def snapshot_file(request: HttpRequest, env: str, flow: str, subset: str, suite: str, version: str,
                  name: str) -> FileResponse:
    """One file of a snapshot: only those its row lists (never another path), as they were written."""
    snapshot = _snapshot_or_404(env, flow, subset, suite, version)
    if name not in {str(f["name"]) for f in snapshot.files}:
        raise Http404("no such file in this snapshot")
    path = snapshot_folder(snapshot) / name
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise Http404("the snapshot's file is missing") from None
    suffix = path.suffix.lower()
    response = FileResponse(handle, content_type=FILE_TYPES.get(suffix, "application/octet-stream"))
    if suffix != ".md":
        download = name if suffix == ".zip" else f"magebench-{snapshot.board_name}-{snapshot.version}-{path.name}"
        response["Content-Disposition"] = f'attachment; filename="{download}"'
    # Never changed once made: any cache may keep it.
    response["Cache-Control"] = "public, max-age=31536000, immutable"
    return response


def data_columns(request: HttpRequest) -> HttpResponse:
    plugins = all_plugins()
    return render(request, "leaderboard/data/columns.html", {
        "board_columns": board_columns(), "attempt_columns": ATTEMPT_COLUMNS,
        "scales": [score_scale(plugin) for plugin in plugins], "csv_note": CSV_NOTE})


def with_snapshot_link(content: str) -> SafeString:
    """A board page's content with the link to its latest snapshot, read for this request."""
    match = SNAPSHOT_SLOT.search(content)
    if match is None:
        return mark_safe(content)  # the page's own rendered content
    env, flow, subset, suite = match.group("board").split("/")
    context: dict[str, Any] = {"latest": snapshot_latest_link(env, flow, subset, suite),
                               "anchor": f"{env}-{flow}-{subset}-{suite}"}
    rendered = render_to_string("leaderboard/data/_board_snapshot_link.html", context)
    # Both parts were rendered by Django's templates, which escaped them.
    return mark_safe(content[:match.start()] + rendered + content[match.end():])
