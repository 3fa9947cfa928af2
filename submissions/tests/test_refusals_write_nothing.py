"""A refused request changes nothing that is stored, and a model's metadata changes only where a
caller sent a value for it."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from accounts.models import Team
from magebench_client import cli
from submissions.models import Attempt, ModelEntry, Submission

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

#: Nothing listens here, and no worker runs in these tests: queued attempts are never played.
UNUSED_ENDPOINT = "http://127.0.0.1:9/v1"
METADATA = {"organisation": "Vision Lab", "parameter_count": 7_000_000_000, "open_weights": True,
            "link": "https://models.example/vision-7b", "licence": "Apache-2.0"}


def _stored() -> tuple[int, int, int, int]:
    return (Team.objects.count(), ModelEntry.objects.count(), Submission.objects.count(), Attempt.objects.count())


def _metadata(name: str = "Vision-7B") -> dict[str, object]:
    return dict(ModelEntry.objects.filter(name=name).values(*METADATA).get())


def _bad_jsonl() -> io.BytesIO:
    file = io.BytesIO(b'{"scenario": "no-such-level", "repeat": 0, "replies": ["x"]}\n')
    file.name = "runs.jsonl"
    return file


@pytest.fixture
def quota_to_spare(settings) -> None:
    settings.MAGEBENCH_QUOTA_CONCURRENT = 20
    settings.MAGEBENCH_QUOTA_PER_DAY = 20


@pytest.fixture
def vision(lab) -> ModelEntry:
    return ModelEntry.objects.create(team=lab.team, name="Vision-7B", **METADATA)


def test_a_refused_upload_through_the_api_registers_no_model(lab, fixture_scenarios, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    before = _stored()
    response = lab.client.post(reverse("api-upload"), {
        "model_name": "Brand new model", "organisation": "Somewhere", "env": "sokoban", "flow": "global",
        "subset": "mini", "suite": "fixture", "file": _bad_jsonl()}, **lab.auth())
    assert response.status_code == 400, response.content
    assert _stored() == before and not ModelEntry.objects.filter(name="Brand new model").exists()


def test_a_refused_upload_through_the_page_registers_no_model(lab, fixture_scenarios, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    before = _stored()
    response = lab.client.post(reverse("upload"), {
        "team": str(lab.team.id), "model_name": "Brand new model", "env": "sokoban", "flow": "global",
        "subset": "mini", "file": _bad_jsonl()})
    assert response.status_code == 200 and "nothing was stored" in response.content.decode()
    assert _stored() == before and not ModelEntry.objects.filter(name="Brand new model").exists()


def test_a_refused_submission_leaves_an_existing_models_metadata_as_it_was(lab, fixture_scenarios, vision,
                                                                            settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    before = _stored()
    rewrite = {"organisation": "Someone else", "parameter_count": 1, "link": "https://elsewhere.example/",
               "licence": "none"}
    # Football has no Global flow: the board itself is refused, whatever the endpoint.
    api = Client().post(reverse("api-submission-create"), {
        "model_name": "Vision-7B", **rewrite, "open_weights": False, "env": "football", "flow": "global",
        "subset": "mini", "suite": "fixture", "endpoint_url": UNUSED_ENDPOINT},
        content_type="application/json", **lab.auth())
    assert api.status_code == 400 and "no flow" in api.json()["message"]
    page = lab.client.post(reverse("submit"), {
        "team": str(lab.team.id), "model_name": "Vision-7B", **rewrite, "env": "football", "flow": "global",
        "subset": "mini", "endpoint_url": UNUSED_ENDPOINT})
    assert page.status_code == 200 and "no flow" in page.content.decode()
    upload = lab.client.post(reverse("api-upload"), {
        "model_name": "Vision-7B", **rewrite, "env": "sokoban", "flow": "global", "subset": "mini",
        "suite": "fixture", "file": _bad_jsonl()}, **lab.auth())
    assert upload.status_code == 400
    assert _metadata() == METADATA and _stored() == before


def test_a_refused_submit_endpoint_command_leaves_no_team_or_model(fixture_scenarios):
    before = _stored()
    def argv(env: str = "sokoban", flow: str = "online", suite: str = "fixture", *extra: str) -> list[str]:
        return ["--team", "Newcomers", "--model", "New model", "--organisation", "New org", "--env", env,
                "--flow", flow, "--subset", "mini", "--suite", suite, "--url", UNUSED_ENDPOINT, *extra]

    refused = {
        "a board that does not exist": argv("sokoban", "online", "nowhere"),
        "a flow the environment lacks": argv("football", "global"),
        "a malformed setting": argv("sokoban", "online", "fixture", "--setting", "repeats"),
        "an unknown setting": argv("sokoban", "online", "fixture", "--setting", "warp_speed=9"),
        "an oversized link": argv("sokoban", "online", "fixture", "--link", "https://x.example/" + "a" * 300),
    }
    for reason, arguments in refused.items():
        with pytest.raises(CommandError):
            call_command("submit_endpoint", *arguments)
        assert _stored() == before, f"{reason} left something behind"
    assert not Team.objects.filter(name="Newcomers").exists()


def test_a_submission_that_sends_no_metadata_keeps_the_models_metadata(lab, fixture_scenarios, quota_to_spare):
    page = lab.client.post(reverse("submit"), {
        "team": str(lab.team.id), "model_name": "Vision-7B", **METADATA, "open_weights": "on", "env": "sokoban",
        "flow": "global", "subset": "mini", "endpoint_url": UNUSED_ENDPOINT, "repeats": 1})
    assert page.status_code == 302 and _metadata() == METADATA
    api = Client().post(reverse("api-submission-create"), {
        "model_name": "Vision-7B", "env": "sokoban", "flow": "global", "subset": "mini", "suite": "fixture",
        "endpoint_url": UNUSED_ENDPOINT, "settings": {"repeats": 1}}, content_type="application/json", **lab.auth())
    assert api.status_code == 201, api.content
    assert _metadata() == METADATA
    # The submit page leaves blank fields (and an unticked box) alone: it is not a model editor.
    again = lab.client.post(reverse("submit"), {
        "team": str(lab.team.id), "model_name": "Vision-7B", "env": "sokoban", "flow": "online", "subset": "mini",
        "endpoint_url": UNUSED_ENDPOINT, "repeats": 1})
    assert again.status_code == 302 and _metadata() == METADATA
    call_command("submit_endpoint", "--team", "Lab", "--model", "Vision-7B", "--env", "sokoban", "--flow", "online",
                 "--subset", "mini", "--suite", "fixture", "--url", UNUSED_ENDPOINT, "--repeats", "1",
                 stdout=io.StringIO())
    assert _metadata() == METADATA and Submission.objects.count() == 4


def test_only_the_metadata_fields_sent_change_and_an_empty_value_sent_clears_one(lab, vision, quota_to_spare):
    response = Client().post(reverse("api-models"), {"name": "Vision-7B", "licence": "MIT", "organisation": ""},
                             content_type="application/json", **lab.auth())
    assert response.status_code == 201, response.content
    assert _metadata() == {**METADATA, "licence": "MIT", "organisation": ""}
    response = Client().post(reverse("api-models"), {"name": "Vision-7B", "open_weights": False,
                                                     "parameter_count": None}, content_type="application/json",
                             **lab.auth())
    assert response.status_code == 201, response.content
    assert _metadata() == {**METADATA, "licence": "MIT", "organisation": "", "open_weights": False,
                           "parameter_count": None}


@pytest.mark.django_db(transaction=True)
def test_a_command_line_submission_without_metadata_flags_keeps_what_the_page_set(capsys, live_server, lab,
                                                                                 fixture_scenarios, quota_to_spare):
    page = lab.client.post(reverse("submit"), {
        "team": str(lab.team.id), "model_name": "Vision-7B", **METADATA, "open_weights": "on", "env": "sokoban",
        "flow": "global", "subset": "mini", "endpoint_url": UNUSED_ENDPOINT, "repeats": 1})
    assert page.status_code == 302
    code = cli.main(["--url", live_server.url, "--token", lab.write_token, "submit-endpoint", "--model", "Vision-7B",
                     "--env", "sokoban", "--flow", "online", "--subset", "mini", "--suite", "fixture",
                     "--endpoint", UNUSED_ENDPOINT, "--setting", "repeats=1"])
    assert code == 0, capsys.readouterr().err
    assert Submission.objects.count() == 2 and _metadata() == METADATA
