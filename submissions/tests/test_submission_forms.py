"""The upload, submit and submission pages' forms: the file is checked before the quota, a refused
file is named again, a file can be checked alone, Resume is offered only when it would do something,
publishing asks first, and the submit form starts on a board that exists."""
from __future__ import annotations

import html
import io
import json
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import Team
from catalogue.models import Scenario
from evaluators.base import all_plugins
from magebench_client import cli
from submissions.forms import EndpointSubmissionForm, UploadSubmissionForm
from submissions.models import Attempt, ModelEntry, Submission
from submissions.quotas import quota_status

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
GOOD_UPLOAD = ROOT / "fixtures" / "uploads" / "example-sokoban-online.jsonl"


def _stored(media: Path) -> tuple:
    return (Team.objects.count(), ModelEntry.objects.count(), Submission.objects.count(), Attempt.objects.count(),
            sorted(str(path) for path in media.rglob("*")) if media.exists() else [])


def _file(data: bytes, name: str) -> io.BytesIO:
    file = io.BytesIO(data)
    file.name = name
    return file


def _bad_file() -> io.BytesIO:
    return _file(b'{"scenario": "no-such-level", "repeat": 0, "replies": ["x"]}\n', "my-runs.jsonl")


def _upload_form(lab, file: io.BytesIO, **extra: str) -> dict:
    return {"team": str(lab.team.id), "model_name": "Vision-7B", "env": "sokoban", "flow": "online",
            "subset": "full", "file": file, **extra}


@pytest.fixture
def media(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def out_of_quota(lab, fixture_scenarios, settings) -> str:
    """The team's one concurrent slot is taken by a waiting submission."""
    settings.MAGEBENCH_QUOTA_CONCURRENT = 1
    model = ModelEntry.objects.create(team=lab.team, name="Busy")
    scenario = Scenario.objects.filter(environment_id="sokoban", suite="fixture").first()
    waiting = Submission.objects.create(team=lab.team, model=model, environment_id="sokoban", flow="global",
                                        subset="mini", suite="fixture", status=Submission.Status.QUEUED)
    Attempt.objects.create(submission=waiting, scenario=scenario, repeat=0)
    refusal = quota_status(lab.team).refusal()
    assert refusal
    return refusal


# --- the upload page --------------------------------------------------------------------------

def test_a_bad_file_from_a_team_out_of_quota_is_told_what_is_wrong_with_the_file(lab, out_of_quota, media):
    before = _stored(media)
    page = lab.client.post(reverse("upload"), _upload_form(lab, _bad_file()))
    text = html.unescape(page.content.decode())
    assert page.status_code == 200 and "no-such-level" in text and "nothing was stored" in text
    assert out_of_quota not in text
    api = lab.client.post(reverse("api-upload"), {
        "model_name": "Vision-7B", "env": "sokoban", "flow": "online", "subset": "full", "suite": "fixture",
        "file": _bad_file()}, **lab.auth())
    assert api.status_code == 400 and any("no-such-level" in p for p in api.json()["extra"]["problems"])
    assert _stored(media) == before


def test_a_good_file_from_a_team_out_of_quota_is_still_refused_for_the_quota(lab, out_of_quota, media):
    before = _stored(media)
    page = lab.client.post(reverse("upload"), _upload_form(lab, _file(GOOD_UPLOAD.read_bytes(), "good.jsonl")))
    assert page.status_code == 200 and out_of_quota in html.unescape(page.content.decode())
    assert _stored(media) == before


def test_a_refused_upload_names_the_chosen_file_so_it_can_be_chosen_again(lab, fixture_scenarios, media):
    page = lab.client.post(reverse("upload"), _upload_form(lab, _bad_file())).content.decode()
    assert "You chose <code>my-runs.jsonl</code>" in page and "choose it again" in page
    assert "chosen-file" not in lab.client.get(reverse("upload")).content.decode()


def test_a_file_name_is_shown_escaped(lab, fixture_scenarios, media):
    page = lab.client.post(reverse("upload"), _upload_form(lab, _file(b"{}", "<i>x.jsonl"))).content.decode()
    assert "&lt;i&gt;x.jsonl" in page and "<i>x.jsonl" not in page


def test_the_upload_page_shows_the_command_line_check_not_a_server_command(lab):
    page = html.unescape(lab.client.get(reverse("upload")).content.decode())
    assert "magebench --url http://testserver check FILE" in page
    assert "manage.py" not in page
    assert "check" in cli.build_parser().parse_args(["check", "f.jsonl", "--env", "sokoban", "--flow", "online",
                                                     "--subset", "mini"]).command


def test_checking_a_file_on_the_page_says_what_it_holds_and_stores_nothing(lab, fixture_scenarios, media):
    before = _stored(media)
    page = lab.client.post(reverse("upload"), _upload_form(
        lab, _file(GOOD_UPLOAD.read_bytes(), "good.jsonl"), check="1")).content.decode()
    assert "The file is valid" in page and "4 run(s) of 2 scenario(s), up to 2 repeat(s)" in page
    assert "the entry would be <em>incomplete</em>" in " ".join(page.split())
    bad = html.unescape(lab.client.post(reverse("upload"), _upload_form(lab, _bad_file(), check="1")).content.decode())
    assert "no-such-level" in bad and "The file is valid" not in bad
    assert _stored(media) == before


def test_checking_a_file_through_the_api_needs_a_team_and_uses_no_quota(lab, out_of_quota, media):
    before = _stored(media)
    body = {"env": "sokoban", "flow": "online", "subset": "full", "suite": "fixture"}
    anonymous = Client().post(reverse("api-upload-check"), {**body, "file": _bad_file()})
    assert anonymous.status_code in (401, 403)
    good = Client().post(reverse("api-upload-check"), {**body, "file": _file(GOOD_UPLOAD.read_bytes(), "g.jsonl")},
                         HTTP_AUTHORIZATION=f"Bearer {lab.read_token}")
    assert good.status_code == 200, good.content
    answer = good.json()
    assert (answer["valid"], answer["runs"], answer["scenarios"], answer["repeats"]) == (True, 4, 2, 2)
    assert len(answer["missing_scenarios"]) == Scenario.objects.filter(
        environment_id="sokoban", suite="fixture", in_full=True).count() - 2
    bad = Client().post(reverse("api-upload-check"), {**body, "file": _bad_file()},
                        HTTP_AUTHORIZATION=f"Bearer {lab.read_token}")
    assert bad.status_code == 400 and any("no-such-level" in p for p in bad.json()["extra"]["problems"])
    assert _stored(media) == before


# --- the submission page's actions ------------------------------------------------------------------

def _finished(lab, attempt_statuses: list[str], *, public: bool = False) -> Submission:
    scenario = Scenario.objects.filter(environment_id="sokoban", suite="fixture").first()
    model, _ = ModelEntry.objects.get_or_create(team=lab.team, name="Vision-7B")
    submission = Submission.objects.create(
        team=lab.team, model=model, environment_id="sokoban", flow="global", subset="mini", suite="fixture",
        status=Submission.Status.COMPLETED, is_public=public, endpoint_url="http://127.0.0.1:9/v1")
    for repeat, status in enumerate(attempt_statuses):
        Attempt.objects.create(submission=submission, scenario=scenario, repeat=repeat, status=status,
                               score=50.0 if status == Attempt.Status.SCORED else None)
    return submission


def _resume_button(page: str) -> str:
    form = page[page.index(reverse("submission-action", args=[page_id(page), "resume"])):]
    return form[form.index("<button"):form.index("</button>")]


def page_id(page: str) -> int:
    found = re.search(r"Submission #(\d+)", page)
    assert found is not None
    return int(found.group(1))


def test_resume_is_disabled_when_every_attempt_has_a_score(lab, fixture_scenarios):
    done = _finished(lab, [Attempt.Status.SCORED, Attempt.Status.SCORED])
    page = lab.client.get(reverse("submission-detail", args=[done.id])).content.decode()
    assert "disabled" in _resume_button(page) and "every attempt has a score" in _resume_button(page)
    response = lab.client.post(reverse("submission-action", args=[done.id, "resume"]), follow=True)
    assert "Nothing to resume" in response.content.decode()
    done.refresh_from_db()
    assert done.status == Submission.Status.COMPLETED


def test_resume_is_offered_when_an_attempt_failed(lab, fixture_scenarios):
    failed = _finished(lab, [Attempt.Status.SCORED, Attempt.Status.INFRA_FAILED])
    page = lab.client.get(reverse("submission-detail", args=[failed.id])).content.decode()
    assert "disabled" not in _resume_button(page)


def test_publishing_from_the_page_asks_first_and_publishes_only_once_confirmed(lab, fixture_scenarios):
    private = _finished(lab, [Attempt.Status.SCORED])
    action = reverse("submission-action", args=[private.id, "publish"])
    asked = lab.client.post(action)
    page = asked.content.decode()
    assert asked.status_code == 200 and "Yes, publish it" in page and 'name="confirm" value="yes"' in page
    assert f'href="{reverse("submission-detail", args=[private.id])}"' in page  # the way back keeps it private
    private.refresh_from_db()
    assert not private.is_public
    assert lab.client.post(action, {"confirm": "no"}).status_code == 200
    private.refresh_from_db()
    assert not private.is_public
    confirmed = lab.client.post(action, {"confirm": "yes"})
    assert confirmed.status_code == 302
    private.refresh_from_db()
    assert private.is_public


# --- the submit form -------------------------------------------------------------------------------

def test_the_submit_form_starts_on_an_environment_and_flow_that_make_a_board(lab):
    flows = {plugin.slug: plugin.flows for plugin in all_plugins()}
    for form_class in (EndpointSubmissionForm, UploadSubmissionForm):
        form = form_class(teams=[lab.team])
        env, flow = form["env"].value(), form["flow"].value()
        assert env in flows and flow in flows[env], (form_class, env, flow)
        assert json.loads(form.fields["env"].widget.attrs["data-flows"]) == {k: list(v) for k, v in flows.items()}
    page = lab.client.get(reverse("submit")).content.decode()
    env, flow = EndpointSubmissionForm(teams=[lab.team])["env"].value(), EndpointSubmissionForm()["flow"].value()
    assert f'<option value="{env}" selected>' in page and f'<option value="{flow}" selected>' in page
    assert "js/board_pair.js" in page


def test_the_submit_form_refuses_a_flow_the_environment_lacks_on_the_flow_field(lab):
    form = EndpointSubmissionForm({"team": str(lab.team.id), "model_name": "M", "env": "football", "flow": "global",
                                   "subset": "mini", "endpoint_url": "http://127.0.0.1:9/v1"}, teams=[lab.team])
    assert not form.is_valid()
    assert form.errors["flow"] == ["Football has no flow Global; it offers Online."]
