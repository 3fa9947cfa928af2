"""What the site shows and serves about an attempt names no place on the server's disks.

Replays, trajectory JSON, the attempt's downloads and its error messages give paths relative to the
data directory (or none at all): an absolute path tells a visitor how the server is laid out.
"""
from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from accounts.services import team_get_or_create
from catalogue.models import Scenario
from conftest import FIXTURE_RESOURCES, ROOT
from submissions.engine import attempt_run
from submissions.models import Attempt, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint

pytestmark = pytest.mark.integration


def _server_places() -> list[str]:
    places = {settings.DATA_DIR, settings.MEDIA_ROOT, settings.SCENARIO_ROOT, ROOT, Path(tempfile.gettempdir())}
    return sorted({str(place) for place in places} | {str(Path(place).resolve()) for place in places})


def _leaks(text: str) -> list[str]:
    return [place for place in _server_places() if place in text]


def _run(url: str, env: str, flow: str, **settings_) -> Submission:
    team = team_get_or_create(name="Lab")
    model = model_entry_upsert(team=team, name=f"{env} model")
    submission = submission_create_endpoint(model=model, env=env, flow=flow, subset="mini", suite="fixture",
                                            endpoint_url=url, settings={"repeats": 1, **settings_}, is_public=True)
    for attempt_id in submission.attempts.values_list("id", flat=True):
        attempt_run(attempt_id=attempt_id)
    return submission


def _everything_shown_about(client: Client, attempt: Attempt) -> dict[str, str]:
    shown = {
        "replay": client.get(reverse("attempt-replay", args=[attempt.id])).content.decode(),
        "trajectory": client.get(reverse("api-attempt-trajectory", args=[attempt.id])).content.decode(),
        "submission page": client.get(reverse("submission-detail", args=[attempt.submission_id])).content.decode(),
        "submission api": client.get(reverse("api-submission-detail", args=[attempt.submission_id])).content.decode(),
        "queue": client.get(reverse("queue")).content.decode(),
    }
    trace = client.get(reverse("attempt-trace", args=[attempt.id]))
    if trace.status_code == 200:
        # The trace is a FileResponse; the stubs type the test client's response as a plain one.
        with zipfile.ZipFile(io.BytesIO(b"".join(trace.streaming_content))) as archive:  # type: ignore[attr-defined]
            for name in archive.namelist():
                shown[f"trace.zip {name}"] = archive.read(name).decode("utf-8", errors="replace")
    return shown


def _leaks_of(attempts: list[Attempt]) -> dict[tuple[int, str], list[str]]:
    client = Client()
    found = {}
    for attempt in attempts:
        for what, text in _everything_shown_about(client, attempt).items():
            if _leaks(text):
                found[(attempt.id, what)] = _leaks(text)
    return found


@pytest.mark.django_db(transaction=True)
def test_replays_trajectories_and_trace_downloads_of_played_attempts_contain_no_server_path(
        fixture_scenarios, baseline_endpoint):
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import start_server

    _run(baseline_endpoint("oracle").url, "sokoban", "online", resolution=256, max_loop=4)
    with start_server(make_agent("degraded", pages=[FIXTURE_RESOURCES / "WebUI"])) as server:
        _run(server.url, "webui", "global")
    attempts = list(Attempt.objects.filter(status=Attempt.Status.SCORED).order_by("id"))
    assert {a.submission.environment_id for a in attempts} == {"sokoban", "webui"}
    webui = [a for a in attempts if a.submission.environment_id == "webui"]
    assert all(Client().get(reverse("attempt-trace", args=[a.id])).status_code == 200 for a in webui)
    assert _leaks_of(attempts) == {}


@pytest.mark.django_db(transaction=True)
def test_a_generated_page_reaching_outside_its_folder_is_reported_without_the_server_s_folders(lab, fixture_scenarios):
    scenario = Scenario.objects.filter(environment_id="webui", suite="fixture", in_mini=True).order_by("key").first()
    page = ("<!doctype html><html><head><link rel='stylesheet' href='../outside.css'></head>"
            "<body><img src='../../elsewhere/secret.png'><p>Steps</p></body></html>")
    line = json.dumps({"scenario": scenario.key, "repeat": 0, "code": {"html": page}})
    upload = io.BytesIO(line.encode())
    upload.name = "runs.jsonl"
    response = lab.client.post(reverse("api-upload"), {"model_name": "Reacher", "env": "webui", "flow": "global",
                                                       "subset": "mini", "suite": "fixture", "public": "true",
                                                       "file": upload}, **lab.auth())
    assert response.status_code == 201, response.content
    attempt = Attempt.objects.get(submission_id=response.json()["id"], scenario=scenario)
    attempt_run(attempt_id=attempt.id)
    attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.SCORED
    shown = _everything_shown_about(Client(), attempt)
    assert "outside.css" in shown["trajectory"]  # the blocked request is still reported
    assert {what: _leaks(text) for what, text in shown.items() if _leaks(text)} == {}


@pytest.mark.django_db(transaction=True)
def test_an_attempt_failed_by_a_broken_resource_names_it_relative_to_the_data_directory(
        fixture_scenarios, baseline_endpoint):
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import start_server

    scenario = Scenario.objects.filter(environment_id="webui", suite="fixture", in_mini=True).order_by("key").first()
    folder = Path(scenario.resource_path)
    folder = folder if folder.is_absolute() else settings.SCENARIO_ROOT / folder
    # The imported page folder is shared by every later test of this process: put it back.
    actions = folder / "actions.py"
    original = actions.read_bytes()
    actions.write_text("def broken(:\n")
    try:
        with start_server(make_agent("oracle", pages=[FIXTURE_RESOURCES / "WebUI"])) as server:
            submission = _run(server.url, "webui", "global")
    finally:
        actions.write_bytes(original)
    failed = submission.attempts.get(scenario=scenario)
    assert failed.status in (Attempt.Status.RETRYING, Attempt.Status.INFRA_FAILED) and failed.error_message
    relative = str((folder / "actions.py").relative_to(settings.DATA_DIR))
    assert relative in failed.error_message
    shown = _everything_shown_about(Client(), failed)
    assert relative in shown["replay"] and relative in shown["submission api"]
    assert {what: _leaks(text) for what, text in shown.items() if _leaks(text)} == {}
