"""The command-line client against a live site: submit, follow, download, and every way it refuses."""
from __future__ import annotations

import csv
import io
import json
import socket
import subprocess
import sys
import threading
import time

import pytest

from accounts.services import team_get_or_create
from conftest import ROOT
from submissions import cli
from submissions.engine import attempt_run
from submissions.models import Attempt, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

SECRET = "sk-local-endpoint-secret-31337"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_attempts(submission_id: int) -> None:
    # No Celery worker in these tests: the attempts the API queued are run here, in order.
    for attempt_id in Attempt.objects.filter(submission_id=submission_id).values_list("id", flat=True):
        attempt_run(attempt_id=attempt_id)


@pytest.fixture
def site(live_server, lab) -> list[str]:
    return ["--url", live_server.url, "--token", lab.write_token]


@pytest.fixture
def oracle_submission(capsys, site, fixture_scenarios, baseline_endpoint) -> int:
    code, out, err = run(capsys, *site, "submit-endpoint", "--model", "CLI oracle", "--env", "sokoban",
                         "--flow", "global", "--subset", "mini", "--suite", "fixture", "--public",
                         "--endpoint", baseline_endpoint("oracle").url, "--setting", "repeats=1")
    assert code == 0, err
    return int(out.strip())


def test_an_endpoint_submission_prints_its_id_and_follow_ends_on_a_full_bar(capsys, site, oracle_submission):
    submission = Submission.objects.get(id=oracle_submission)
    assert submission.model.name == "CLI oracle" and submission.settings["repeats"] == 1 and submission.is_public
    total = submission.attempts.count()
    run_attempts(oracle_submission)

    code, out, err = run(capsys, *site, "follow", str(oracle_submission), "--interval", "0.1")

    assert code == 0, err
    assert f"[{'#' * cli.BAR_WIDTH}] {total}/{total} scored {total} running 0 retrying 0 failed 0" in err
    assert f"submission {oracle_submission} completed" in err
    assert out == ""


def test_follow_shows_an_endpoint_error_once_and_still_ends_completed(capsys, site, fixture_scenarios,
                                                                     baseline_endpoint, settings):
    settings.MAGEBENCH_ENDPOINT_MAX_RETRIES = 1
    endpoint = baseline_endpoint("oracle", fault="500", first_n=2)
    code, out, err = run(capsys, *site, "submit-endpoint", "--model", "Flaky", "--env", "sokoban", "--flow", "global",
                         "--subset", "mini", "--suite", "fixture", "--endpoint", endpoint.url,
                         "--setting", "repeats=1")
    assert code == 0, err
    submission_id = int(out.strip())
    attempt_ids = list(Attempt.objects.filter(submission_id=submission_id).values_list("id", flat=True))
    assert attempt_run(attempt_id=attempt_ids[0]) is not None  # both requests fail: the attempt waits to retry
    exit_codes: list[int] = []
    follower = threading.Thread(target=lambda: exit_codes.append(
        cli.main([*site, "follow", str(submission_id), "--interval", "0.1"])), daemon=True)
    follower.start()
    time.sleep(1.0)  # several polls while the error is the latest one

    for attempt_id in attempt_ids:
        while attempt_run(attempt_id=attempt_id) is not None:
            time.sleep(0.3)
    follower.join(timeout=60)

    err = capsys.readouterr().err
    assert exit_codes == [0], err
    assert err.count("last error: ") == 1 and "server_error" in err
    assert f"submission {submission_id} completed" in err


def test_results_as_csv_have_one_row_per_attempt(capsys, site, oracle_submission, tmp_path):
    run_attempts(oracle_submission)
    path = tmp_path / "results.csv"

    code, _, err = run(capsys, *site, "results", str(oracle_submission), "--format", "csv", "--out", str(path))

    assert code == 0, err
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    attempts = Attempt.objects.filter(submission_id=oracle_submission).select_related("scenario")
    assert tuple(rows[0]) == cli.ATTEMPT_COLUMNS
    assert sorted((r["scenario"], r["repeat"]) for r in rows) == sorted((a.scenario.key, str(a.repeat))
                                                                       for a in attempts)
    assert {r["status"] for r in rows} == {"scored"} and all(float(r["score"]) == 100.0 for r in rows)


def test_results_as_json_are_the_submission_as_the_api_returns_it(capsys, site, oracle_submission):
    code, out, _ = run(capsys, *site, "results", str(oracle_submission))

    assert code == 0
    data = json.loads(out)
    assert data["id"] == oracle_submission and data["status"] == "queued"
    assert len(data["attempts"]) == data["progress"]["total"] > 0


def test_the_board_as_csv_contains_the_finished_model(capsys, site, oracle_submission):
    run_attempts(oracle_submission)

    code, out, err = run(capsys, *site, "board", "sokoban", "global", "mini", "--suite", "fixture")

    assert code == 0, err
    row = next(r for r in csv.DictReader(io.StringIO(out)) if r["model"] == "CLI oracle")
    assert float(row["mean"]) == pytest.approx(100.0) and row["team"] == "Lab"


def test_the_board_as_json_keeps_only_verified_entries_when_asked(capsys, site, oracle_submission):
    run_attempts(oracle_submission)

    board = [*site, "board", "sokoban", "global", "mini", "--suite", "fixture", "--format", "json"]
    _, everything, _ = run(capsys, *board)
    _, verified, _ = run(capsys, *board, "--verified")

    assert "CLI oracle" in [r["model"] for r in json.loads(everything)["rows"]]
    assert "CLI oracle" not in [r["model"] for r in json.loads(verified)["rows"]]


def test_status_summarises_a_finished_submission_with_its_mean_score(capsys, site, oracle_submission):
    run_attempts(oracle_submission)

    code, out, _ = run(capsys, *site, "status", str(oracle_submission))

    assert code == 0
    assert (f"submission {oracle_submission}: CLI oracle (Lab) on sokoban/global/mini, suite fixture, "
            "run on its endpoint") in out
    assert "status: completed" in out and "mean score 100.00" in out


def test_a_cancelled_submission_makes_follow_exit_1(capsys, site, oracle_submission):
    code, out, _ = run(capsys, *site, "cancel", str(oracle_submission))
    assert code == 0 and out.strip() == f"submission {oracle_submission}: cancelled"

    code, _, err = run(capsys, *site, "follow", str(oracle_submission), "--interval", "0.1")

    assert code == 1
    assert f"submission {oracle_submission} cancelled: cancelled by the submitter" in err


def test_an_invalid_jsonl_upload_exits_2_and_lists_every_problem_line(capsys, site, fixture_scenarios, tmp_path):
    upload = tmp_path / "runs.jsonl"
    upload.write_text('{"scenario": 5}\nnot json at all\n{"scenario": 7}\n', encoding="utf-8")

    code, out, err = run(capsys, *site, "upload", str(upload), "--model", "Broken upload", "--env", "sokoban",
                         "--flow", "global", "--subset", "mini", "--suite", "fixture")

    assert code == 2 and out == ""
    assert "the upload was refused" in err
    assert all(f"line {n}" in err for n in (1, 2, 3)), err
    assert not Submission.objects.exists()


def test_a_missing_upload_file_is_reported_without_contacting_the_site(capsys, site, tmp_path):
    code, _, err = run(capsys, *site, "upload", str(tmp_path / "absent.jsonl"), "--model", "M", "--env", "sokoban",
                       "--flow", "global", "--subset", "mini")

    assert code == 2 and "cannot read" in err and "absent.jsonl" in err


def test_a_read_only_token_cannot_submit(capsys, live_server, lab, fixture_scenarios):
    code, out, err = run(capsys, "--url", live_server.url, "--token", lab.read_token, "submit-endpoint",
                         "--model", "M", "--env", "sokoban", "--flow", "global", "--subset", "mini",
                         "--suite", "fixture", "--endpoint", "http://127.0.0.1:9/v1")

    assert code == 2 and out == ""
    assert "read-only" in err
    assert lab.read_token not in err


def test_a_team_out_of_daily_quota_is_told_when_it_frees_up(capsys, site, lab, oracle_submission, baseline_endpoint):
    lab.team.quota_per_day = 1
    lab.team.save(update_fields=["quota_per_day"])

    code, out, err = run(capsys, *site, "submit-endpoint", "--model", "Second", "--env", "sokoban", "--flow",
                         "global", "--subset", "mini", "--suite", "fixture", "--endpoint",
                         baseline_endpoint("oracle").url)

    assert code == 2 and out == ""
    assert "quota reached" in err and "frees up at" in err


def test_another_teams_private_submission_is_reported_with_the_apis_message(capsys, site, fixture_scenarios):
    model = model_entry_upsert(team=team_get_or_create(name="Rivals"), name="Secret model")
    private = submission_create_endpoint(model=model, env="sokoban", flow="global", subset="mini", suite="fixture",
                                         endpoint_url="http://127.0.0.1:9/v1", is_public=False)

    code, out, err = run(capsys, *site, "status", str(private.id))

    assert code == 2 and out == ""
    assert err == "error: no such submission\n"


def test_an_unreachable_site_exits_3(capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"

    code, out, err = run(capsys, "--url", url, "--token", "mbr_not_sent_anywhere", "me")

    assert code == 3 and out == ""
    assert err.startswith(f"cannot reach {url}: ")
    assert "mbr_not_sent_anywhere" not in err


def test_me_lists_the_team_with_its_quota_and_never_the_token(capsys, site, lab, settings):
    settings.MAGEBENCH_QUOTA_PER_DAY = 5
    code, out, err = run(capsys, *site, "me")

    assert code == 0
    assert "user ada · token read-write" in out
    assert "Lab (lab), owner: 5 of 5 submissions left today" in out
    assert lab.write_token not in out + err


def test_the_api_key_comes_from_the_environment_and_never_reaches_argv_or_output(
        capsys, site, fixture_scenarios, baseline_endpoint, monkeypatch):
    monkeypatch.setenv("ENDPOINT_KEY", SECRET)
    endpoint = baseline_endpoint("oracle", api_key=SECRET)
    argv = [*site, "submit-endpoint", "--model", "Keyed", "--env", "sokoban", "--flow", "global", "--subset", "mini",
            "--suite", "fixture", "--endpoint", endpoint.url, "--api-key-env", "ENDPOINT_KEY",
            "--setting", "repeats=1"]

    code, out, err = run(capsys, *argv)
    assert code == 0, err
    submission_id = int(out.strip())
    run_attempts(submission_id)
    outputs = [out, err, *run(capsys, *site, "results", str(submission_id))[1:],
               *run(capsys, *site, "status", str(submission_id))[1:]]

    assert SECRET not in " ".join(argv)
    assert not any(SECRET in text for text in outputs)
    # The endpoint refuses a wrong key, so every attempt scoring shows the key did arrive.
    assert set(Attempt.objects.filter(submission_id=submission_id).values_list("status", flat=True)) == {"scored"}


def test_an_unset_api_key_variable_is_refused_before_anything_is_sent(capsys, site, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)

    code, _, err = run(capsys, *site, "submit-endpoint", "--model", "M", "--env", "sokoban", "--flow", "global",
                       "--subset", "mini", "--endpoint", "http://127.0.0.1:9/v1", "--api-key-env", "NO_SUCH_KEY_VAR")

    assert code == 2 and "NO_SUCH_KEY_VAR is not set" in err
    assert not Submission.objects.exists()


def test_on_a_terminal_the_progress_line_is_redrawn_in_place():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    line = cli.StatusLine(stream)
    running, error, done = "[#.] 1/2 running 1", "last error: timeout: no reply", "[##] 2/2"
    line.draw(running)
    line.note(error)
    line.draw(done)
    line.finish()

    # The shorter last line is padded over the longer one it replaces; the note keeps a line of its own.
    assert stream.getvalue() == f"\r{running}\r{error}\n{running}\r{done.ljust(len(running))}\n"


def test_the_eta_reads_as_minutes_and_says_when_it_is_only_a_lower_bound():
    assert cli.eta_text(170, lower_bound=False) == "about 3 min left"
    assert cli.eta_text(20, lower_bound=False) == "about 1 min left"
    assert cli.eta_text(2 * 3600 + 5 * 60, lower_bound=True) == "at least 2 h 05 min left"


def test_the_client_runs_as_a_module_without_importing_django():
    check = ("import sys, runpy; sys.argv = ['cli', '--help']\n"
             "try:\n    runpy.run_module('submissions.cli', run_name='__main__')\n"
             "except SystemExit as exit:\n    assert exit.code == 0\n"
             "assert not [m for m in sys.modules if m == 'django' or m.startswith('django.')], 'django imported'\n")
    result = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=60)

    assert result.returncode == 0, result.stderr
    assert "submit-endpoint" in result.stdout and "Exit codes" in result.stdout
