"""Per-attempt exports of a submission and of a board: CSV, Parquet (read as researchers read it, with
pandas and Hugging Face datasets) and the trajectories zip; a private submission stays its team's."""
from __future__ import annotations

import csv
import html
import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from accounts.services import team_get_or_create
from magebench_client.output import size_text
from scoring.cost import token_cost
from submissions.engine import attempt_run
from submissions.models import Attempt, Submission
from submissions.selectors import trajectory_dir
from submissions.services import model_entry_upsert, submission_create_endpoint

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

BOARD = ("sokoban", "global", "mini")


def _run(submission: Submission) -> Submission:
    for attempt_id in submission.attempts.values_list("id", flat=True):
        for _ in range(5):
            if attempt_run(attempt_id=attempt_id) is None:
                break
    return Submission.objects.get(id=submission.id)


@pytest.fixture
def oracle(fixture_scenarios, baseline_endpoint):
    """A public entry whose episodes really ran against an endpoint, with prices and a name a
    spreadsheet would run."""
    def make(team_name: str, model_name: str, *, public: bool) -> Submission:
        team = team_get_or_create(name=team_name)
        model = model_entry_upsert(team=team, name=model_name, price_input_per_mtok=3.0, price_output_per_mtok=15.0)
        return _run(submission_create_endpoint(
            model=model, env="sokoban", flow="global", subset="mini", suite="fixture",
            endpoint_url=baseline_endpoint("oracle").url, endpoint_model="oracle",
            settings={"repeats": 1, "resolution": 256}, is_public=public))
    return make


@pytest.fixture
def download(exports_built_when_sent):
    return exports_built_when_sent


def _export(download, client, submission: Submission, fmt: str, query: str = "", **headers):
    return download(client, reverse("api-submission-export", args=[submission.id, fmt]) + query, **headers)


def _board_export(download, client, fmt: str, query: str = "", **headers):
    return download(client, reverse("api-board-attempts-export", args=[*BOARD, fmt]) + "?suite=fixture" + query,
                    **headers)


def _body(response) -> bytes:
    # Read to its end, the test client closes the file (closing it again would close the database connection).
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_a_submissions_parquet_has_one_row_per_stored_attempt_for_pandas_and_datasets(download, client, oracle,
                                                                                      tmp_path):
    import datasets
    import pandas

    submission = oracle("Exporters", "oracle model", public=True)
    attempts = {(a.scenario.key, a.repeat): a for a in submission.attempts.select_related("scenario")}
    assert len(attempts) >= 2 and all(a.status == Attempt.Status.SCORED for a in attempts.values())

    response = _export(download, client, submission, "parquet")
    assert response.status_code == 200 and response["Content-Type"] == "application/vnd.apache.parquet"
    assert f'filename="magebench-submission-{submission.id}-attempts.parquet"' in response["Content-Disposition"]
    path = tmp_path / "attempts.parquet"
    path.write_bytes(_body(response))

    frame = pandas.read_parquet(path)
    assert len(frame) == len(attempts)
    for row in frame.to_dict("records"):
        attempt = attempts[(row["scenario"], row["repeat"])]
        assert row["submission"] == submission.id and row["model"] == "oracle model" and row["team"] == "Exporters"
        assert row["status"] == "scored" and row["score"] == pytest.approx(attempt.score)
        assert row["outcome"] == attempt.outcome and row["error_kind"] == ""
        assert bool(row["invalid_action"]) is attempt.invalid_action
        assert bool(row["repeating_action"]) is attempt.repeating_action
        diagnostics = attempt.details["diagnostics"]
        for count in ("invalid_replies", "invalid_decisions", "repetitive_replies", "longest_noop_streak"):
            assert row[count] == diagnostics[count]
        assert row["ia_ra_reasons"] == "; ".join(diagnostics["reasons"])
        assert row["steps"] == attempt.steps and row["model_calls"] == attempt.model_calls >= 1
        assert row["prompt_tokens"] == attempt.prompt_tokens > row["completion_tokens"] == attempt.completion_tokens > 0
        assert row["cost_usd"] == pytest.approx(token_cost(attempt.prompt_tokens, attempt.completion_tokens, 3.0, 15.0))
        assert row["seconds"] == pytest.approx(attempt.duration_seconds)
        assert row["seconds_per_call"] == pytest.approx(attempt.duration_seconds / attempt.model_calls)
        assert row["finished_at"].to_pydatetime() == attempt.finished_at
        assert row["trajectory"] == f"submission-{submission.id}/{attempt.scenario.key}/repeat-{attempt.repeat}"

    dataset = datasets.Dataset.from_parquet(str(path))
    assert dataset.num_rows == len(attempts)
    assert {"scenario", "repeat", "score", "status", "invalid_action", "repeating_action", "prompt_tokens",
            "completion_tokens", "cost_usd", "seconds"} <= set(dataset.column_names)
    assert sorted(dataset["score"]) == pytest.approx(sorted(a.score for a in attempts.values()))
    assert dataset.features["score"].dtype == "float64" and dataset.features["repeat"].dtype == "int64"


def test_the_csv_export_has_the_same_rows_and_a_spreadsheet_cannot_run_its_names(download, client, oracle):
    submission = oracle("=HYPERLINK(\"http://evil\")", "-2+3 model", public=True)
    response = _export(download, client, submission, "csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(_body(response).decode())))
    assert len(rows) == submission.attempts.count()
    assert {row["team"] for row in rows} == {"'=HYPERLINK(\"http://evil\")"}
    assert {row["model"] for row in rows} == {"'-2+3 model"}
    by_key = {(row["scenario"], int(row["repeat"])): row for row in rows}
    for attempt in submission.attempts.select_related("scenario"):
        row = by_key[(attempt.scenario.key, attempt.repeat)]
        assert float(row["score"]) == pytest.approx(attempt.score)
        assert int(row["prompt_tokens"]) == attempt.prompt_tokens
        assert row["invalid_action"] == str(attempt.invalid_action)


def test_the_zip_holds_every_attempts_trajectory_and_the_rows_and_its_frames_only_when_asked(download, client,
                                                                                           oracle):
    submission = oracle("Zippers", "zip model", public=True)
    response = _export(download, client, submission, "zip")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert f'filename="magebench-submission-{submission.id}-trajectories.zip"' in response["Content-Disposition"]
    body = _body(response)
    # A file served as it is: its size is known before the first byte.
    assert int(response["Content-Length"]) == len(body)
    archive = zipfile.ZipFile(io.BytesIO(body))
    with_frames = _export(download, client, submission, "zip", "?frames=1")
    assert "trajectories-frames.zip" in with_frames["Content-Disposition"]
    framed = zipfile.ZipFile(io.BytesIO(_body(with_frames)))
    for names in (set(archive.namelist()), set(framed.namelist())):
        assert "attempts.csv" in names
    names, framed_names = set(archive.namelist()), set(framed.namelist())
    for attempt in submission.attempts.select_related("scenario"):
        directory = trajectory_dir(attempt)
        assert directory is not None
        stored = sorted(p.relative_to(directory).as_posix() for p in Path(directory).rglob("*") if p.is_file())
        folder = f"submission-{submission.id}/{attempt.scenario.key}/repeat-{attempt.repeat}"
        frames = [name for name in stored if name.endswith(".png")]
        assert "trajectory.json" in stored and frames
        # Frame-free by default: everything but the images.
        assert sorted(n.removeprefix(folder + "/") for n in names if n.startswith(folder + "/")) == sorted(
            set(stored) - set(frames))
        assert sorted(n.removeprefix(folder + "/") for n in framed_names if n.startswith(folder + "/")) == stored
        for name in frames:
            assert framed.read(f"{folder}/{name}") == (directory / name).read_bytes()
        index = json.loads(archive.read(f"{folder}/trajectory.json"))
        # The replies, the parsed actions and the per-step scores a replay shows.
        assert index["calls"] and index["steps"] and len(index["frames"]) >= 1
    assert len(list(csv.DictReader(io.StringIO(archive.read("attempts.csv").decode())))) == submission.attempts.count()


def test_a_private_submission_is_exported_to_its_team_only(download, client, oracle, lab):
    import pandas

    public = oracle("Open lab", "public model", public=True)
    private = oracle("Lab", "secret model", public=False)
    assert private.team_id == lab.team.id

    client.logout()
    _, outsider_token = _outsider_token()
    for headers in ({}, {"HTTP_AUTHORIZATION": f"Bearer {outsider_token}"}):
        for fmt in ("csv", "parquet", "zip"):
            assert _export(download, client, private, fmt, **headers).status_code == 404
            board = _body(_board_export(download, client, fmt, **headers))
            assert b"secret model" not in board and f"submission-{private.id}/".encode() not in board
        names = zipfile.ZipFile(io.BytesIO(_body(_board_export(download, client, "zip", **headers)))).namelist()
        assert {name.split("/")[0] for name in names} == {"attempts.csv", f"submission-{public.id}"}
        rows = list(csv.DictReader(io.StringIO(_body(_board_export(download, client, "csv", **headers)).decode())))
        assert {int(row["submission"]) for row in rows} == {public.id}
        frame = pandas.read_parquet(io.BytesIO(_body(_board_export(download, client, "parquet", **headers))))
        assert set(frame["submission"]) == {public.id} and len(frame) == public.attempts.count()

    own = lab.auth("read")
    assert _export(download, client, private, "csv", **own).status_code == 200
    rows = list(csv.DictReader(io.StringIO(_body(_board_export(download, client, "csv", **own)).decode())))
    assert {int(row["submission"]) for row in rows} == {public.id, private.id}
    names = zipfile.ZipFile(io.BytesIO(_body(_board_export(download, client, "zip", **own)))).namelist()
    assert any(name.startswith(f"submission-{private.id}/") for name in names)


def _outsider_token() -> tuple[object, str]:
    from django.contrib.auth import get_user_model

    from accounts.services import team_create, token_create

    user = get_user_model().objects.create_user("mallory", password="another long passphrase 9")
    team = team_create(user=user, name="Rivals")
    return token_create(team=team, user=user, name="peek", scope="read")


def test_an_unknown_format_or_board_is_a_404(download, client, oracle):
    submission = oracle("Formats", "format model", public=True)
    assert _export(download, client, submission, "xlsx").status_code == 404
    assert _board_export(download, client, "xlsx").status_code == 404
    assert client.get(reverse("api-board-attempts-export", args=["nope", "global", "mini", "csv"])).status_code == 404


def test_the_submission_and_board_pages_link_to_the_exports_they_download_with_their_sizes(download, client,
                                                                                           oracle):
    submission = oracle("Linkers", "linked model", public=True)
    detail = reverse("submission-detail", args=[submission.id])
    page = client.get(detail).content.decode()
    for fmt in ("csv", "parquet", "zip"):
        url = reverse("api-submission-export", args=[submission.id, fmt])
        assert f'href="{url}"' in page
        assert _body(download(client, url))
    assert f'href="{reverse("api-submission-export", args=[submission.id, "zip"])}?frames=1"' in page
    # Built now: each link says how big its file is.
    page = client.get(detail).content.decode()
    for fmt in ("csv", "parquet", "zip"):
        url = reverse("api-submission-export", args=[submission.id, fmt])
        size = re.search(rf'href="{re.escape(url)}">[^<]*</a>\s*<small data-export-size>([^<]*)</small>', page)
        built = next((settings.MAGEBENCH_EXPORT_ROOT).rglob(f"*.{fmt}"))
        assert size is not None and size.group(1) == size_text(built.stat().st_size)
    board = client.get(reverse("board", args=BOARD) + "?suite=fixture&q=linked").content.decode()
    for fmt in ("csv", "parquet", "zip"):
        url = reverse("api-board-attempts-export", args=[*BOARD, fmt])
        link = re.search(rf'data-board-attempt-export href="({re.escape(url)}\?[^"]*)"', board)
        assert link is not None and "q=linked" in link.group(1)
    assert board.count("built on first download") == 4
    csv_link = html.unescape(re.search(r'data-board-attempt-export href="([^"]*attempts\.csv[^"]*)"', board).group(1))
    rows = csv.DictReader(io.StringIO(_body(download(client, csv_link)).decode()))
    assert {row["model"] for row in rows} == {"linked model"}
    board = client.get(reverse("board", args=BOARD) + "?suite=fixture&q=linked").content.decode()
    assert board.count("built on first download") == 3
