"""Per-attempt exports are files built once, off the request: a request for one not built yet sends one
build and answers at once; a built one is served without reading a row; a file holds exactly the
submissions its visitor sees; a board's change removes its older files; a real worker builds them."""
from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.services import team_get_or_create
from catalogue.models import Scenario
from conftest import _wait_for
from leaderboard.attempt_exports import board_export_spec, board_exports_warm, payload_entries
from submissions import export_files
from submissions.export_files import ExportSpec, export_file_build
from submissions.models import Attempt, ModelEntry, Submission
from submissions.services import submission_result_rebuild

BOARD = ("sokoban", "global", "mini")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 64


def _entry(team_name: str, model: str, *, public: bool, trajectories: bool = False) -> Submission:
    """A finished entry of the mini board, one scored attempt per scenario; with ``trajectories``, each
    has a trajectory folder: its index, a frame and a trace holding a screenshot beside its actions."""
    team = team_get_or_create(name=team_name)
    entry = ModelEntry.objects.create(team=team, name=model, price_input_per_mtok=1.0, price_output_per_mtok=2.0)
    submission = Submission.objects.create(team=team, model=entry, environment_id="sokoban", flow="global",
                                           subset="mini", suite="fixture", status=Submission.Status.COMPLETED,
                                           is_public=public, settings={"repeats": 1})
    for scenario in Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True):
        relative = f"trajectories/{submission.id}/{scenario.key}" if trajectories else ""
        if trajectories:
            folder = Path(settings.MEDIA_ROOT) / relative
            folder.mkdir(parents=True)
            (folder / "trajectory.json").write_text(json.dumps({"frames": ["frame_0000.png"], "calls": [{}],
                                                                "steps": [{}]}))
            (folder / "frame_0000.png").write_bytes(PNG)
            with zipfile.ZipFile(folder / "trace.zip", "w") as trace:
                trace.writestr("trace.trace", '{"type": "action"}')
                trace.writestr("resources/page-1.jpeg", JPEG)
                trace.writestr("resources/4f1c", PNG)  # a resource named by its hash: an image all the same
        Attempt.objects.create(submission=submission, scenario=scenario, repeat=0, status=Attempt.Status.SCORED,
                               score=50.0, model_calls=2, prompt_tokens=1000, completion_tokens=100,
                               duration_seconds=30.0, trajectory_path=relative)
    submission_result_rebuild(submission_id=submission.id)
    return submission


@pytest.fixture
def sent(monkeypatch, settings, tmp_path) -> list[ExportSpec]:
    """The builds sent (none run): every export stays unbuilt until a test builds it."""
    settings.MAGEBENCH_EXPORT_ROOT = tmp_path / "exports"
    builds: list[ExportSpec] = []
    monkeypatch.setattr(export_files, "_send_build", builds.append)
    return builds


def _url(fmt: str, query: str = "") -> str:
    return reverse("api-board-attempts-export", args=[*BOARD, fmt]) + "?suite=fixture" + query


def _body(response) -> bytes:
    return b"".join(response.streaming_content)


@pytest.mark.django_db
def test_ten_requests_for_an_unbuilt_export_are_answered_at_once_with_202_and_send_one_build(
        client, fixture_scenarios, sent, django_assert_max_num_queries):
    submission = _entry("Open lab", "open model", public=True)
    for _ in range(10):
        with CaptureQueriesContext(connection) as queries:
            response = client.get(_url("parquet"))
        assert response.status_code == 202
        assert response["Retry-After"] == str(settings.MAGEBENCH_EXPORT_RETRY_AFTER_SECONDS)
        assert "being prepared" in response.json()["message"]
        assert response["Cache-Control"] == "private, no-store"
        # The request never reads an attempt: the rows are the worker's to read.
        assert not [q for q in queries.captured_queries if "submissions_attempt" in q["sql"]]
    assert [(spec.fmt, spec.submission_ids) for spec in sent] == [("parquet", (submission.id,))]

    # A browser is shown a page that loads itself again until the file is there.
    page = client.get(_url("csv"), HTTP_ACCEPT="text/html,application/xhtml+xml")
    assert page.status_code == 202 and page["Retry-After"]
    assert f'http-equiv="refresh" content="{settings.MAGEBENCH_EXPORT_RETRY_AFTER_SECONDS}"' in page.content.decode()


@pytest.mark.django_db
def test_a_built_export_is_served_as_a_file_without_reading_a_row_or_building_again(
        client, fixture_scenarios, sent):
    import pandas

    submission = _entry("Open lab", "open model", public=True)
    assert client.get(_url("parquet")).status_code == 202
    built = export_file_build(sent.pop())
    with CaptureQueriesContext(connection) as queries:
        response = client.get(_url("parquet"))
    assert response.status_code == 200 and not sent
    assert not [q for q in queries.captured_queries if "submissions_attempt" in q["sql"]]
    assert int(response["Content-Length"]) == built.stat().st_size
    frame = pandas.read_parquet(io.BytesIO(_body(response)))
    attempts = submission.attempts.select_related("scenario")
    assert sorted(frame["scenario"]) == sorted(a.scenario.key for a in attempts)
    assert list(frame["score"]) == [50.0] * attempts.count() and set(frame["submission"]) == {submission.id}


@pytest.mark.django_db
def test_the_parquet_is_written_a_row_group_at_a_time_with_the_same_rows_as_the_csv(
        fixture_scenarios, sent, monkeypatch):
    import pyarrow.parquet as pq

    from submissions import exports

    monkeypatch.setattr(exports, "ROW_GROUP", 2)
    submissions = [_entry("Open lab", f"model {n}", public=True) for n in range(2)]
    ids = tuple(s.id for s in submissions)
    attempts = Attempt.objects.filter(submission_id__in=ids).count()
    spec = ExportSpec(fmt="parquet", submission_ids=ids, board="sokoban-global-mini", generation="1")
    parquet = pq.ParquetFile(export_file_build(spec))
    # Never the whole table in memory: a row group of ROW_GROUP rows at a time.
    assert parquet.metadata.num_row_groups == -(-attempts // 2) and parquet.metadata.num_rows == attempts
    rows = list(csv.DictReader(io.StringIO(export_file_build(ExportSpec(
        fmt="csv", submission_ids=ids, board="sokoban-global-mini", generation="1")).read_text())))
    table = parquet.read().to_pylist()
    assert [(r["submission"], r["scenario"]) for r in table] == [(int(r["submission"]), r["scenario"]) for r in rows]


@pytest.mark.django_db
def test_the_default_zip_leaves_every_image_out_even_inside_the_trace_and_the_frames_option_keeps_them(
        client, fixture_scenarios, sent):
    submission = _entry("Open lab", "open model", public=True, trajectories=True)
    spec = ExportSpec(fmt="zip", submission_ids=(submission.id,), board="sokoban-global-mini", generation="1")
    plain = zipfile.ZipFile(export_file_build(spec))
    framed = zipfile.ZipFile(export_file_build(ExportSpec(**{**spec.message(), "submission_ids": (submission.id,),
                                                             "frames": True})))
    folders = {name.rsplit("/", 1)[0] for name in plain.namelist() if name.endswith("trajectory.json")}
    assert len(folders) == submission.attempts.count()
    for folder in folders:
        assert f"{folder}/frame_0000.png" not in plain.namelist()
        assert framed.read(f"{folder}/frame_0000.png") == PNG
        assert zipfile.ZipFile(io.BytesIO(plain.read(f"{folder}/trace.zip"))).namelist() == ["trace.trace"]
        assert sorted(zipfile.ZipFile(io.BytesIO(framed.read(f"{folder}/trace.zip"))).namelist()) == [
            "resources/4f1c", "resources/page-1.jpeg", "trace.trace"]


@pytest.mark.django_db
def test_a_file_with_a_private_entry_is_never_served_to_another_team(client, lab, fixture_scenarios, sent):
    public = _entry("Open lab", "open model", public=True)
    private = _entry("Lab", "secret model", public=False)
    own = lab.auth("read")
    assert client.get(_url("csv"), **own).status_code == 202
    export_file_build(sent.pop())
    assert {int(r["submission"]) for r in csv.DictReader(io.StringIO(_body(client.get(_url("csv"), **own)).decode()))
            } == {public.id, private.id}

    # Another visitor's board has other entries: its file is another one, never the team's.
    outsider = Client()
    response = outsider.get(_url("csv"))
    assert response.status_code == 202 and sent[-1].submission_ids == (public.id,)
    export_file_build(sent.pop())
    rows = _body(outsider.get(_url("csv"))).decode()
    assert "secret model" not in rows and {int(r["submission"]) for r in csv.DictReader(io.StringIO(rows))} == {
        public.id}
    assert outsider.get(reverse("api-submission-export", args=[private.id, "csv"])).status_code == 404


@pytest.mark.django_db
def test_a_board_change_sends_its_default_builds_whose_files_replace_the_older_generations_ones(
        client, fixture_scenarios, sent, django_capture_on_commit_callbacks):
    _entry("Open lab", "open model", public=True)
    assert client.get(_url("zip", "&frames=1")).status_code == 202
    old = export_file_build(sent.pop())
    with django_capture_on_commit_callbacks(execute=True):
        newer = _entry("Open lab", "newer model", public=True)  # its result moves the board on

    payload = client.get(reverse("api-board", args=BOARD)).json()
    assert board_exports_warm(BOARD, payload_entries(payload)) == ["csv", "parquet", "zip"]
    assert [(spec.fmt, spec.frames) for spec in sent] == [("csv", False), ("parquet", False), ("zip", False)]
    assert all(newer.id in spec.submission_ids for spec in sent)
    assert sent[0] == board_export_spec(BOARD, payload_entries(payload), (), "csv")
    assert old.exists()
    current = export_file_build(sent[0])
    assert not old.exists() and current.exists()
    # A build of an older generation finishing late removes nothing newer than itself.
    export_file_build(ExportSpec.from_message({**sent[1].message(), "generation": "0.0"}))
    assert current.exists()


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_builds_the_export_a_request_sent_and_the_next_request_downloads_it(
        client, fixture_scenarios, celery_workers, settings, tmp_path):
    settings.MAGEBENCH_EXPORT_ROOT = tmp_path / "exports"
    submission = _entry("Open lab", "open model", public=True, trajectories=True)
    celery_workers("exports", env={"MAGEBENCH_EXPORT_ROOT": str(settings.MAGEBENCH_EXPORT_ROOT)})
    assert client.get(_url("zip")).status_code == 202
    _wait_for(lambda: any(settings.MAGEBENCH_EXPORT_ROOT.rglob("*.zip")), 60, "the worker's zip")
    response = client.get(_url("zip"))
    assert response.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(_body(response)))
    assert len([n for n in archive.namelist() if n.endswith("trajectory.json")]) == submission.attempts.count()
    assert not [n for n in archive.namelist() if n.endswith(".png")]


@pytest.mark.django_db
def test_without_the_boards_generation_no_file_can_be_named_so_an_export_asks_to_come_back_and_pages_serve(
        client, fixture_scenarios, sent, monkeypatch):
    from leaderboard import attempt_exports

    submission = _entry("Open lab", "open model", public=True)

    def unreachable(*args, **kwargs):
        raise ConnectionError("the cache is down")

    monkeypatch.setattr(attempt_exports, "shared_generation", unreachable)
    for url in (_url("csv"), reverse("api-submission-export", args=[submission.id, "zip"])):
        response = client.get(url)
        assert response.status_code == 503 and response["Retry-After"] and not sent
        # A browser following the link is shown the site's page that loads itself again, not JSON.
        page = client.get(url, HTTP_ACCEPT="text/html,application/xhtml+xml")
        assert page.status_code == 503 and page["Content-Type"].startswith("text/html") and not sent
        refresh = f'http-equiv="refresh" content="{settings.MAGEBENCH_EXPORT_RETRY_AFTER_SECONDS}"'
        assert refresh in page.content.decode()
    page = client.get(reverse("board", args=BOARD) + "?suite=fixture").content.decode()
    assert "open model" in page and page.count("built on first download") == 4
    detail = client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    assert detail.count("built on first download") == 4


@pytest.mark.django_db
def test_a_running_submissions_export_is_built_again_once_another_attempt_has_ended(client, fixture_scenarios, sent):
    submission = _entry("Open lab", "running model", public=True)
    Submission.objects.filter(id=submission.id).update(status=Submission.Status.RUNNING)
    waiting = submission.attempts.order_by("id").first()
    Attempt.objects.filter(id=waiting.id).update(status=Attempt.Status.RUNNING, score=None, finished_at=None)
    url = reverse("api-submission-export", args=[submission.id, "csv"])
    assert client.get(url).status_code == 202
    export_file_build(sent.pop())
    rows = list(csv.DictReader(io.StringIO(_body(client.get(url)).decode())))
    assert {row["status"] for row in rows} == {"running", "scored"}

    # Its board has not moved (the submission has not finished), but its rows have.
    Attempt.objects.filter(id=waiting.id).update(status=Attempt.Status.SCORED, score=75.0,
                                                 finished_at=timezone.now())
    assert client.get(url).status_code == 202
    export_file_build(sent.pop())
    rows = list(csv.DictReader(io.StringIO(_body(client.get(url)).decode())))
    assert {row["status"] for row in rows} == {"scored"} and "75.0" in {row["score"] for row in rows}


@pytest.mark.django_db
def test_no_more_builds_than_the_limit_wait_at_once_and_a_request_past_it_sends_its_build_once_one_ends(
        client, fixture_scenarios, sent, settings):
    settings.MAGEBENCH_EXPORT_MAX_BUILDS = 2
    _entry("Open lab", "open model", public=True)
    for fmt in ("csv", "parquet", "zip"):
        assert client.get(_url(fmt)).status_code == 202
    assert [spec.fmt for spec in sent] == ["csv", "parquet"]
    assert client.get(_url("zip")).status_code == 202 and len(sent) == 2
    export_file_build(sent[0])
    assert client.get(_url("zip")).status_code == 202
    assert [spec.fmt for spec in sent] == ["csv", "parquet", "zip"]
