"""An upload's own record (re-scoring, digest, missing scenarios): fields of its own, shown among its settings."""
from __future__ import annotations

import hashlib
import importlib
import json

from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from catalogue.models import Scenario
from submissions.models import Submission

UPLOAD_KEYS = ("rescoring", "upload_sha256", "missing_scenarios")
migration = importlib.import_module("submissions.migrations.0008_upload_record_fields")


def _mini_keys() -> list[str]:
    return sorted(Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True)
                  .values_list("key", flat=True))


def _upload_one_run(lab) -> tuple[Submission, bytes]:
    data = json.dumps({"scenario": _mini_keys()[0], "repeat": 0, "replies": ["### Actions\nRight"]}).encode()
    body = {"model_name": "Uploaded model", "env": "sokoban", "flow": "global", "subset": "mini", "suite": "fixture",
            "file": SimpleUploadedFile("runs.jsonl", data)}
    response = lab.client.post(reverse("api-upload"), body, **lab.auth())
    assert response.status_code == 201, response.content
    return Submission.objects.get(id=response.json()["id"]), data


def test_an_uploads_record_is_kept_in_its_own_fields_not_in_its_evaluation_settings(lab, fixture_scenarios):
    submission, data = _upload_one_run(lab)
    assert not set(UPLOAD_KEYS) & set(submission.settings)
    assert submission.rescoring == "re-scored" and submission.upload_sha256 == hashlib.sha256(data).hexdigest()
    assert submission.missing_scenarios == _mini_keys()[1:]
    assert submission.evaluation_settings.parse_retries == 0 and submission.evaluation_settings.repeats == 1


def test_the_api_and_the_page_show_the_record_among_the_settings_as_before(lab, fixture_scenarios):
    submission, _ = _upload_one_run(lab)
    shown = lab.client.get(reverse("api-submission-detail", args=[submission.id]), **lab.auth()).json()["settings"]
    assert shown == {**submission.settings, "rescoring": "re-scored", "upload_sha256": submission.upload_sha256,
                     "missing_scenarios": submission.missing_scenarios}
    page = lab.client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    assert "<th>upload_sha256</th>" in page and submission.upload_sha256 in page


def test_rows_that_kept_the_record_in_their_settings_are_moved_to_the_fields_and_back(lab, fixture_scenarios):
    submission, _ = _upload_one_run(lab)
    record = {"rescoring": "re-simulated", "upload_sha256": "ab" * 32, "missing_scenarios": ["x", "y"]}
    Submission.objects.filter(id=submission.id).update(settings={**submission.settings, **record}, rescoring="",
                                                       upload_sha256="", missing_scenarios=[])
    migration.move_out_of_settings(apps, None)
    moved = Submission.objects.get(id=submission.id)
    assert moved.settings == submission.settings
    assert (moved.rescoring, moved.upload_sha256, moved.missing_scenarios) == tuple(record.values())
    migration.move_back_into_settings(apps, None)
    assert Submission.objects.get(id=submission.id).settings == {**submission.settings, **record}


def test_a_submission_that_is_no_upload_shows_its_settings_alone(lab, fixture_scenarios):
    submission, _ = _upload_one_run(lab)
    submission.source = Submission.Source.ENDPOINT
    assert submission.shown_settings == submission.settings
