"""Endpoint URLs from strangers: no requests to internal addresses, no credentials on display.

Every way in (service, API, form, operators' commands) goes through one check, and the worker checks
again after resolving the name. No test here sends traffic anywhere but 127.0.0.1.
"""
from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from accounts.models import Membership, Team
from catalogue.models import Scenario
from magebench_client import cli
from submissions.endpoints import endpoint_settings_check
from submissions.engine import attempt_run
from submissions.models import Attempt, ModelEntry, Submission
from submissions.services import SubmissionError, model_entry_upsert, submission_create_endpoint, submission_rerun

pytestmark = pytest.mark.django_db

#: Every form of an internal address an attacker tried, with what the refusal must name.
FORBIDDEN = [
    "http://127.0.0.1:8000/v1",
    "http://127.8.9.10/v1",
    "http://[::1]:8000/v1",
    "http://localhost:8000/v1",
    "http://LOCALHOST./v1",
    "http://api.localhost/v1",
    "http://10.0.0.7/v1",
    "http://172.16.4.2/v1",
    "http://192.168.1.20/v1",
    "http://100.64.0.1/v1",
    "http://[fd12:3456::1]/v1",
    "http://169.254.1.1/v1",
    "http://[fe80::1]/v1",
    "http://0.0.0.0:8000/v1",
    "http://[::]:8000/v1",
    "http://224.0.0.1/v1",
    "http://[ff02::1]/v1",
    "http://255.255.255.255/v1",
    "http://169.254.169.254/latest/meta-data",
    "http://metadata.google.internal/computeMetadata/v1",
    "http://metadata/computeMetadata/v1",
    "http://[fd00:ec2::254]/latest/meta-data",
    "http://100.100.100.200/latest/meta-data",
    "http://168.63.129.16/machine",
    "http://2130706433/v1",
    "http://0x7f000001/v1",
    "http://0177.0.0.1/v1",
    "http://127.1/v1",
    "http://0x7f.0.0.1/v1",
    "http://[::ffff:127.0.0.1]/v1",
    "http://[::ffff:7f00:1]/v1",
    "http://[::ffff:169.254.169.254]/v1",
    "http://[::127.0.0.1]/v1",
    "http://[64:ff9b::a00:7]/v1",
    "http://[2002:7f00:1::]/v1",
]

CREDENTIALS = [
    "http://user:pass@127.0.0.1:8000/v1",
    "http://token@127.0.0.1:8000/v1",
    "http://127.0.0.1:8000/v1?api-key=sk-in-the-url",
    "http://127.0.0.1:8000/v1?key=sk-in-the-url",
    "http://127.0.0.1:8000/v1?api_key=sk-in-the-url",
    "http://127.0.0.1:8000/v1?access_token=sk-in-the-url",
    "http://127.0.0.1:8000/v1?sig=abc&sv=2024",
    "http://127.0.0.1:8000/v1?X-Amz-Signature=abc",
    "http://127.0.0.1:8000/v1?password=hunter2",
    "http://127.0.0.1:8000/v1?auth=abc",
]


@pytest.fixture
def production_policy(settings):
    """The production address policy: only public addresses, nothing on an allow-list."""
    settings.MAGEBENCH_ENDPOINT_ALLOW_PRIVATE = False
    settings.MAGEBENCH_ENDPOINT_ALLOWED_NETWORKS = []
    return settings


def _model(name: str = "Probe") -> ModelEntry:
    team, _ = Team.objects.get_or_create(name="Lab", defaults={"slug": "lab"})
    return model_entry_upsert(team=team, name=name)


def _create(url: str, **extra) -> Submission:
    return submission_create_endpoint(model=_model(), env="sokoban", flow="global", subset="mini",
                                      suite="fixture", endpoint_url=url, **extra)


def _api(lab, url: str):
    return lab.client.post(reverse("api-submission-create"), {
        "model_name": "Probe", "env": "sokoban", "flow": "global", "subset": "mini", "suite": "fixture",
        "endpoint_url": url}, content_type="application/json", **lab.auth())


def _form(lab, url: str):
    return lab.client.post(reverse("submit"), {
        "team": str(lab.team.id), "model_name": "Probe", "env": "sokoban", "flow": "global", "subset": "mini",
        "endpoint_url": url, "repeats": 1})


# --- refusing internal addresses at submission -------------------------------------------------


@pytest.mark.parametrize("url", FORBIDDEN)
def test_the_service_refuses_endpoint_urls_that_point_at_internal_addresses_in_production(production_policy, url):
    with pytest.raises(SubmissionError, match="not allowed"):
        _create(url)
    assert not Submission.objects.exists()


@pytest.mark.parametrize("url", FORBIDDEN)
def test_the_api_refuses_endpoint_urls_that_point_at_internal_addresses_in_production(production_policy, lab, url):
    response = _api(lab, url)
    assert response.status_code == 400 and "not allowed" in response.json()["message"]
    assert not Submission.objects.exists()


@pytest.mark.parametrize("url", FORBIDDEN)
def test_the_form_refuses_endpoint_urls_that_point_at_internal_addresses_in_production(production_policy, lab, url):
    response = _form(lab, url)
    assert response.status_code == 200 and "not allowed" in response.content.decode()
    assert not Submission.objects.exists()


def test_a_public_address_is_accepted_in_production(production_policy, fixture_scenarios):
    submission = _create("http://93.184.216.34:8000/v1")
    assert submission.endpoint_url == "http://93.184.216.34:8000/v1/chat/completions"


def test_the_allow_list_lets_a_trusted_private_network_through_and_nothing_else(production_policy,
                                                                                  fixture_scenarios):
    production_policy.MAGEBENCH_ENDPOINT_ALLOWED_NETWORKS = ["10.20.0.0/16", "gpu-box.lab.example"]
    assert _create("http://10.20.3.4:8000/v1").endpoint_url == "http://10.20.3.4:8000/v1/chat/completions"
    for refused in ["http://10.21.0.1:8000/v1", "http://127.0.0.1:8000/v1", "http://169.254.169.254/v1"]:
        with pytest.raises(SubmissionError, match="not allowed"):
            _create(refused)
    assert Submission.objects.count() == 1


def test_development_allows_loopback_but_never_a_metadata_service(fixture_scenarios, settings):
    settings.MAGEBENCH_ENDPOINT_ALLOW_PRIVATE = True
    assert _create("http://127.0.0.1:8000/v1").endpoint_url.startswith("http://127.0.0.1:8000/")
    for refused in ["http://169.254.169.254/latest/meta-data", "http://metadata.google.internal/v1",
                    "http://[fd00:ec2::254]/v1"]:
        with pytest.raises(SubmissionError, match="not allowed"):
            _create(refused)


def test_a_malformed_allow_list_is_reported_by_the_system_checks(settings):
    settings.MAGEBENCH_ENDPOINT_ALLOWED_NETWORKS = ["10.0.0.0/8", "10.0.0.1:8000"]
    errors = endpoint_settings_check()
    assert [e.id for e in errors] == ["submissions.E001"] and "10.0.0.1:8000" in errors[0].msg
    settings.MAGEBENCH_ENDPOINT_ALLOWED_NETWORKS = ["10.0.0.0/8", "gpu-box.lab.example"]
    assert endpoint_settings_check() == []


# --- credentials in URLs -----------------------------------------------------------------------


@pytest.mark.parametrize("url", CREDENTIALS)
def test_the_service_refuses_credentials_in_the_url_and_points_to_the_api_key_field(url):
    with pytest.raises(SubmissionError, match="API key field") as caught:
        _create(url)
    assert "sk-in-the-url" not in str(caught.value) and "hunter2" not in str(caught.value)
    assert not Submission.objects.exists()


def test_the_api_and_the_form_refuse_credentials_in_the_url_without_repeating_them(lab):
    url = "http://user:hunter2@127.0.0.1:8000/v1?api-key=sk-in-the-url"
    response = _api(lab, url)
    assert response.status_code == 400 and "API key" in response.json()["message"]
    # The form gives the submitter back what they typed; its error message does not repeat it.
    errors = " ".join(_form(lab, url).context["form"].non_field_errors())
    assert "API key field" in errors
    for said in (response.content.decode(), errors):
        assert "sk-in-the-url" not in said and "hunter2" not in said
    assert not Submission.objects.exists()


def test_a_stored_url_with_credentials_is_shown_stripped_on_the_page_the_api_and_the_queue(client,
                                                                                           fixture_scenarios):
    submission = _stored_with_credentials()
    stripped = "http://llm.example/v1/chat/completions?api-version=2024"
    # Its team's member: anyone else sees no endpoint at all (test_endpoint_privacy).
    member = get_user_model().objects.create_user("old-member", password="a long passphrase 7")
    Membership.objects.create(team=submission.team, user=member, role=Membership.Role.OWNER)
    client.force_login(member)
    page = client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    detail = client.get(reverse("api-submission-detail", args=[submission.id])).content.decode()
    listing = client.get(reverse("api-submission-create")).content.decode()
    queue = client.get(reverse("queue")).content.decode()
    assert stripped in page
    assert client.get(reverse("api-submission-detail", args=[submission.id])).json()["endpoint_url"] == stripped
    assert "could not connect" in queue and "endpoint_unreachable" in detail  # the errors are still shown
    for said in (page, detail, listing, queue):
        assert "sk-leak" not in said and "hunter2" not in said and "alice" not in said


def test_a_stored_url_with_credentials_or_an_internal_address_cannot_be_re_run(production_policy,
                                                                            fixture_scenarios):
    with pytest.raises(SubmissionError, match="API key field"):
        submission_rerun(submission=_stored_with_credentials())
    internal = Submission.objects.create(
        team=Team.objects.get(slug="old"), model=ModelEntry.objects.get(name="Legacy"), environment_id="sokoban",
        flow="global", subset="mini", suite="fixture", status=Submission.Status.COMPLETED,
        endpoint_url="http://10.0.0.7/v1/chat/completions")
    with pytest.raises(SubmissionError, match="not allowed"):
        submission_rerun(submission=internal)
    assert Submission.objects.filter(rerun_of__isnull=False).count() == 0


@pytest.mark.django_db(transaction=True)
def test_the_command_line_client_reports_the_refusal_and_prints_stored_urls_stripped(capsys, production_policy,
                                                                                     live_server, lab,
                                                                                     fixture_scenarios):
    site = ["--url", live_server.url, "--token", lab.write_token]
    code = cli.main([*site, "submit-endpoint", "--model", "Probe", "--env", "sokoban", "--flow", "global",
                     "--subset", "mini", "--suite", "fixture", "--endpoint", "http://169.254.169.254/latest/meta-data"])
    assert code != 0 and "not allowed" in capsys.readouterr().err
    stored = _stored_with_credentials()
    for command in (["results", str(stored.id)], ["status", str(stored.id)]):
        assert cli.main([*site, *command]) == 0
        out = capsys.readouterr().out
        assert "Legacy" in out
        assert "sk-leak" not in out and "hunter2" not in out


def _stored_with_credentials() -> Submission:
    """A submission stored before credentials in URLs were refused, with an error quoting its URL."""
    team = Team.objects.create(name="Old", slug="old")
    submission = Submission.objects.create(
        team=team, model=ModelEntry.objects.create(team=team, name="Legacy"), environment_id="sokoban",
        flow="global", subset="mini", suite="fixture", status=Submission.Status.RUNNING, is_public=True,
        endpoint_url="http://alice:hunter2@llm.example/v1/chat/completions?api-key=sk-leak&api-version=2024")
    Attempt.objects.create(
        submission=submission, scenario=Scenario.objects.filter(suite="fixture").first(), repeat=0,
        status=Attempt.Status.RETRYING, error_kind="endpoint_unreachable",
        error_message="could not connect (url: /v1/chat/completions?api-key=sk-leak&api-version=2024 "
                      "via http://alice:hunter2@llm.example/)")
    return submission


# --- the operators' commands -------------------------------------------------------------------


def test_submit_endpoint_refuses_a_private_address_unless_the_operator_vouches_for_it(production_policy,
                                                                                       fixture_scenarios):
    base = ["--team", "Ops", "--model", "Local", "--env", "sokoban", "--flow", "global", "--suite", "fixture",
            "--url", "http://127.0.0.1:8101/v1"]
    with pytest.raises(CommandError, match="not allowed"):
        call_command("submit_endpoint", *base, stdout=StringIO())
    assert not Submission.objects.exists()
    call_command("submit_endpoint", *base, "--allow-private-endpoint", stdout=StringIO())
    assert Submission.objects.get().endpoint_trusted
    with pytest.raises(CommandError, match="not allowed"):
        call_command("submit_endpoint", *base[:-1], "http://169.254.169.254/v1", "--allow-private-endpoint",
                     stdout=StringIO())


def test_submit_baselines_refuses_a_private_address_unless_the_operator_vouches_for_it(production_policy,
                                                                                        fixture_scenarios):
    urls = ["--url", "idle=http://127.0.0.1:8101/v1", "--agent", "idle", "--env", "sokoban", "--subset", "mini"]
    with pytest.raises(CommandError, match="not allowed"):
        call_command("submit_baselines", *urls, stdout=StringIO())
    assert not Submission.objects.exists()
    call_command("submit_baselines", *urls, "--allow-private-endpoint", stdout=StringIO())
    assert Submission.objects.count() == 2 and all(s.endpoint_trusted for s in Submission.objects.all())


# --- the worker checks again after resolving -----------------------------------------------------


def test_the_worker_refuses_an_endpoint_that_has_become_internal_since_it_was_accepted(settings, fixture_scenarios,
                                                                                       baseline_endpoint):
    server = baseline_endpoint("oracle")
    # Accepted while loopback was allowed, as a name resolving to a public address would be; the
    # worker then finds it resolves to 127.0.0.1.
    settings.MAGEBENCH_ENDPOINT_ALLOW_PRIVATE = True
    submission = _create(server.url.replace("127.0.0.1", "localhost"), endpoint_model="oracle",
                         settings={"repeats": 1})
    settings.MAGEBENCH_ENDPOINT_ALLOW_PRIVATE = False
    attempt = submission.attempts.first()
    assert attempt_run(attempt_id=attempt.id) is None  # refused at once: retrying cannot help
    attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.INFRA_FAILED and attempt.error_kind == "invalid_request"
    assert "not allowed" in attempt.error_message
    assert server.chat_requests == 0


def test_the_worker_calls_a_private_endpoint_an_operator_vouched_for(production_policy, fixture_scenarios,
                                                                     baseline_endpoint):
    server = baseline_endpoint("oracle")
    submission = _create(server.url, endpoint_model="oracle", settings={"repeats": 1}, endpoint_trusted=True)
    attempt = submission.attempts.first()
    attempt_run(attempt_id=attempt.id)
    attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.SCORED and server.chat_requests > 0
