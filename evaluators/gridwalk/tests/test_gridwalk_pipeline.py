"""GridWalk through the whole platform, registered by the one setting and nothing else: its levels
imported, baselines served over HTTP and played by a real Celery worker, the board page and API,
the analysis, metric card and replay pages, and an upload of recorded replies re-scored."""
from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from accounts.services import team_get_or_create
from catalogue.services import scenarios_import
from evaluators.gridwalk.grid import Level
from evaluators.gridwalk.parsing import format_route
from evaluators.gridwalk.resources import FIXTURE_RESOURCES
from submissions.models import Attempt, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint

pytestmark = pytest.mark.integration

MODULE = "evaluators.gridwalk"
ROOT = Path(__file__).resolve().parents[3]
FOLDER = "evaluators/gridwalk/"
WALK_THROUGH = "docs/adding-an-environment.md"
#: The recorded time of every test file, the folder's own included: a list of paths, not code that
#: knows the environment.
TEST_TIMES = "config/test-durations.json"


@pytest.fixture
def gridwalk(settings: Any) -> list[str]:
    """GridWalk added to the registered environments; returns the setting's value."""
    modules: list[str] = [*settings.MAGEBENCH_ENVIRONMENTS, MODULE]
    settings.MAGEBENCH_ENVIRONMENTS = modules
    return modules


def _wait_finished(submission_id: int, wait_for: Callable[..., None]) -> Submission:
    wait_for(lambda: not Submission.objects.get(id=submission_id).is_active, 180, "the submission to finish")
    return Submission.objects.get(id=submission_id)


@pytest.mark.django_db(transaction=True)
def test_a_registered_gridwalk_goes_through_import_runs_boards_replays_and_uploads(
        gridwalk: list[str], baseline_endpoint: Callable[..., Any], celery_workers: Callable[..., Any], lab: Any,
        wait_for: Callable[..., None]) -> None:
    report = scenarios_import(path=FIXTURE_RESOURCES, suite="fixture")
    assert report.created == {"gridwalk": 5} and report.mini == {"gridwalk": 3}

    # The worker is another process: the setting reaches it through the environment.
    celery_workers("gridwalk", env={"MAGEBENCH_ENVIRONMENTS": ",".join(gridwalk)})
    team = team_get_or_create(name="Walkers")
    entries = {}
    for agent in ("oracle", "idle"):
        server = baseline_endpoint(agent)
        entries[agent] = submission_create_endpoint(
            model=model_entry_upsert(team=team, name=f"{agent} walker"), env="gridwalk", flow="online",
            subset="mini", suite="fixture", endpoint_url=server.url, endpoint_model=agent, settings={"max_loop": 12})
    for agent, submission in entries.items():
        finished = _wait_finished(submission.id, wait_for)
        assert finished.status == Submission.Status.COMPLETED, finished.status_reason
        scores = [a.score for a in finished.attempts.all()]
        assert len(scores) == 6 and all(a.status == Attempt.Status.SCORED for a in finished.attempts.all())
        # The oracle walks every mini level's shortest route (at most 12 moves); idle never moves.
        assert scores == [100.0] * 6 if agent == "oracle" else scores == [0.0] * 6

    board_url = reverse("board", args=["gridwalk", "online", "mini"]) + "?suite=fixture"
    page = lab.client.get(board_url)
    assert page.status_code == 200
    assert "oracle walker" in page.content.decode() and "idle walker" in page.content.decode()
    api = lab.client.get(reverse("api-board", args=["gridwalk", "online", "mini"]) + "?suite=fixture").json()
    means = {row["model"]: row["mean"] for row in api["rows"]}
    assert means["oracle walker"] == 100.0 and means["idle walker"] == 0.0
    assert api["score_label"] == "Progress score" and api["scenarios"] == 3

    analysis = lab.client.get(reverse("board-analysis", args=["gridwalk", "online", "mini"]) + "?suite=fixture")
    assert analysis.status_code == 200 and "oracle walker" in analysis.content.decode()
    card = lab.client.get(reverse("metric-card", args=["gridwalk"]))
    assert card.status_code == 200 and "1 − d_T / d_0" in card.content.decode()

    attempt = entries["oracle"].attempts.order_by("id")[0]
    replay = lab.client.get(reverse("attempt-replay", args=[attempt.id]))
    assert replay.status_code == 200 and "Move: East" in replay.content.decode()

    # Recorded replies, one Global reply per run: a full route, and two moves of a six-move detour.
    routes = {key: Level.from_rows(json.loads((FIXTURE_RESOURCES / "GridWalk" / f"{key}.json").read_text())["grid"])
              for key in ("1-GridWalk-corridor", "2-GridWalk-detour", "3-GridWalk-maze")}
    lines = [{"scenario": key, "repeat": 0, "replies": [format_route(level.route(level.start))], "score": 100.0}
             for key, level in routes.items()]
    lines[1] = {"scenario": "2-GridWalk-detour", "repeat": 0, "replies": [format_route(["North", "East"])],
                "score": 33.333333}
    upload = io.BytesIO("\n".join(json.dumps(line) for line in lines).encode())
    upload.name = "walks.jsonl"
    response = lab.client.post(reverse("api-upload"), {
        "model_name": "Recorded walker", "env": "gridwalk", "flow": "global", "subset": "mini", "suite": "fixture",
        "public": "true", "file": upload}, **lab.auth())
    assert response.status_code == 201, response.content
    uploaded = _wait_finished(response.json()["id"], wait_for)
    scored = {a.scenario.key: a for a in uploaded.attempts.select_related("scenario")}
    assert {key: a.score for key, a in scored.items()} == {
        "1-GridWalk-corridor": 100.0, "2-GridWalk-detour": 33.333333, "3-GridWalk-maze": 100.0}
    assert not any(a.details["self_reported"]["disagrees"] for a in scored.values())


def test_the_default_settings_do_not_register_gridwalk(settings: Any) -> None:
    assert MODULE not in settings.MAGEBENCH_ENVIRONMENTS


def test_no_file_outside_the_environment_folder_names_it() -> None:
    try:
        tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    mentions = []
    for name in tracked.decode().split("\0"):
        if not name or name.startswith(FOLDER) or name in (WALK_THROUGH, TEST_TIMES) or not (ROOT / name).is_file():
            continue
        if b"gridwalk" in (ROOT / name).read_bytes().lower():
            mentions.append(name)
    assert mentions == []
