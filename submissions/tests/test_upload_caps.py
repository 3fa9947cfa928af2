"""An upload is read within caps on its lines, runs and replies and within a time budget: the check
stops at the first cap reached, names it and the place, and a refused file stores nothing."""
from __future__ import annotations

import io
import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.urls import reverse

from submissions.models import Attempt, ModelEntry, Submission
from submissions.tests.test_uploads import jsonl, make_zip, problems_of, run_folder, sokoban
from submissions.uploads import UploadLimits
from submissions.uploads import context as upload_context
from submissions.uploads import jsonl as jsonl_format

LINE_CAP = "the file has {lines} lines: the cap is {cap} lines per file; upload it in parts"


def run(scenario: str = "3-Sokoban-small-v0", repeat: int = 0, replies: int = 1) -> dict[str, Any]:
    return {"scenario": scenario, "repeat": repeat, "replies": ["### Actions\nUp"] * replies}


@pytest.fixture
def lines_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any line parsed fails the test: a capped file must be refused before its lines are read."""
    def parse_line(*args: Any) -> None:
        raise AssertionError("a line was parsed")
    monkeypatch.setattr(jsonl_format, "_parse_line", parse_line)


def test_a_jsonl_of_200000_lines_is_refused_at_the_line_cap_before_any_line_is_parsed(lines_unread) -> None:
    data = b"\n".join(json.dumps(run(repeat=n % 20)).encode() for n in range(200_000))
    assert problems_of(lambda: sokoban(data)) == ["line 20001: " + LINE_CAP.format(lines=200_000, cap=20_000)]


def test_blank_lines_count_towards_the_line_cap_and_a_final_line_end_does_not(lines_unread) -> None:
    limits = UploadLimits(max_lines=3)
    assert problems_of(lambda: sokoban(b"\n\n\n\n", limits=limits)) == [
        "line 4: " + LINE_CAP.format(lines=4, cap=3)]
    assert problems_of(lambda: sokoban(b"\n\n\n", limits=limits)) == ["upload: the file contains no runs"]


def test_a_jsonl_past_the_run_cap_stops_at_the_first_run_past_it() -> None:
    data = jsonl(*(run(repeat=n) for n in range(5)))
    assert problems_of(lambda: sokoban(data, limits=UploadLimits(max_runs=3))) == [
        "line 4: more than 3 runs: the cap is 3 runs per file; upload it in parts"]
    assert len(sokoban(data, limits=UploadLimits(max_runs=5))) == 5


def test_a_zip_past_the_run_cap_stops_at_the_first_run_folder_past_it() -> None:
    files: dict[str, str | bytes] = {}
    for repeat in range(3):
        files.update(run_folder(f"3-Sokoban-small-v0_r{repeat}", replies=["### Actions\nUp"]))
    assert problems_of(lambda: sokoban(make_zip(files), limits=UploadLimits(max_runs=2))) == [
        "3-Sokoban-small-v0_r2/: more than 2 runs: the cap is 2 runs per file; upload it in parts"]


def test_a_run_past_the_reply_cap_is_refused_before_its_schema_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl_format, "_schema_errors", lambda *args: pytest.fail("the schema was checked"))
    data = jsonl(run(replies=4))
    assert problems_of(lambda: sokoban(data, limits=UploadLimits(max_replies_per_run=3))) == [
        "line 1: replies: 4 replies: the cap is 3 replies per run (one per model call)"]


def test_actions_count_towards_the_reply_cap_of_their_run() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "actions": ["Up"] * 4})
    assert problems_of(lambda: sokoban(data, limits=UploadLimits(max_replies_per_run=3))) == [
        "line 1: actions: 4 actions: the cap is 3 actions per run (one per model call)"]


def test_official_reply_files_past_the_reply_cap_are_refused_naming_their_folder() -> None:
    folder = "3-Sokoban-small-v0_r0"
    files: dict[str, str | bytes] = {f"{folder}/eval.json": json.dumps({"result": 1.0})}
    files.update({f"{folder}/output_{k}.txt": "### Actions\nUp" for k in range(4)})
    assert problems_of(lambda: sokoban(make_zip(files), limits=UploadLimits(max_replies_per_run=3))) == [
        f"{folder}/: 4 reply files: the cap is 3 reply files per run (one per model call)"]


def test_replies_past_the_cap_of_the_file_stop_the_check_at_the_run_that_passes_it() -> None:
    data = jsonl(*(run(repeat=n, replies=2) for n in range(3)))
    assert problems_of(lambda: sokoban(data, limits=UploadLimits(max_replies=5))) == [
        "line 3: replies: more than 5 replies and actions in the file: the cap is 5 per file; upload it in parts"]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock one second further on each time it is read: the check's own reads are its steps."""
    ticks = itertools.count()
    monkeypatch.setattr(upload_context.time, "monotonic", lambda: float(next(ticks)))


def test_a_check_past_its_time_budget_is_refused_naming_where_it_stopped(clock) -> None:
    data = jsonl(*(run(repeat=n) for n in range(5)))
    assert problems_of(lambda: sokoban(data, limits=UploadLimits(max_seconds=2.5))) == [
        "line 3: checking stopped here: the file takes longer than the 2.5 s a check may take; upload it in parts"]


def test_a_zip_check_past_its_time_budget_is_refused_naming_the_member_it_stopped_at(clock) -> None:
    files: dict[str, str | bytes] = {}
    for repeat in range(3):
        files.update(run_folder(f"3-Sokoban-small-v0_r{repeat}", replies=["### Actions\nUp"]))
    problems = problems_of(lambda: sokoban(make_zip(files), limits=UploadLimits(max_seconds=2.5)))
    assert problems == ["3-Sokoban-small-v0_r0/replies.json: checking stopped here: the file takes longer than "
                        "the 2.5 s a check may take; upload it in parts"]


def test_a_file_that_runs_the_process_out_of_memory_is_refused_not_crashed(monkeypatch: pytest.MonkeyPatch) -> None:
    def parse_line(*args: Any) -> None:
        raise MemoryError
    monkeypatch.setattr(jsonl_format, "_parse_line", parse_line)
    assert problems_of(lambda: sokoban(jsonl(run()))) == [
        "upload: the file needs more memory to check than the site has free now; upload it in parts"]


# --- through the site: the settings, and nothing stored ----------------------------------------------

def _stored() -> tuple[int, int, int]:
    return ModelEntry.objects.count(), Submission.objects.count(), Attempt.objects.count()


def _file(data: bytes) -> io.BytesIO:
    file = io.BytesIO(data)
    file.name = "runs.jsonl"
    return file


@pytest.mark.django_db
@pytest.mark.parametrize("post", [
    pytest.param(lambda lab, data: lab.client.post(reverse("api-upload"), {
        "model_name": "Capped", "env": "sokoban", "flow": "online", "subset": "mini", "suite": "fixture",
        "file": _file(data)}, **lab.auth()), id="upload"),
    pytest.param(lambda lab, data: lab.client.post(reverse("api-upload-check"), {
        "env": "sokoban", "flow": "online", "subset": "mini", "suite": "fixture", "file": _file(data)},
        **lab.auth()), id="check"),
])
def test_the_line_cap_of_the_settings_refuses_an_upload_naming_the_line_and_nothing_is_stored(
        lab, fixture_scenarios, settings, tmp_path, post: Callable[..., Any]) -> None:
    settings.MEDIA_ROOT = tmp_path
    settings.MAGEBENCH_UPLOAD_MAX_LINES = 3
    before = _stored()
    response = post(lab, jsonl(*(run(repeat=n) for n in range(4))))
    assert response.status_code == 400, response.content
    assert response.json()["extra"]["problems"] == ["line 4: " + LINE_CAP.format(lines=4, cap=3)]
    assert _stored() == before and not any(tmp_path.iterdir())


@pytest.mark.django_db
def test_the_time_budget_of_the_settings_refuses_an_upload_cleanly(lab, fixture_scenarios, settings,
                                                                   tmp_path) -> None:
    settings.MEDIA_ROOT = tmp_path
    settings.MAGEBENCH_UPLOAD_CHECK_SECONDS = 0.0
    before = _stored()
    response = lab.client.post(reverse("api-upload"), {
        "model_name": "Slow", "env": "sokoban", "flow": "online", "subset": "mini", "suite": "fixture",
        "file": _file(jsonl(run()))}, **lab.auth())
    assert response.status_code == 400, response.content
    assert response.json()["extra"]["problems"] == [
        "line 1: checking stopped here: the file takes longer than the 0 s a check may take; upload it in parts"]
    assert _stored() == before and not any(tmp_path.iterdir())
