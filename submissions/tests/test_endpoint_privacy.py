"""A team's endpoint URL and the model id it calls there are the team's alone: a published
submission shows its model and results to everyone, never where or what the platform called."""
from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from accounts.services import team_create, token_create
from evaluators.trajectory import INDEX_NAME
from magebench_client.output import status_lines
from submissions.crypto import encrypt_secret
from submissions.engine import attempt_run
from submissions.models import Attempt, Submission
from submissions.selectors import trajectory_dir
from submissions.services import submission_prepare
from submissions.tests.test_replay_navigator import _webui_attempt

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

ENDPOINT_MODEL = "lab-internal-checkpoint-0427"


@pytest.fixture
def published(lab, fixture_scenarios, baseline_endpoint, exports_built_when_sent):
    """A published, scored endpoint submission of ``lab``, one of whose attempts failed quoting its endpoint."""
    server = baseline_endpoint("oracle")
    response = lab.client.post(reverse("api-submission-create"), {
        "model_name": "Oracle", "env": "sokoban", "flow": "online", "subset": "mini", "public": True,
        "suite": "fixture", "endpoint_url": server.url, "endpoint_model": ENDPOINT_MODEL,
        "settings": {"repeats": 1, "resolution": 256}}, content_type="application/json", **lab.auth())
    assert response.status_code == 201, response.content
    submission_prepare(submission_id=response.json()["id"])  # as a worker does after the request
    submission = Submission.objects.get(id=response.json()["id"])
    # Three attempts show everything a published page has (scored ones and a failed one), in seconds.
    attempts = list(submission.attempts.order_by("id")[:3])
    submission.attempts.exclude(id__in=[a.id for a in attempts]).delete()
    for attempt in attempts[:-1]:
        attempt_run(attempt_id=attempt.id)
    failed = attempts[-1]
    Attempt.objects.filter(id=failed.id).update(
        status=Attempt.Status.INFRA_FAILED, error_kind="endpoint_unreachable",
        error_message=f"chat endpoint {submission.endpoint_url} refused model {ENDPOINT_MODEL!r}")
    Submission.objects.filter(id=submission.id).update(status=Submission.Status.COMPLETED)
    submission.refresh_from_db()
    assert submission.is_public
    return submission


def _secrets(submission: Submission) -> list[str]:
    host_and_port = submission.endpoint_url.split("//", 1)[1].split("/", 1)[0]
    return [submission.endpoint_url, host_and_port, ENDPOINT_MODEL]


def _another_team() -> Client:
    stranger = get_user_model().objects.create_user("eve", password="a long passphrase 7")
    team_create(user=stranger, name="Elsewhere")
    client = Client()
    client.force_login(stranger)
    return client


def _everything_seen(client: Client, submission: Submission, **headers) -> dict[str, str]:
    attempt = submission.attempts.filter(status=Attempt.Status.SCORED).first()
    board = ("sokoban", "online", "mini")
    seen = {
        "page": client.get(reverse("submission-detail", args=[submission.id]), **headers),
        "api detail": client.get(reverse("api-submission-detail", args=[submission.id]), **headers),
        "api list": client.get(reverse("api-submission-create"), **headers),
        "trajectory api": client.get(reverse("api-attempt-trajectory", args=[attempt.id]), **headers),
        "replay": client.get(reverse("attempt-replay", args=[attempt.id]), **headers),
        "board": client.get(reverse("board", args=board) + "?suite=fixture", **headers),
        "board api": client.get(reverse("api-board", args=board) + "?suite=fixture", **headers),
        "board csv": client.get(reverse("board-export", args=[*board, "csv"]) + "?suite=fixture", **headers),
    }
    for fmt in ("csv", "zip"):
        # Files built by a worker: asked for again once built, as a client following Retry-After does.
        for _ in range(2):
            seen[f"attempts.{fmt}"] = client.get(reverse("api-board-attempts-export", args=[*board, fmt])
                                                 + "?suite=fixture", **headers)
            seen[f"submission attempts.{fmt}"] = client.get(
                reverse("api-submission-export", args=[submission.id, fmt]), **headers)
    texts = {}
    for name, response in seen.items():
        assert response.status_code == 200, (name, response.status_code)
        body = response.getvalue()
        if name.endswith(".zip"):
            archive = zipfile.ZipFile(io.BytesIO(body))
            body = b"\n".join(archive.read(member) for member in archive.namelist() if not member.endswith(".png"))
        texts[name] = body.decode("utf-8", "replace")
    return texts


@pytest.mark.parametrize("visitor", ["anonymous", "another team"])
def test_a_published_submission_shows_no_outsider_its_endpoint_url_or_model_id(published, visitor):
    client = Client() if visitor == "anonymous" else _another_team()
    for name, text in _everything_seen(client, published).items():
        for secret in _secrets(published):
            assert secret not in text, f"{visitor} sees {secret!r} in the {name}"
    assert "Oracle" in _everything_seen(client, published)["page"]  # the model and its results stay public


def test_the_team_s_own_members_still_see_their_endpoint(published, lab):
    page = lab.client.get(reverse("submission-detail", args=[published.id])).content.decode()
    assert published.endpoint_url in page and ENDPOINT_MODEL in page
    _, token = token_create(team=lab.team, user=lab.user, name="reader 2", scope="read")
    detail = Client().get(reverse("api-submission-detail", args=[published.id]),
                          HTTP_AUTHORIZATION=f"Bearer {token}").json()
    assert detail["endpoint_url"] == published.endpoint_url and detail["endpoint_model"] == ENDPOINT_MODEL
    listed = Client().get(reverse("api-submission-create"), HTTP_AUTHORIZATION=f"Bearer {token}").json()
    assert any(row["endpoint_model"] == ENDPOINT_MODEL for row in listed)


def test_the_publish_confirmation_lists_what_becomes_public_and_what_stays_private(lab, fixture_scenarios):
    response = lab.client.post(reverse("api-submission-create"), {
        "model_name": "Oracle", "env": "sokoban", "flow": "online", "subset": "mini", "suite": "fixture",
        "endpoint_url": "http://127.0.0.1:9/v1", "endpoint_model": ENDPOINT_MODEL, "settings": {"repeats": 1}},
        content_type="application/json", **lab.auth())
    submission_id = response.json()["id"]
    page = lab.client.post(reverse("submission-action", args=[submission_id, "publish"])).content.decode()
    assert 'id="becomes-public"' in page and 'id="stays-private"' in page
    private_part = page.split('id="stays-private"', 1)[1]
    assert "endpoint URL" in private_part and "model id" in private_part and "API key" in private_part


SECRET_PATH = "e401-sekrit-DELTA"
API_KEY = "sk-abcD1234567890efghijklmnopqrstWXYZ"
#: The API key as OpenAI quotes it back in its 401 ("Incorrect API key provided: sk-abcD***…WXYZ").
MASKED_KEY = "sk-abcD" + "*" * 28 + "WXYZ"
LISTED_MODEL = "lab-internal-ckpt-0427-b"


@pytest.fixture
def echoed(published):
    """``published``, on an endpoint with a path of its own whose words quote it: the failed attempt and
    the failure reason quote another of its routes, and a reply echoes the key and a model id it lists."""
    host = published.endpoint_url.split("//", 1)[1].split("/", 1)[0]
    models_route = f"http://{host}/{SECRET_PATH}/v1/models"
    Submission.objects.filter(id=published.id).update(
        endpoint_url=f"http://{host}/{SECRET_PATH}/v1/chat/completions", api_key_encrypted=encrypt_secret(API_KEY),
        endpoint_listed_models=[LISTED_MODEL, ENDPOINT_MODEL],
        status_reason=f"1 attempt(s) failed: endpoint_unreachable — GET {models_route} answered 404")
    published.attempts.filter(status=Attempt.Status.INFRA_FAILED).update(
        error_message=f"GET {models_route} answered 404")
    scored = published.attempts.filter(status=Attempt.Status.SCORED).first()
    index = trajectory_dir(scored) / INDEX_NAME
    document = json.loads(index.read_text())
    document["calls"][0]["reply"] += (f"\nmy key is {API_KEY}; Incorrect API key provided: {MASKED_KEY}; "
                                      f"I am {LISTED_MODEL} at /{SECRET_PATH}/v1")
    index.write_text(json.dumps(document))
    published.refresh_from_db()
    return published


def _echoed_secrets(submission: Submission) -> list[str]:
    return [*_secrets(submission), SECRET_PATH, API_KEY, MASKED_KEY, "sk-abcD", "WXYZ", LISTED_MODEL]


@pytest.mark.parametrize("visitor", ["anonymous", "another team"])
def test_no_outsider_reads_the_endpoint_s_path_key_or_listed_models_where_its_words_quote_them(echoed, visitor):
    client = Client() if visitor == "anonymous" else _another_team()
    seen = _everything_seen(client, echoed)
    seen["client status"] = "\n".join(status_lines(json.loads(seen["api detail"])))
    for name, text in seen.items():
        for secret in _echoed_secrets(echoed):
            assert secret not in text, f"{visitor} sees {secret!r} in the {name}"
    assert "my key is [the team's API key]" in seen["trajectory api"]


def test_the_team_still_reads_its_endpoint_s_own_words_whole_where_outsiders_read_them_struck(echoed, lab):
    attempt = echoed.attempts.filter(status=Attempt.Status.SCORED).first()
    for client in (Client(), lab.client):
        page = client.get(reverse("submission-detail", args=[echoed.id])).content.decode()
        trajectory = client.get(reverse("api-attempt-trajectory", args=[attempt.id])).json()["trajectory"]
        reply = trajectory["calls"][0]["reply"]
        whole = client is lab.client
        assert (f"/{SECRET_PATH}/v1/models answered 404" in page) is whole
        assert (API_KEY in reply and LISTED_MODEL in reply) is whole


def test_an_active_submission_s_latest_error_shows_no_outsider_the_endpoint_s_path(echoed):
    Submission.objects.filter(id=echoed.id).update(status=Submission.Status.RUNNING)
    client = Client()
    detail = client.get(reverse("api-submission-detail", args=[echoed.id])).json()
    assert detail["progress"]["last_error"]  # the error is shown, struck
    seen = {"page": client.get(reverse("submission-detail", args=[echoed.id])).content.decode(),
            "queue": client.get(reverse("queue")).content.decode(),
            "queue api": client.get(reverse("api-queue")).content.decode(),
            "client status": "\n".join(status_lines(detail))}
    for name, text in seen.items():
        assert SECRET_PATH not in text, f"the {name} shows the endpoint's path"


def test_the_model_ids_an_endpoint_lists_are_kept_with_the_submission_that_asked_for_them(
        lab, fixture_scenarios, baseline_endpoint):
    server = baseline_endpoint("oracle")
    response = lab.client.post(reverse("api-submission-create"), {
        "model_name": "Lab model", "env": "sokoban", "flow": "online", "subset": "mini", "suite": "fixture",
        "endpoint_url": server.url, "settings": {"repeats": 1, "resolution": 256}},
        content_type="application/json", **lab.auth())
    submission_prepare(submission_id=response.json()["id"])  # as a worker does after the request
    submission = Submission.objects.get(id=response.json()["id"])
    assert submission.endpoint_listed_models == []
    attempt_run(attempt_id=submission.attempts.order_by("id").first().id)
    submission.refresh_from_db()
    assert submission.endpoint_listed_models == ["oracle"]


def test_a_webui_replay_s_load_error_quoting_the_endpoint_shows_no_outsider_its_path(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    attempt = _webui_attempt(settings.MEDIA_ROOT)
    Submission.objects.filter(id=attempt.submission_id).update(
        endpoint_url=f"https://gw.example.com/{SECRET_PATH}/v1/chat/completions")
    Attempt.objects.filter(id=attempt.id).update(details={
        **attempt.details, "load_error": f"script.js fetched https://gw.example.com/{SECRET_PATH}/v1/models: 401"})

    page = Client().get(reverse("attempt-replay", args=[attempt.id])).content.decode()

    assert "data-load-error=" in page and SECRET_PATH not in page and "gw.example.com" not in page
