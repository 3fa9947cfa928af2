"""Uploads end to end: stored only when valid, re-scored by the code that scores live runs."""
from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.urls import reverse

from accounts.services import team_get_or_create
from catalogue.models import Scenario
from conftest import FIXTURE_RESOURCES
from leaderboard.selectors import board_get
from submissions.engine import attempt_run
from submissions.models import Attempt, Submission
from submissions.official_layout import OfficialRun, zip_runs
from submissions.selectors import attempt_trajectory
from submissions.services import model_entry_upsert, submission_create_endpoint, submission_prepare

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


def _upload(lab, data: bytes, name: str, **fields):
    body = {"model_name": "Uploaded model", "env": "sokoban", "flow": "global", "subset": "mini", "suite": "fixture",
            "public": "true", **fields, "file": io.BytesIO(data)}
    body["file"].name = name
    return lab.client.post(reverse("api-upload"), body, **lab.auth())


def _run_all(submission_id: int) -> Submission:
    submission_prepare(submission_id=submission_id)  # as a worker does after the request
    for attempt_id in Attempt.objects.filter(submission_id=submission_id).values_list("id", flat=True):
        attempt_run(attempt_id=attempt_id)
    return Submission.objects.get(id=submission_id)


#: The live run's replies and scores, played once per test process: they are plain values, and the
#: tests that upload them need no row of the run itself.
_live_runs: dict[str, tuple[str, float]] = {}


@pytest.fixture
def live_oracle(fixture_scenarios, baseline_endpoint) -> dict[str, tuple[str, float]]:
    """Each mini Sokoban scenario's live oracle reply and its score."""
    if not _live_runs:
        model = model_entry_upsert(team=team_get_or_create(name="Live"), name="Live oracle")
        submission = submission_create_endpoint(model=model, env="sokoban", flow="global", subset="mini",
                                                suite="fixture", endpoint_url=baseline_endpoint("oracle").url,
                                                settings={"repeats": 1})
        _run_all(submission.id)
        _live_runs.update({a.scenario.key: (attempt_trajectory(a)["calls"][0]["reply"], a.score)
                           for a in submission.attempts.select_related("scenario")})
    return dict(_live_runs)


def test_uploaded_replies_score_exactly_as_the_same_replies_live_and_a_wrong_claim_is_flagged(lab, live_oracle):
    keys = sorted(live_oracle)
    lines = [{"scenario": key, "repeat": 0, "replies": [live_oracle[key][0]],
              "score": live_oracle[key][1] if i else live_oracle[key][1] - 30} for i, key in enumerate(keys)]
    response = _upload(lab, "\n".join(json.dumps(line) for line in lines).encode(), "runs.jsonl")
    assert response.status_code == 201, response.content
    submission = _run_all(response.json()["id"])
    assert submission.status == Submission.Status.COMPLETED and submission.source == Submission.Source.UPLOAD
    rescored = {a.scenario.key: a for a in submission.attempts.select_related("scenario")}
    assert {k: a.score for k, a in rescored.items()} == {k: v[1] for k, v in live_oracle.items()}
    flagged = [k for k, a in rescored.items() if a.details["self_reported"]["disagrees"]]
    assert flagged == [keys[0]]
    row = next(r for r in board_get(env="sokoban", flow="global", subset="mini", suite="fixture").rows
               if r.model == "Uploaded model")
    assert row.rescoring == "re-scored" and row.mean == pytest.approx(100.0)
    page = lab.client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    assert "disagrees" in page and "re-scored" in page


def test_an_official_sokoban_output_folder_uploads_unchanged_and_scores_as_the_live_runs(lab, live_oracle):
    """The folder the official harness writes, zipped as it is: replies in output.txt, the other files ignored."""
    runs = [OfficialRun(scenario=key, repeat=0, flow="global", replies=[reply], result=score, parsing_err=False,
                        details=[{"type": "text", "text": "accumulated reward: 0"}],
                        extras={"output_video.mp4": b"\x00\x00\x00\x18ftypmp42", "tmp.png": b"\x89PNG"})
            for key, (reply, score) in live_oracle.items()]
    response = _upload(lab, zip_runs(runs), "output.zip")
    assert response.status_code == 201, response.content
    submission = _run_all(response.json()["id"])
    assert submission.status == Submission.Status.COMPLETED
    rescored = {a.scenario.key: a for a in submission.attempts.select_related("scenario")}
    assert {key: a.score for key, a in rescored.items()} == {key: score for key, (_, score) in live_oracle.items()}
    assert all(a.details["self_reported"]["disagrees"] is False for a in rescored.values())


def test_an_upload_missing_scenarios_lists_them_and_stays_incomplete(lab, live_oracle):
    keys = sorted(live_oracle)
    lines = [{"scenario": key, "repeat": 0, "replies": [live_oracle[key][0]]} for key in keys[2:]]
    response = _upload(lab, "\n".join(json.dumps(line) for line in lines).encode(), "runs.jsonl")
    submission = _run_all(response.json()["id"])
    assert submission.status == Submission.Status.INCOMPLETE
    assert f"no run for 2 scenario(s): {keys[0]}, {keys[1]}" in submission.status_reason
    row = next(r for r in board_get(env="sokoban", flow="global", subset="mini", suite="fixture").rows
               if r.model == "Uploaded model")
    assert row.incomplete and row.n_scenarios == len(keys) - 2


@pytest.mark.parametrize("payload, name, expected", [
    (b"PK\x03\x04 this is no zip", "x.zip", "not a zip archive"),
    (b'{"scenario": "1-Sokoban-small-v0", "repeat": 0, "replies": ["x"]}\n{"scenario": 5}\n', "x.jsonl", "line 2"),
    (b'{"scenario": "no-such-level", "repeat": 0, "replies": ["x"]}\n', "x.jsonl", "unknown scenario"),
    (b"\xff\xfe\x00garbage", "x.jsonl", "UTF-8"),
])
def test_a_bad_upload_is_refused_with_its_problems_and_nothing_is_stored(lab, fixture_scenarios, payload, name,
                                                                          expected, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    response = _upload(lab, payload, name)
    assert response.status_code == 400
    body = response.json()
    assert "nothing was stored" in body["message"]
    assert any(expected in problem for problem in body["extra"]["problems"]), body
    assert not Submission.objects.exists() and not Attempt.objects.exists()
    assert not any(tmp_path.rglob("*")), list(tmp_path.rglob("*"))


def test_a_zip_slip_upload_is_refused_whole(lab, fixture_scenarios):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("1-Sokoban-small-v0_r0/eval.json", json.dumps({"result": 90}))
        archive.writestr("1-Sokoban-small-v0_r0/replies.json", json.dumps(["### Actions\nUp"]))
        archive.writestr("../../etc/evil.json", "{}")
    response = _upload(lab, buffer.getvalue(), "out.zip")
    assert response.status_code == 400 and not Submission.objects.exists()


def test_a_zip_of_the_official_webui_output_folder_is_rendered_and_scored(lab, fixture_scenarios):
    """The page's own files uploaded as the generated page: its AES is the maximum."""
    page = "step-counter"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        # The official WebUI result is AES as a fraction; the platform shows it as a percentage.
        archive.writestr(f"output/{page}_r0/eval.json", json.dumps({"result": 0.99, "parsing_err": False}))
        for name in ("index.html", "style.css", "script.js"):
            source = FIXTURE_RESOURCES / "WebUI" / page / name
            if source.exists():
                archive.writestr(f"output/{page}_r0/{name}", source.read_text(encoding="utf-8"))
    response = _upload(lab, buffer.getvalue(), "output.zip", env="webui")
    assert response.status_code == 201, response.content
    submission = _run_all(response.json()["id"])
    attempt = submission.attempts.get()
    assert attempt.status == Attempt.Status.SCORED and attempt.score == pytest.approx(100.0, abs=0.5)
    assert attempt.details["self_reported"] == {"score": 99.0, "error": "", "disagrees": False}
    missing = submission.missing_scenarios
    assert page not in missing and len(missing) == Scenario.objects.filter(
        environment_id="webui", suite="fixture", in_mini=True).count() - 1


def test_a_webui_run_that_generated_no_page_is_scored_as_the_models_parse_error(lab, fixture_scenarios):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("output/step-counter_r0/eval.json", json.dumps({"result": 0.0, "details": {},
                                                                          "parsing_err": True}))
        archive.writestr("output/step-counter_r0/tasks.md", "# Step counter")
        archive.writestr("output/step-counter_r0/output_progress.md", "")
        archive.writestr("output/res.txt", "0.0")
    response = _upload(lab, buffer.getvalue(), "output.zip", env="webui")
    assert response.status_code == 201, response.content
    attempt = _run_all(response.json()["id"]).attempts.get()
    assert (attempt.status, attempt.score, attempt.parse_errors) == (Attempt.Status.SCORED, 0.0, 1)
    assert attempt.details["self_reported"] == {"score": 0.0, "error": "", "disagrees": False}


def test_uploaded_football_actions_are_played_again_and_marked_re_simulated(lab, fixture_scenarios):
    keys = list(Scenario.objects.filter(environment_id="football", suite="fixture", in_mini=True)
                .values_list("key", flat=True))
    lines = [{"scenario": key, "repeat": 0, "actions": ["action_right", "action_right", "action_shot"]} for key in keys]
    response = _upload(lab, "\n".join(json.dumps(line) for line in lines).encode(), "football.jsonl",
                       env="football", flow="online")
    assert response.status_code == 201, response.content
    submission = _run_all(response.json()["id"])
    assert submission.status == Submission.Status.COMPLETED
    assert submission.rescoring == "re-simulated" and submission.settings["observation_images"] is False
    for attempt in submission.attempts.all():
        assert attempt.status == Attempt.Status.SCORED and 1 <= attempt.model_calls <= 3
