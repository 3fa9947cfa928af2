"""Submission settings: per-subset defaults, the text-only declaration and clear errors."""
import shutil
from pathlib import Path

import pytest
from django.conf import settings as settings_module

from accounts.services import team_get_or_create
from submissions.services import SubmissionError, model_entry_upsert, submission_create_endpoint


@pytest.fixture
def model(db):
    return model_entry_upsert(team=team_get_or_create(name="Lab"), name="M")


def _submit(model, **settings):
    return submission_create_endpoint(model=model, env="football", flow="online", subset="mini", suite="fixture",
                                      endpoint_url="http://127.0.0.1:9/v1", settings=settings)


def test_a_football_mini_submission_runs_ten_repeats_of_each_scenario_by_default(fixture_scenarios, model):
    submission = _submit(model)
    assert submission.settings["repeats"] == 10
    assert submission.attempts.count() == 3 * 10


def test_an_endpoint_that_reads_no_images_is_recorded_as_text_only(fixture_scenarios, model):
    assert _submit(model, observation_images="false", repeats=1).settings["observation_images"] is False
    assert _submit(model, repeats=1).settings["observation_images"] is True


@pytest.mark.parametrize("settings,message", [
    ({"observation_images": "maybe"}, "observation_images must be true or false"),
    ({"max_loop": "many"}, "max_loop must be a whole number"),
    ({"temperature": "hot"}, "temperature must be a number"),
    ({"max_loop": 0}, "max_loop must be between 1 and 1000"),
    ({"frequency_penalty": 3}, "frequency_penalty must be between -2.0 and 2.0"),
    ({"seed": 3}, "unknown setting 'seed'"),
])
def test_a_bad_setting_is_refused_with_its_name_and_nothing_is_stored(fixture_scenarios, model, settings, message):
    with pytest.raises(SubmissionError, match=message):
        _submit(model, **settings)
    assert not model.submissions.exists()


def test_the_official_request_settings_are_frozen_by_default_and_can_be_overridden(fixture_scenarios, model):
    frozen = _submit(model, repeats=1).settings
    assert {k: frozen[k] for k in ("temperature", "top_p", "frequency_penalty", "max_tokens", "parse_retries",
                                   "no_system_role")} == {
        "temperature": 0.1, "top_p": 0.95, "frequency_penalty": 1.0, "max_tokens": 1000, "parse_retries": 0,
        "no_system_role": False}
    variant = _submit(model, repeats=1, frequency_penalty="0", no_system_role="true", parse_retries=2).settings
    assert (variant["frequency_penalty"], variant["no_system_role"], variant["parse_retries"]) == (0.0, True, 2)


def test_football_offers_no_global_flow(fixture_scenarios, model):
    with pytest.raises(SubmissionError, match="Football has no flow 'global'"):
        submission_create_endpoint(model=model, env="football", flow="global", subset="mini", suite="fixture",
                                   endpoint_url="http://127.0.0.1:9/v1")


def test_a_rerun_is_a_new_submission_with_the_same_settings_and_the_old_one_is_kept(fixture_scenarios, lab, model,
                                                                                     settings):
    settings.MAGEBENCH_QUOTA_CONCURRENT = 3  # the page's re-run counts against the team's quota
    client = lab.client  # a member of the submission's team: only they may re-run it
    from submissions.models import Submission
    from submissions.services import submission_rerun

    first = _submit(model, repeats=2, observation_images="false")
    rerun = submission_rerun(submission=first)
    assert rerun.id != first.id and rerun.rerun_of_id == first.id
    assert rerun.settings == first.settings and rerun.endpoint_url == first.endpoint_url
    assert rerun.attempts.count() == first.attempts.count() == 6
    assert Submission.objects.filter(id=first.id).exists()
    response = client.post(f"/submissions/{first.id}/rerun/")
    assert response.status_code == 302 and first.reruns.count() == 2
    page = client.get(f"/submissions/{first.id}/").content.decode()
    assert "Re-runs:" in page and f"#{rerun.id}" in page


def _form(**fields):
    from submissions.forms import EndpointSubmissionForm

    team = model_entry_upsert(team=team_get_or_create(name="Form lab"), name="M").team
    data = {"team": str(team.id), "model_name": "M", "env": "sokoban", "flow": "online", "subset": "mini",
            "endpoint_url": "https://models.example/v1", **fields}
    return EndpointSubmissionForm(data, teams=[team])


def test_the_form_names_its_settings_as_the_services_read_them(db):
    form = _form(repeats="2", temperature="", no_system_role="on", text_only="on")
    assert form.is_valid(), form.errors
    assert form.settings_values() == {"repeats": 2, "no_system_role": True, "observation_images": False}
    blank = _form()
    assert blank.is_valid() and blank.settings_values() == {}


def test_the_form_refuses_a_value_out_of_the_settings_range_on_its_field(db):
    form = _form(repeats="21", max_tokens="0")
    assert not form.is_valid() and set(form.errors) == {"repeats", "max_tokens"}


def test_a_webui_board_with_a_page_lacking_a_description_image_refuses_mergenodes_naming_it(
        fixture_scenarios, model, tmp_path):
    from catalogue.models import Scenario

    page = Scenario.objects.filter(environment_id="webui", suite="fixture", key="step-counter").get()
    plain = tmp_path / "step-counter"
    shutil.copytree(page.resource_path if Path(page.resource_path).is_absolute()
                    else settings_module.SCENARIO_ROOT / page.resource_path, plain)
    (plain / "tasks.md").write_text("# Stair Counter\n\nWords only, no screenshot.\n", encoding="utf-8")
    Scenario.objects.filter(pk=page.pk).update(resource_path=str(plain))

    def submit(flow: str):
        return submission_create_endpoint(model=model, env="webui", flow="online", subset="mini", suite="fixture",
                                          endpoint_url="http://127.0.0.1:9/v1",
                                          settings={"webui_online_flow": flow, "repeats": 1})

    with pytest.raises(SubmissionError, match=r"1 page\(s\) of this board have none: step-counter;"):
        submit("mergenodes")
    assert not model.submissions.exists()
    assert submit("noimg").settings["webui_online_flow"] == "noimg"
