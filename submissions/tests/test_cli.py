"""The command-line client against a live site: submit, follow, download, and every way it refuses."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime

import pytest

from accounts.services import team_get_or_create
from conftest import ROOT
from leaderboard.tests.board_entries import board_entries
from magebench_client import cli, commands
from magebench_client.api import Client
from magebench_client.commands import ATTEMPT_COLUMNS, EXIT_BROKEN_PIPE
from magebench_client.output import BAR_WIDTH, StatusLine, eta_text, time_text
from submissions.engine import attempt_run
from submissions.models import Attempt, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

SECRET = "sk-local-endpoint-secret-31337"
#: One repeat of small frames: these tests read what the client prints, not the pictures.
SMALL_RUN = ("--setting", "repeats=1", "--setting", "resolution=256")


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
                         "--endpoint", baseline_endpoint("oracle").url, *SMALL_RUN)
    assert code == 0, err
    return int(out.strip())


def test_an_endpoint_submission_prints_its_id_and_follow_ends_on_a_full_bar(capsys, site, oracle_submission):
    submission = Submission.objects.get(id=oracle_submission)
    assert submission.model.name == "CLI oracle" and submission.settings["repeats"] == 1 and submission.is_public
    total = submission.attempts.count()
    run_attempts(oracle_submission)

    code, out, err = run(capsys, *site, "follow", str(oracle_submission), "--interval", "0.1")

    assert code == 0, err
    assert f"[{'#' * BAR_WIDTH}] {total}/{total} scored {total} running 0 retrying 0 failed 0" in err
    assert f"submission {oracle_submission} completed" in err
    assert out == ""


def test_follow_ends_with_the_score_its_confidence_interval_and_rank_as_the_board_shows_them(
        capsys, site, oracle_submission, baseline_endpoint, client):
    code, out, err = run(capsys, *site, "submit-endpoint", "--model", "Idle", "--env", "sokoban", "--flow", "global",
                         "--subset", "mini", "--suite", "fixture", "--endpoint", baseline_endpoint("idle").url,
                         *SMALL_RUN)
    assert code == 0, err
    idle = int(out.strip())
    run_attempts(oracle_submission)
    run_attempts(idle)
    board = client.get("/api/v1/boards/sokoban/global/mini/", {"suite": "fixture"},
                       HTTP_AUTHORIZATION=f"Bearer {site[-1]}").json()
    row = next(r for r in board["rows"] if r["submission"] == idle)
    assert row["se"] > 0  # a spread to show: the idle agent's score differs from level to level

    _, _, idle_err = run(capsys, *site, "follow", str(idle), "--interval", "0.1")
    _, _, oracle_err = run(capsys, *site, "follow", str(oracle_submission), "--interval", "0.1")

    assert idle_err.splitlines()[-1] == (
        f"{board['score_label']}: {row['mean']:.2f} ± {row['se']:.2f} (95% CI {row['ci95_low']:.2f} to "
        f"{row['ci95_high']:.2f}) over {row['scenarios']} scenario(s); rank 2 of 2 on the sokoban/global/mini board, "
        "suite fixture")
    assert oracle_err.splitlines()[-1].endswith("rank 1 of 2 on the sokoban/global/mini board, suite fixture "
                                                "(the leader)")
    assert oracle_err.splitlines()[-2] == f"submission {oracle_submission} completed"


def test_a_followed_submission_that_is_not_on_its_board_ends_with_its_mean_attempt_score(capsys, site,
                                                                                       oracle_submission):
    attempt_run(attempt_id=Attempt.objects.filter(submission_id=oracle_submission).values_list("id", flat=True)[0])
    run(capsys, *site, "cancel", str(oracle_submission))

    code, _, err = run(capsys, *site, "follow", str(oracle_submission), "--interval", "0.1")

    assert code == 1
    assert err.splitlines()[-1] == "mean score 100.00 over 1 scored attempt(s)"


def test_follow_shows_an_endpoint_error_once_and_still_ends_completed(capsys, site, fixture_scenarios,
                                                                     baseline_endpoint, settings, wait_for):
    settings.MAGEBENCH_ENDPOINT_MAX_RETRIES = 1
    endpoint = baseline_endpoint("oracle", fault="500", first_n=2)
    code, out, err = run(capsys, *site, "submit-endpoint", "--model", "Flaky", "--env", "sokoban", "--flow", "global",
                         "--subset", "mini", "--suite", "fixture", "--endpoint", endpoint.url,
                         *SMALL_RUN)
    assert code == 0, err
    submission_id = int(out.strip())
    attempt_ids = list(Attempt.objects.filter(submission_id=submission_id).values_list("id", flat=True))
    assert attempt_run(attempt_id=attempt_ids[0]) is not None  # both requests fail: the attempt waits to retry
    exit_codes: list[int] = []
    follower = threading.Thread(target=lambda: exit_codes.append(
        cli.main([*site, "follow", str(submission_id), "--interval", "0.1"])), daemon=True)
    follower.start()
    shown: list[str] = []

    def error_shown() -> bool:
        shown.append(capsys.readouterr().err)
        return "last error: " in "".join(shown)

    wait_for(error_shown, 60, "follow to show the endpoint's error")
    # More polls while the error is still the latest one; on a busy machine there may be fewer, which
    # weakens the check but cannot make it fail.
    time.sleep(1.0)

    for attempt_id in attempt_ids:
        while attempt_run(attempt_id=attempt_id) is not None:
            time.sleep(0.3)
    follower.join(timeout=60)

    err = "".join(shown) + capsys.readouterr().err
    assert exit_codes == [0], err
    assert err.count("last error: ") == 1 and "server_error" in err
    assert f"submission {submission_id} completed" in err


def test_results_as_csv_have_one_row_per_attempt(capsys, site, oracle_submission, tmp_path, exports_built_when_sent):
    run_attempts(oracle_submission)
    path = tmp_path / "results.csv"

    code, _, err = run(capsys, *site, "results", str(oracle_submission), "--format", "csv", "--out", str(path))

    assert code == 0, err
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    attempts = Attempt.objects.filter(submission_id=oracle_submission).select_related("scenario")
    assert tuple(rows[0]) == ATTEMPT_COLUMNS
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


def test_the_board_command_reads_every_page_of_a_board_longer_than_one(capsys, monkeypatch, site,
                                                                        fixture_scenarios, lab):
    entries = board_entries(lab.team)
    monkeypatch.setattr(commands, "BOARD_PAGE", 1)

    code, out, err = run(capsys, *site, "board", "sokoban", "global", "mini", "--suite", "fixture", "--format",
                         "json")

    assert code == 0, err
    board = json.loads(out)
    assert [(r["model"], r["rank"]) for r in board["rows"]] == [("Vision-7B", 1), ("Tiny", 2), ("Partial", None)]
    assert board["count"] == 3 and board["next"] is None
    # A followed submission's row is found on whichever page it is.
    partial = {"id": entries.partial.id, "env": "sokoban", "flow": "global", "subset": "mini", "suite": "fixture"}
    found = commands.board_row(Client(site[1], None), partial)
    assert found is not None and found[1]["model"] == "Partial"


def test_status_summarises_a_finished_submission_with_its_mean_score(capsys, site, oracle_submission):
    run_attempts(oracle_submission)

    code, out, _ = run(capsys, *site, "status", str(oracle_submission))

    assert code == 0
    assert (f"submission {oracle_submission}: CLI oracle (Lab) on sokoban/global/mini, suite fixture, "
            "run on its endpoint") in out
    assert "status: completed" in out and "mean score 100.00" in out
    # Times as a person reads them, in UTC, never the API's ISO text with its microseconds.
    assert re.search(r"^created \d{4}-\d\d-\d\d \d\d:\d\d UTC \((just now|\d+ min ago)\) · started .* · "
                     r"finished .* UTC \(", out, re.M), out
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:", out), out


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
    assert "is --url the site's address, and is the site up?" in err
    assert "mbr_not_sent_anywhere" not in err


def _free_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_an_unreachable_default_address_says_how_to_set_the_sites_address(capsys, monkeypatch):
    monkeypatch.delenv("MAGEBENCH_URL", raising=False)
    monkeypatch.setattr(cli, "DEFAULT_URL", _free_port_url())

    code, out, err = run(capsys, "me")

    assert code == 3 and out == ""
    assert err.startswith(f"cannot reach {cli.DEFAULT_URL}: ")
    assert f"no site address was given, so the CLI tried {cli.DEFAULT_URL}: set MAGEBENCH_URL or pass --url" in err
    assert "Traceback" not in err


def test_an_unreachable_address_from_the_environment_names_the_variable(capsys, monkeypatch):
    monkeypatch.setenv("MAGEBENCH_URL", _free_port_url())

    code, _, err = run(capsys, "me")

    assert code == 3 and "is MAGEBENCH_URL the site's address" in err


def test_an_unknown_setting_is_refused_with_the_list_of_valid_ones(capsys, site, fixture_scenarios):
    code, out, err = run(capsys, *site, "submit-endpoint", "--model", "M", "--env", "sokoban", "--flow", "global",
                         "--subset", "mini", "--suite", "fixture", "--endpoint", "http://127.0.0.1:9/v1",
                         *SMALL_RUN, "--setting", "foo=1")

    assert code == 2 and out == ""
    listed = re.search(r"unknown setting 'foo'; the settings are (.+)", err)
    assert listed, err
    assert {"repeats", "temperature", "max_tokens"} <= set(listed.group(1).split(", "))
    assert not Submission.objects.exists()


def test_results_piped_into_a_reader_that_stops_early_exit_quietly(live_server, lab, oracle_submission):
    # A reader gone before the first byte, as `results 7 | head -c0` would be: every write fails.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "magebench_client", "--url", live_server.url, "--token",
                               lab.write_token, "results", str(oracle_submission)],
                              stdout=write_end, stderr=subprocess.PIPE, cwd=ROOT, text=True, timeout=120)
    finally:
        os.close(write_end)

    assert done.stderr == ""
    assert done.returncode == EXIT_BROKEN_PIPE


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
            *SMALL_RUN]

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
    line = StatusLine(stream)
    running, error, done = "[#.] 1/2 running 1", "last error: timeout: no reply", "[##] 2/2"
    line.draw(running)
    line.note(error)
    line.draw(done)
    line.finish()

    # The shorter last line is padded over the longer one it replaces; the note keeps a line of its own.
    assert stream.getvalue() == f"\r{running}\r{error}\n{running}\r{done.ljust(len(running))}\n"


def test_api_times_read_as_utc_minutes_with_how_long_ago_or_how_long_until():
    now = datetime(2026, 11, 24, 11, 32, 30, tzinfo=UTC)

    assert time_text("2026-11-24T11:29:10.123456Z", now) == "2026-11-24 11:29 UTC (3 min ago)"
    assert time_text("2026-11-24T13:37:30+00:00", now) == "2026-11-24 13:37 UTC (in 2 h 05 min)"
    assert time_text("2026-11-24T12:32:10+01:00", now) == "2026-11-24 11:32 UTC (just now)"
    assert time_text("2026-11-20T11:32:30Z", now) == "2026-11-20 11:32 UTC (4 days ago)"
    assert time_text("not a time", now) == "not a time"


def test_the_next_free_daily_slot_is_shown_as_a_time_and_how_long_until_it(capsys, site, oracle_submission):
    code, out, _ = run(capsys, *site, "me")

    assert code == 0
    assert re.search(r"the next daily one frees up at \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in (23 h 59 min|24 h 00 min)\)",
                     out), out


def test_the_eta_reads_as_the_site_writes_it_and_says_when_it_is_only_a_lower_bound():
    assert eta_text(170, lower_bound=False) == "about 3 min left"
    # Under a minute and a half it is seconds, as on the queue page: not a rounded-up "1 min".
    assert eta_text(20, lower_bound=False) == "about 20 s left"
    assert eta_text(2 * 3600 + 5 * 60, lower_bound=True) == "at least 2 h 05 min left"
    assert eta_text(600, lower_bound=False, basis="this submission") == \
        "about 10 min left (per-attempt time from this submission)"


def test_the_client_runs_as_a_module_without_importing_django():
    check = ("import sys, runpy; sys.argv = ['cli', '--help']\n"
             "try:\n    runpy.run_module('magebench_client', run_name='__main__')\n"
             "except SystemExit as exit:\n    assert exit.code == 0\n"
             "assert not [m for m in sys.modules if m == 'django' or m.startswith('django.')], 'django imported'\n")
    result = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=60)

    assert result.returncode == 0, result.stderr
    assert "submit-endpoint" in result.stdout and "Exit codes" in result.stdout
