"""A large file is checked by a worker, its result shown on the page and in the API; checks of files
share the uploads' budget per user and per address."""
from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.services import team_create
from submissions.models import Attempt, ModelEntry, Submission, UploadFileCheck
from submissions.upload_checks import upload_check_run

GOOD = b'{"scenario": "1-Sokoban-small-v0", "repeat": 0, "replies": ["### Actions\\nUp"]}\n'
BAD = b'{"scenario": "no-such-level", "repeat": 0, "replies": ["### Actions\\nUp"]}\n'


def _file(data: bytes, name: str = "runs.jsonl") -> io.BytesIO:
    file = io.BytesIO(data)
    file.name = name
    return file


def _check_fields(data: bytes) -> dict[str, Any]:
    return {"env": "sokoban", "flow": "global", "subset": "mini", "suite": "fixture", "file": _file(data)}


def _page_fields(lab: Any, data: bytes) -> dict[str, Any]:
    return {"team": str(lab.team.id), "model_name": "Checked", "env": "sokoban", "flow": "global",
            "subset": "mini", "check": "1", "file": _file(data)}


def _stored() -> tuple[int, int, int]:
    return ModelEntry.objects.count(), Submission.objects.count(), Attempt.objects.count()


@pytest.mark.integration
def test_a_large_file_is_checked_by_a_worker_with_its_result_in_the_api_and_on_the_page(
        lab, fixture_scenarios, celery_workers, wait_for, settings, tmp_path) -> None:
    media = settings.MEDIA_ROOT = tmp_path / "media"
    settings.MAGEBENCH_UPLOAD_CHECK_ASYNC_BYTES = 10
    celery_workers("w1", concurrency=1)
    before = _stored()

    response = lab.client.post(reverse("api-upload-check"), _check_fields(GOOD), **lab.auth("read"))
    assert response.status_code == 202, response.content
    url = response.json()["url"]
    assert response["Location"] == url and response.json()["status"] == "pending"
    wait_for(lambda: lab.client.get(url, **lab.auth("read")).json()["status"] != "pending", 60, "the worker's check")
    shown = lab.client.get(url, **lab.auth("read")).json()
    assert (shown["status"], shown["valid"], shown["problems"]) == ("valid", True, [])
    assert shown["result"]["runs"] == 1 and shown["result"]["suite"] == "fixture"

    page = lab.client.post(reverse("upload"), _page_fields(lab, BAD))
    assert page.status_code == 302
    wait_for(lambda: "Pending" not in lab.client.get(page["Location"]).content.decode(), 60, "the worker's check")
    html = lab.client.get(page["Location"]).content.decode()
    assert "Problems found" in html and "unknown scenario &#x27;no-such-level&#x27;" in html

    assert _stored() == before
    # The files are the worker's to read once: none is left behind.
    assert not any(path.is_file() for path in media.rglob("*"))


def test_a_small_file_is_still_checked_within_the_request(lab, fixture_scenarios, settings, tmp_path) -> None:
    settings.MEDIA_ROOT = tmp_path
    response = lab.client.post(reverse("api-upload-check"), _check_fields(GOOD), **lab.auth("read"))
    assert response.status_code == 200 and response.json()["runs"] == 1
    assert not UploadFileCheck.objects.exists()


def test_a_stored_check_is_seen_only_by_its_team_and_done_once(lab, fixture_scenarios, settings,
                                                               tmp_path) -> None:
    settings.MEDIA_ROOT = tmp_path
    settings.MAGEBENCH_UPLOAD_CHECK_ASYNC_BYTES = 10
    # The test's transaction never commits, so nothing is queued: the check is run here instead.
    url = lab.client.post(reverse("api-upload-check"), _check_fields(BAD), **lab.auth()).json()["url"]
    check = UploadFileCheck.objects.get()
    upload_check_run(check_id=check.id)
    check.refresh_from_db()
    assert check.status == UploadFileCheck.Status.INVALID and check.problems[0].startswith("line 1: unknown scenario")
    upload_check_run(check_id=check.id)  # a message delivered twice changes nothing
    assert UploadFileCheck.objects.get().finished_at == check.finished_at

    stranger = get_user_model().objects.create_user("eve", password="another passphrase 9")
    team_create(user=stranger, name="Elsewhere")
    other = Client()
    other.force_login(stranger)
    assert other.get(url).status_code == 404
    assert other.get(reverse("upload-check", args=[check.id])).status_code == 404
    assert lab.client.get(url).json()["problems"] == check.problems


@pytest.fixture
def two_files_a_minute(settings) -> Iterator[None]:
    settings.MAGEBENCH_THROTTLE_UPLOADS = "2/minute"
    cache.clear()
    yield
    cache.clear()


def test_checks_through_the_api_are_throttled_per_user(lab, fixture_scenarios, two_files_a_minute) -> None:
    # From a new address each time: only the user's own budget can refuse.
    answers = [lab.client.post(reverse("api-upload-check"), _check_fields(GOOD), REMOTE_ADDR=f"192.0.2.{n}",
                               **lab.auth("read")).status_code for n in range(3)]
    assert answers == [200, 200, 429]


def test_checks_on_the_page_are_throttled_and_share_the_budget_of_uploads(lab, fixture_scenarios, settings,
                                                                         tmp_path, two_files_a_minute) -> None:
    settings.MEDIA_ROOT = tmp_path
    upload = lab.client.post(reverse("api-upload"), {**_check_fields(BAD), "model_name": "Refused"}, **lab.auth())
    assert upload.status_code == 400
    assert lab.client.post(reverse("upload"), _page_fields(lab, GOOD)).status_code == 200
    refused = lab.client.post(reverse("upload"), _page_fields(lab, GOOD))
    assert refused.status_code == 429 and "you have sent too many files for now" in refused.content.decode()


def test_checks_are_throttled_per_address_across_accounts(lab, fixture_scenarios, two_files_a_minute) -> None:
    second = get_user_model().objects.create_user("bob", password="another passphrase 9")
    team_create(user=second, name="Second lab")
    other = Client()
    other.force_login(second)
    for _ in range(2):
        assert lab.client.post(reverse("api-upload-check"), _check_fields(GOOD)).status_code == 200
    refused = other.post(reverse("api-upload-check"), _check_fields(GOOD))
    assert refused.status_code == 429 and "throttled" in json.dumps(refused.json())


def test_a_check_no_worker_finished_in_time_reads_as_invalid_saying_so(lab, fixture_scenarios, settings,
                                                                        tmp_path) -> None:
    settings.MEDIA_ROOT = tmp_path
    settings.MAGEBENCH_UPLOAD_CHECK_ASYNC_BYTES = 10
    url = lab.client.post(reverse("api-upload-check"), _check_fields(GOOD), **lab.auth()).json()["url"]
    assert lab.client.get(url).json()["status"] == "pending"
    UploadFileCheck.objects.update(created_at=timezone.now() - timedelta(seconds=3601))
    shown = lab.client.get(url).json()
    assert (shown["status"], shown["problems"]) == (
        "invalid", ["upload: no worker finished the check in time; check the file again"])
