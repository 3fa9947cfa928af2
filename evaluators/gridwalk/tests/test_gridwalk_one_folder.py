"""GridWalk brings everything a Football-like environment has from its own folder, and the platform
uses it once the one setting names the folder: its queue, its upload format (a route file), its
replay panel with its own script and style sheet, and its analysis panel."""
from __future__ import annotations

import inspect
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.urls import reverse

from evaluators.base import declared_queues, get_plugin
from evaluators.gridwalk import plugin
from evaluators.gridwalk.grid import Level
from evaluators.gridwalk.resources import FIXTURE_RESOURCES
from submissions.models import Attempt, LiveWorker, Submission
from submissions.selectors import queue_for

pytestmark = pytest.mark.integration

MODULE = "evaluators.gridwalk"
FOLDER = Path(inspect.getfile(type(plugin))).parent
MINI = ("1-GridWalk-corridor", "2-GridWalk-detour", "3-GridWalk-maze")


@pytest.fixture
def gridwalk(settings: Any) -> Iterator[list[str]]:
    """GridWalk added to the registered environments, with the static finders built again for it."""
    modules: list[str] = [*settings.MAGEBENCH_ENVIRONMENTS, MODULE]
    settings.MAGEBENCH_ENVIRONMENTS = modules
    # Finders are built once and cached: one built without GridWalk would not find its files.
    finders.get_finder.cache_clear()  # type: ignore[attr-defined]
    yield modules
    finders.get_finder.cache_clear()  # type: ignore[attr-defined]


def _route(key: str) -> list[str]:
    level = Level.from_rows(json.loads((FIXTURE_RESOURCES / "GridWalk" / f"{key}.json").read_text())["grid"])
    return level.route(level.start)


def _found_in_the_folder(path: str) -> bool:
    found = finders.find(path)
    return bool(found) and Path(str(found)).is_relative_to(FOLDER / "static")


@pytest.mark.django_db(transaction=True)
def test_an_uploaded_route_file_runs_on_the_environments_queue_and_shows_its_replay_and_analysis_panels(
        gridwalk: list[str], celery_workers: Callable[..., Any], lab: Any, wait_for: Callable[..., None]) -> None:
    call_command("import_magebench", str(FIXTURE_RESOURCES), "--suite", "fixture", "--env", "gridwalk",
                 stdout=io.StringIO())

    # The queue is the plug-in's: the settings of a process that registers GridWalk list it.
    assert plugin.queue == "walk" and "walk" in declared_queues(gridwalk) and queue_for("gridwalk") == "walk"
    worker = celery_workers("walker", env={"MAGEBENCH_ENVIRONMENTS": ",".join(gridwalk)})
    # The worker records itself from a thread started once it is ready: wait for the row, not the log line.
    wait_for(lambda: LiveWorker.objects.filter(hostname=worker.name).exists(), 60, "the worker to record itself")
    assert "walk" in LiveWorker.objects.get(hostname=worker.name).queues

    # GridWalk's own upload format: a route file, its moves one per line (or comma-separated).
    lines = [{"scenario": key, "repeat": 0, "code": {"route": "\n".join(_route(key))}, "score": 100.0}
             for key in MINI]
    lines[1] = {"scenario": MINI[1], "repeat": 0, "code": {"route": "North,\nEast"}, "score": 33.333333}
    upload = io.BytesIO("\n".join(json.dumps(line) for line in lines).encode())
    upload.name = "routes.jsonl"
    response = lab.client.post(reverse("api-upload"), {
        "model_name": "Route files", "env": "gridwalk", "flow": "global", "subset": "mini", "suite": "fixture",
        "public": "true", "file": upload}, **lab.auth())
    assert response.status_code == 201, response.content
    submission_id = response.json()["id"]
    wait_for(lambda: not Submission.objects.get(id=submission_id).is_active, 180, "the upload to be scored")
    submission = Submission.objects.get(id=submission_id)
    assert submission.status == Submission.Status.COMPLETED, submission.status_reason
    attempts = {a.scenario.key: a for a in submission.attempts.select_related("scenario")}
    assert {key: a.score for key, a in attempts.items()} == {MINI[0]: 100.0, MINI[1]: 33.333333, MINI[2]: 100.0}
    assert all(a.status == Attempt.Status.SCORED and a.worker == worker.name for a in attempts.values())

    # The replay page shows GridWalk's panel with its own script and style sheet, found in its folder.
    replay = lab.client.get(reverse("attempt-replay", args=[attempts[MINI[1]].id])).content.decode()
    assert 'id="gridwalk-board"' in replay and 'id="gridwalk-walk"' in replay
    assert '<link rel="stylesheet" href="/static/css/replay_gridwalk.css">' in replay
    assert '<script src="/static/js/replay_gridwalk.js"></script>' in replay
    assert _found_in_the_folder("css/replay_gridwalk.css") and _found_in_the_folder("js/replay_gridwalk.js")

    # The analysis page shows GridWalk's panel, drawn by its own script from each entry's aggregate.
    analysis_url = reverse("board-analysis", args=["gridwalk", "global", "mini"]) + "?suite=fixture"
    analysis = lab.client.get(analysis_url).content.decode()
    assert "By route length" in analysis and 'id="chart-route-length"' in analysis
    assert '<script src="/static/js/analysis_gridwalk.js"></script>' in analysis
    assert _found_in_the_folder("js/analysis_gridwalk.js")
    charts = lab.client.get(analysis_url + "&charts=1").json()
    (entry,) = charts["panels"]["route_length"]["models"]
    distances = {key: len(_route(key)) for key in MINI}
    assert entry["label"] == "Route files" and entry["distances"] == sorted(set(distances.values()))


def test_the_registered_environments_own_files_are_all_in_its_folder(gridwalk: list[str]) -> None:
    registered = get_plugin("gridwalk")
    templates = [registered.replay_template, *(panel.template for panel in registered.analysis_panels)]
    assert all(template and (FOLDER / "templates" / template).is_file() for template in templates)
    statics = [*registered.replay_scripts, *registered.replay_styles,
               *(panel.script for panel in registered.analysis_panels)]
    assert statics and all(_found_in_the_folder(path) for path in statics)
