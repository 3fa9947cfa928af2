"""`python -m magebench_client check` reads a file of outputs the way an upload is read, against a live
site, and stores nothing."""
from __future__ import annotations

import pytest

from conftest import ROOT
from magebench_client import cli
from magebench_client.commands import EXIT_OK, EXIT_REFUSED
from submissions.models import ModelEntry, Submission

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_check_says_what_a_valid_file_holds_and_lists_every_problem_of_a_bad_one(capsys, live_server, lab,
                                                                                  fixture_scenarios, tmp_path):
    site = ["--url", live_server.url, "--token", lab.read_token]
    board = ["--env", "sokoban", "--flow", "online", "--subset", "full", "--suite", "fixture"]
    good = ROOT / "fixtures" / "uploads" / "example-sokoban-online.jsonl"
    code, out, err = run(capsys, *site, "check", str(good), *board)
    assert code == EXIT_OK, err
    lines = out.splitlines()
    assert lines[0] == "valid: 4 run(s) of 2 scenario(s), up to 2 repeat(s), suite fixture"
    assert "have no run (the entry would be incomplete)" in lines[1]

    bad = tmp_path / "runs.jsonl"
    bad.write_text('{"scenario": 5}\nnot json at all\n', encoding="utf-8")
    code, out, err = run(capsys, *site, "check", str(bad), *board)
    assert code == EXIT_REFUSED and out == ""
    assert all(f"line {n}" in err for n in (1, 2)), err
    assert not Submission.objects.exists() and not ModelEntry.objects.exists()


def test_check_of_a_large_file_waits_for_the_workers_check_and_says_the_same(capsys, live_server, lab,
                                                                            fixture_scenarios, celery_workers,
                                                                            settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MAGEBENCH_UPLOAD_CHECK_ASYNC_BYTES = 10
    celery_workers("w1", concurrency=1)
    site = ["--url", live_server.url, "--token", lab.read_token]
    board = ["--env", "sokoban", "--flow", "online", "--subset", "full", "--suite", "fixture", "--interval", "0.2"]
    good = ROOT / "fixtures" / "uploads" / "example-sokoban-online.jsonl"
    code, out, err = run(capsys, *site, "check", str(good), *board)
    assert code == EXIT_OK, err
    assert out.splitlines()[0] == "valid: 4 run(s) of 2 scenario(s), up to 2 repeat(s), suite fixture"

    bad = tmp_path / "runs.jsonl"
    bad.write_text('{"scenario": 5}\nnot json at all\n', encoding="utf-8")
    code, out, err = run(capsys, *site, "check", str(bad), *board)
    assert code == EXIT_REFUSED and out == ""
    assert all(f"line {n}" in err for n in (1, 2)), err
