"""Once a team's quota is used up, every way of starting work is refused with the same message, and
the refusal writes nothing."""
from __future__ import annotations

import html
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import Team
from accounts.services import team_create, token_create
from catalogue.models import Scenario
from magebench_client import cli
from magebench_client.commands import EXIT_REFUSED
from submissions.models import Attempt, ModelEntry, Submission
from submissions.quotas import quota_status

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

UNUSED_ENDPOINT = "http://127.0.0.1:9/v1"


def _submission(team: Team, model: ModelEntry, scenario: Scenario, status: str, attempt_status: str) -> Submission:
    submission = Submission.objects.create(
        team=team, model=model, environment_id="sokoban", flow="global", subset="mini", suite="fixture",
        status=status, endpoint_url=UNUSED_ENDPOINT, endpoint_model="oracle", settings={"repeats": 1})
    Attempt.objects.create(submission=submission, scenario=scenario, repeat=0, status=attempt_status,
                           score=90.0 if attempt_status == Attempt.Status.SCORED else None)
    return submission


def _everything_stored() -> list[tuple]:
    """Every row a refusal could touch, with the fields it could change."""
    return [
        *Team.objects.order_by("id").values_list("id", "name"),
        *ModelEntry.objects.order_by("id").values_list("id", "name", "organisation", "parameter_count",
                                                       "open_weights", "link", "licence"),
        *Submission.objects.order_by("id").values_list("id", "status", "status_reason", "finished_at"),
        *Attempt.objects.order_by("id").values_list("id", "status", "tries", "error_kind", "queued_at"),
    ]


@pytest.fixture
def used_up(lab, fixture_scenarios, settings, tmp_path):
    """A team with a finished run to re-run, a failed one to resume, and its one concurrent slot taken."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MAGEBENCH_QUOTA_CONCURRENT = 1
    model = ModelEntry.objects.create(team=lab.team, name="Vision-7B", organisation="Vision Lab")
    scenario = Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True).order_by("key").first()
    done = _submission(lab.team, model, scenario, Submission.Status.COMPLETED, Attempt.Status.SCORED)
    failed = _submission(lab.team, model, scenario, Submission.Status.INCOMPLETE, Attempt.Status.INFRA_FAILED)
    _submission(lab.team, model, scenario, Submission.Status.QUEUED, Attempt.Status.PENDING)
    upload = tmp_path / "runs.jsonl"
    upload.write_text(json.dumps({"scenario": scenario.key, "repeat": 0, "replies": ["### Actions\nUp"]}) + "\n")
    return done, failed, upload


def _jsonl(path: Path) -> io.BytesIO:
    file = io.BytesIO(path.read_bytes())
    file.name = path.name
    return file


def _answers_of_every_way_in(capsys, live_server, *, web: Client, team: Team, write_token: str, done: Submission,
                             failed: Submission, upload: Path) -> dict[str, str]:
    """What each way of starting work for ``team`` answers: the page's or the API's message, or the CLI's error."""
    board = {"model_name": "Vision-7B", "organisation": "Someone else", "env": "sokoban", "flow": "global",
             "subset": "mini"}
    page_form = {"team": str(team.id), **board}
    api = Client()
    token: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Bearer {write_token}"}
    answers: dict[str, str] = {}

    def on_page(path: str, response) -> None:
        # A page answers with the form again (or a redirect to the submission) and says why.
        assert response.status_code == 200, (path, response.status_code)
        answers[path] = html.unescape(response.content.decode())

    def by_api(path: str, response) -> None:
        assert response.status_code == 429, (path, response.status_code, response.content)
        answers[path] = response.json()["message"]

    on_page("page submit", web.post(reverse("submit"), {**page_form, "endpoint_url": UNUSED_ENDPOINT}))
    on_page("page upload", web.post(reverse("upload"), {**page_form, "file": _jsonl(upload)}))
    on_page("page re-run", web.post(reverse("submission-action", args=[done.id, "rerun"]), follow=True))
    on_page("page resume", web.post(reverse("submission-action", args=[failed.id, "resume"]), follow=True))
    by_api("api create", api.post(reverse("api-submission-create"), {
        **board, "suite": "fixture", "endpoint_url": UNUSED_ENDPOINT}, content_type="application/json", **token))
    by_api("api upload", api.post(reverse("api-upload"), {**board, "suite": "fixture", "file": _jsonl(upload)},
                                  **token))
    by_api("api re-run", api.post(reverse("api-submission-action", args=[done.id, "rerun"]), **token))
    by_api("api resume", api.post(reverse("api-submission-action", args=[failed.id, "resume"]), **token))

    site = ["--url", live_server.url, "--token", write_token]
    shared = ["--model", "Vision-7B", "--organisation", "Someone else", "--env", "sokoban", "--flow", "global",
              "--subset", "mini", "--suite", "fixture"]
    for path, argv in {"cli submit-endpoint": ["submit-endpoint", *shared, "--endpoint", UNUSED_ENDPOINT],
                       "cli upload": ["upload", str(upload), *shared],
                       "cli rerun": ["rerun", str(done.id)], "cli resume": ["resume", str(failed.id)]}.items():
        code = cli.main([*site, *argv])
        err = capsys.readouterr().err
        assert code == EXIT_REFUSED, (path, err)
        # Other lines may be warnings the site's imports print in this same process.
        answers[path] = next((line.removeprefix("error: ") for line in err.splitlines()
                              if line.startswith("error: ")), err)
    return answers


def _said(answers: dict[str, str], expected: str) -> dict[str, str]:
    """Each answer reduced to ``expected`` when it says it (a page says more around it)."""
    return {path: expected if expected in text else text[:2000] for path, text in answers.items()}


def test_every_way_in_is_refused_with_the_same_message_once_the_quota_is_used_up(capsys, live_server, lab, used_up,
                                                                                  tmp_path):
    done, failed, upload = used_up
    refusal = quota_status(lab.team).refusal()
    assert refusal, "the fixture must use the quota up"
    expected = f"quota reached: {refusal}"
    before = _everything_stored()
    answers = _answers_of_every_way_in(capsys, live_server, web=lab.client, team=lab.team,
                                       write_token=lab.write_token, done=done, failed=failed, upload=upload)
    assert _said(answers, expected) == dict.fromkeys(answers, expected)
    assert _everything_stored() == before
    assert not any((tmp_path / "media").rglob("*"))


def test_a_user_s_new_team_brings_no_new_quota_every_way_in(capsys, live_server, lab, fixture_scenarios, settings,
                                                            tmp_path):
    """Work started in one team counts against its creator in every other team: a second team of the
    same user, with its own quota untouched, still refuses every way in once the user's is used."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MAGEBENCH_QUOTA_PER_USER_CONCURRENT = settings.MAGEBENCH_QUOTA_CONCURRENT = 1
    scenario = Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True).order_by("key").first()
    first = ModelEntry.objects.create(team=lab.team, name="Vision-7B")
    waiting = _submission(lab.team, first, scenario, Submission.Status.QUEUED, Attempt.Status.PENDING)
    Submission.objects.filter(id=waiting.id).update(created_by=lab.user)
    second = team_create(user=lab.user, name="Lab again")
    _, write_token = token_create(team=second, user=lab.user, name="cli", scope="write")
    model = ModelEntry.objects.create(team=second, name="Vision-7B")
    done = _submission(second, model, scenario, Submission.Status.COMPLETED, Attempt.Status.SCORED)
    failed = _submission(second, model, scenario, Submission.Status.INCOMPLETE, Attempt.Status.INFRA_FAILED)
    assert not quota_status(second).refusal(), "the second team's own quota must be free"
    upload = tmp_path / "runs.jsonl"
    upload.write_text(json.dumps({"scenario": scenario.key, "repeat": 0, "replies": ["### Actions\nUp"]}) + "\n")
    expected = ("quota reached: you already have 1 submissions waiting or running, across all your teams; "
                "wait for one to finish")
    before = _everything_stored()
    answers = _answers_of_every_way_in(capsys, live_server, web=lab.client, team=second, write_token=write_token,
                                       done=done, failed=failed, upload=upload)
    assert _said(answers, expected) == dict.fromkeys(answers, expected)
    assert _everything_stored() == before


def test_one_user_s_submissions_count_against_them_in_every_team(lab, fixture_scenarios, settings):
    settings.MAGEBENCH_QUOTA_PER_USER_PER_DAY = settings.MAGEBENCH_QUOTA_PER_DAY = 1
    second = team_create(user=lab.user, name="Lab again")
    for team in (lab.team, second):
        _, token = token_create(team=team, user=lab.user, name="cli", scope="write")
        response = Client().post(reverse("api-submission-create"), {
            "model_name": "Vision-7B", "env": "sokoban", "flow": "global", "subset": "mini", "suite": "fixture",
            "endpoint_url": UNUSED_ENDPOINT}, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}")
        if team == lab.team:
            assert response.status_code == 201, response.content
            assert Submission.objects.get(id=response.json()["id"]).created_by == lab.user
    assert response.status_code == 429 and "across all your teams" in response.json()["message"]
    # The user can read where they stand before trying: their own quota, beside each team's.
    me = Client().get(reverse("api-me"), HTTP_AUTHORIZATION=f"Bearer {token}").json()
    assert me["quota"]["per_day_limit"] == 1 and me["quota"]["per_day_left"] == 0
    assert me["quota"]["total_left"] == settings.MAGEBENCH_QUOTA_PER_USER_TOTAL - 1
    # The token's team has its own day's submission left: the user's quota is what refuses.
    assert [(team["name"], team["quota"]["per_day_left"]) for team in me["teams"]] == [("Lab again", 1)]
    assert Client().get(reverse("api-me")).json()["quota"] is None  # nobody signed in: no quota


def test_a_team_granted_more_quota_lets_its_members_use_it_there(lab, fixture_scenarios, settings):
    settings.MAGEBENCH_QUOTA_PER_USER_PER_DAY = settings.MAGEBENCH_QUOTA_PER_DAY = 1
    Team.objects.filter(id=lab.team.id).update(quota_per_day=3)
    statuses = [Client().post(reverse("api-submission-create"), {
        "model_name": "Vision-7B", "env": "sokoban", "flow": "global", "subset": "mini", "suite": "fixture",
        "endpoint_url": UNUSED_ENDPOINT}, content_type="application/json", **lab.auth()).status_code
        for _ in range(3)]
    assert statuses[:2] == [201, 201]


def test_resuming_a_submission_that_is_still_waiting_needs_no_free_slot(lab, used_up):
    waiting = Submission.objects.get(team=lab.team, status=Submission.Status.QUEUED)
    response = Client().post(reverse("api-submission-action", args=[waiting.id, "resume"]), **lab.auth())
    assert response.status_code == 200, response.content
    assert response.json()["status"] == Submission.Status.QUEUED


def test_a_quota_is_counted_in_two_queries_however_many_submissions_the_team_has(
        lab, used_up, django_assert_num_queries):
    # Each submit asks for it while holding the lock its team's other submits wait on: one query for
    # what is running, one for what the day's and the total limits count.
    with django_assert_num_queries(2):
        status = quota_status(lab.team)
    assert (status.per_day_used, status.total_used, status.concurrent_used) == (2, 2, 1)
