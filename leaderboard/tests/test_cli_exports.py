"""`magebench export` against a live site, and the time left the client prints: the server's estimate,
or the server's reason for having none, never one of the client's own making."""
from __future__ import annotations

import csv
import io
import zipfile

import pytest

from accounts.services import team_get_or_create
from catalogue.models import Scenario
from magebench_client import cli
from submissions.models import Attempt, ModelEntry, Submission
from submissions.services import submission_result_rebuild
from submissions.templatetags.durations import duration

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _entry(team_name: str, model: str, *, public: bool, status: str = Submission.Status.COMPLETED,
           attempt_status: str = Attempt.Status.SCORED, seconds: float = 30.0) -> Submission:
    """An entry with one attempt per mini fixture scenario, each having taken ``seconds``."""
    team = team_get_or_create(name=team_name)
    entry = ModelEntry.objects.create(team=team, name=model, price_input_per_mtok=1.0, price_output_per_mtok=2.0)
    submission = Submission.objects.create(team=team, model=entry, environment_id="sokoban", flow="global",
                                           subset="mini", suite="fixture", status=status, is_public=public,
                                           settings={"repeats": 1})
    scored = attempt_status == Attempt.Status.SCORED
    Attempt.objects.bulk_create(
        Attempt(submission=submission, scenario=scenario, repeat=0, status=attempt_status,
                score=50.0 if scored else None, model_calls=2 if scored else 0,
                prompt_tokens=1000 if scored else None, completion_tokens=100 if scored else None,
                duration_seconds=seconds if scored else None)
        for scenario in Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True))
    if scored:
        submission_result_rebuild(submission_id=submission.id)
    return submission


def test_export_follows_retry_after_until_the_site_has_built_the_file_and_writes_it(
        capsys, live_server, lab, fixture_scenarios, tmp_path, exports_built_when_sent):
    import pandas

    submission = _entry("Lab", "exported model", public=False)
    site = ["--url", live_server.url, "--token", lab.read_token]
    out = tmp_path / "rows.parquet"
    code, _, err = run(capsys, *site, "export", str(submission.id), "--format", "parquet", "--out", str(out))
    assert code == 0, err
    # The first answer was a 202: the client waited the second it asked for, then got the file.
    assert f"the site is preparing the parquet export of submission {submission.id}; asking again in 1 s" in err
    assert f"wrote the parquet export of submission {submission.id}" in err and str(out) in err
    frame = pandas.read_parquet(out)
    assert len(frame) == submission.attempts.count() and set(frame["model"]) == {"exported model"}
    # 1000 prompt tokens at $1/M and 100 completion tokens at $2/M.
    assert list(frame["cost_usd"]) == pytest.approx([0.0012] * len(frame))
    assert not (tmp_path / "rows.parquet.part").exists()

    out = tmp_path / "rows.csv"
    assert run(capsys, *site, "export", str(submission.id), "--out", str(out))[0] == 0
    assert len(list(csv.DictReader(io.StringIO(out.read_text())))) == submission.attempts.count()

    out = tmp_path / "trajectories.zip"
    assert run(capsys, *site, "export", str(submission.id), "--format", "trajectories", "--out", str(out))[0] == 0
    assert "attempts.csv" in zipfile.ZipFile(out).namelist()
    assert run(capsys, *site, "export", str(submission.id), "--format", "trajectories", "--frames",
               "--out", str(tmp_path / "framed.zip"))[0] == 0
    assert "attempts.csv" in zipfile.ZipFile(tmp_path / "framed.zip").namelist()
    code, _, err = run(capsys, *site, "export", str(submission.id), "--frames", "--out", str(out))
    assert code == 2 and "--frames goes with --format trajectories" in err


def test_export_gives_up_once_the_site_has_prepared_nothing_for_longer_than_it_waits(
        capsys, live_server, fixture_scenarios, tmp_path, exports_built_when_sent, monkeypatch):
    from submissions import export_files

    monkeypatch.setattr(export_files, "_send_build", lambda spec: None)  # no worker takes the build
    submission = _entry("Open lab", "slow model", public=True)
    out = tmp_path / "rows.csv"
    code, _, err = run(capsys, "--url", live_server.url, "export", str(submission.id), "--wait", "1.5",
                       "--out", str(out))
    assert code == 2 and "was still preparing" in err and "give a longer --wait" in err
    assert "asking again in 1 s" in err
    assert not out.exists() and not (tmp_path / "rows.csv.part").exists()


def test_export_of_a_board_shows_the_tokens_teams_private_entries_and_nobody_elses(capsys, live_server, lab,
                                                                                 fixture_scenarios, tmp_path,
                                                                                 exports_built_when_sent):
    public = _entry("Open lab", "open model", public=True)
    private = _entry("Lab", "own model", public=False)
    out = tmp_path / "board.csv"
    board = ["export", "sokoban", "global", "mini", "--suite", "fixture", "--out", str(out)]

    code, _, err = run(capsys, "--url", live_server.url, "--token", lab.read_token, *board)
    assert code == 0, err
    assert "wrote the csv export of the sokoban/global/mini board" in err
    assert {int(row["submission"]) for row in csv.DictReader(io.StringIO(out.read_text()))} == {public.id, private.id}

    assert run(capsys, "--url", live_server.url, "--token", "", *board)[0] == 0
    assert {int(row["submission"]) for row in csv.DictReader(io.StringIO(out.read_text()))} == {public.id}


def test_export_refuses_what_is_not_a_submission_or_a_board_and_a_private_id_is_not_found(capsys, live_server,
                                                                                        fixture_scenarios, tmp_path):
    private = _entry("Hidden lab", "hidden model", public=False)
    out = tmp_path / "x.csv"
    code, _, err = run(capsys, "--url", live_server.url, "export", "sokoban", "global", "--out", str(out))
    assert code == 2 and "a submission id, or a board as ENV FLOW SUBSET" in err
    code, _, err = run(capsys, "--url", live_server.url, "export", str(private.id), "--out", str(out))
    assert code == 2 and "no such submission" in err
    assert not out.exists() and not (tmp_path / "x.csv.part").exists()


def test_status_prints_the_servers_estimate_of_the_time_left(capsys, live_server, lab, fixture_scenarios, client):
    # A finished entry of the board took 30 s per attempt: the estimate's per-attempt time.
    _entry("Earlier", "earlier model", public=True, seconds=30.0)
    waiting = _entry("Lab", "waiting model", public=False, status=Submission.Status.QUEUED,
                     attempt_status=Attempt.Status.PENDING)
    progress = client.get(f"/api/v1/submissions/{waiting.id}/", HTTP_AUTHORIZATION=f"Bearer {lab.read_token}"
                          ).json()["progress"]
    assert progress["eta_seconds"] >= 30 and progress["eta_basis"] == "recent runs of this board"

    code, out, _ = run(capsys, "--url", live_server.url, "--token", lab.read_token, "status", str(waiting.id))
    assert code == 0
    prefix = "at least" if progress["eta_is_lower_bound"] else "about"
    # The site's own wording of the same number (the submission page's duration filter).
    assert f"{prefix} {duration(progress['eta_seconds'])} left (per-attempt time from recent runs of this board)" in out


def test_without_an_estimate_the_client_prints_the_servers_reason_and_no_time(capsys, live_server, lab,
                                                                             fixture_scenarios):
    waiting = _entry("Lab", "first model", public=False, status=Submission.Status.QUEUED,
                     attempt_status=Attempt.Status.PENDING)
    code, out, _ = run(capsys, "--url", live_server.url, "--token", lab.read_token, "status", str(waiting.id))
    assert code == 0
    assert "time left unknown (no attempt of this board has finished yet)" in out
    assert " left" not in out.replace("time left unknown", "")
