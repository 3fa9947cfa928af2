"""Submitting, following and replaying through the pages and the API."""
from __future__ import annotations

import pytest
from django.urls import reverse

from submissions.crypto import decrypt_secret
from submissions.engine import attempt_run
from submissions.models import Attempt, Submission
from submissions.services import submission_prepare

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


def _form(url: str, team_id: int, **extra) -> dict:
    return {"team": str(team_id), "model_name": "Lab model", "env": "sokoban", "flow": "global", "subset": "mini",
            "endpoint_url": url, "repeats": 1, **extra}


def test_the_form_registers_a_model_and_queues_its_attempts(lab, fixture_scenarios, baseline_endpoint):
    client = lab.client
    server = baseline_endpoint("oracle")
    response = client.post(reverse("submit"), _form(server.url, lab.team.id, api_key="sk-secret",
                                                   parameter_count=7_000_000_000, open_weights="on"))
    submission = Submission.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("submission-detail", args=[submission.id])
    submission_prepare(submission_id=submission.id)  # as a worker does after the request
    assert submission.attempts.count() == 10 and submission.status == Submission.Status.QUEUED
    assert submission.settings["prompt_version"] == "sokoban-global-v3" and submission.settings["repeats"] == 1
    assert {k: submission.settings[k] for k in ("temperature", "top_p", "frequency_penalty", "max_tokens",
                                                 "parse_retries", "no_system_role")} == {
        "temperature": 0.1, "top_p": 0.95, "frequency_penalty": 1.0, "max_tokens": 1000, "parse_retries": 0,
        "no_system_role": False}  # the official request settings, frozen with the submission
    assert submission.model.open_weights and submission.model.parameter_count == 7_000_000_000
    assert submission.team == lab.team and not submission.is_public  # private until the owner publishes
    assert "sk-secret" not in submission.api_key_encrypted
    assert decrypt_secret(submission.api_key_encrypted) == "sk-secret"
    page = client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    assert "sk-secret" not in page and "0/10" in page


def test_the_form_explains_a_bad_endpoint_url_and_stores_nothing(lab, fixture_scenarios):
    response = lab.client.post(reverse("submit"), _form("ftp://example.org/v1", lab.team.id))
    assert response.status_code == 200
    assert "http" in response.content.decode() and not Submission.objects.exists()


def test_the_api_refuses_a_subset_without_scenarios_with_a_clear_message(client, lab):
    response = client.post(reverse("api-submission-create"), {
        "model_name": "M", "env": "sokoban", "flow": "global", "subset": "mini",
        "suite": "nowhere", "endpoint_url": "http://127.0.0.1:9/v1"}, content_type="application/json", **lab.auth())
    assert response.status_code == 400 and "no mini scenarios" in response.json()["message"]
    assert not Submission.objects.exists()


def test_the_replay_shows_every_step_of_an_attempt(client, lab, fixture_scenarios, baseline_endpoint):
    server = baseline_endpoint("oracle")
    response = client.post(reverse("api-submission-create"), {
        "model_name": "Oracle", "env": "sokoban", "flow": "online", "subset": "mini", "public": True,
        "suite": "fixture", "endpoint_url": server.url, "settings": {"repeats": 1}}, content_type="application/json",
        **lab.auth())
    assert response.status_code == 201
    submission_prepare(submission_id=response.json()["id"])  # as a worker does after the request
    attempt = Attempt.objects.filter(submission_id=response.json()["id"]).first()
    attempt_run(attempt_id=attempt.id)
    attempt.refresh_from_db()
    page = client.get(reverse("attempt-replay", args=[attempt.id]))
    assert page.status_code == 200 and b"trajectory-data" in page.content
    data = client.get(reverse("api-attempt-trajectory", args=[attempt.id])).json()
    trajectory = data["trajectory"]
    assert len(trajectory["steps"]) == attempt.steps == attempt.model_calls
    assert trajectory["steps"][-1]["info"]["best"] == pytest.approx(attempt.details["best_reward"])
    frame = client.get(reverse("attempt-frame", args=[attempt.id, trajectory["steps"][0]["frame"]]))
    assert frame.status_code == 200 and frame["Content-Type"] == "image/png"
    for name in ["trajectory.json", "..%2F..%2Fsecret.png", "frame_9999.png"]:
        assert client.get(f"/attempts/{attempt.id}/frames/{name}").status_code == 404, name
    detail = client.get(reverse("api-submission-detail", args=[attempt.submission_id])).json()
    assert detail["progress"]["scored"] == 1 and "api_key" not in str(detail)


def test_submit_baselines_queues_each_board_once(fixture_scenarios):
    from io import StringIO

    from django.core.management import CommandError, call_command

    urls = ["--url", "idle=http://127.0.0.1:8101/v1", "--url", "oracle=http://127.0.0.1:8103/v1"]
    out = StringIO()
    call_command("submit_baselines", "--env", "sokoban", "--subset", "mini", "--subset", "full", *urls, stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 8 and lines[0].startswith("Idle agent on sokoban/global/mini")
    assert lines[4].startswith("Idle agent on sokoban/global/full")  # every mini board first
    assert Submission.objects.filter(is_baseline=True).count() == 8
    call_command("submit_baselines", "--env", "sokoban", "--subset", "mini", "--subset", "full", *urls,
                 stdout=StringIO())
    assert Submission.objects.filter(is_baseline=True).count() == 8
    with pytest.raises(CommandError, match="unknown baseline agent"):
        call_command("submit_baselines", "--url", "genius=http://127.0.0.1:1/v1")


def test_submit_baselines_fills_what_each_environments_demo_baselines_declare_every_mini_board_first(
        fixture_scenarios):
    from io import StringIO

    from django.core.management import call_command

    urls = [f"--url={agent}=http://127.0.0.1:810{i}/v1" for i, agent in enumerate(["idle", "random", "oracle"])]
    out = StringIO()
    call_command("submit_baselines", "--max-repeats", "1", *urls, stdout=out)
    boards = [line.split(": ")[0] for line in out.getvalue().splitlines()]
    # Board order (WebUI, Sokoban, Football), each with its own agents that have a URL, on every
    # flow; mini boards first. WebUI has no random agent, Football no oracle.
    mini = ["Idle agent on webui/global/mini", "Idle agent on webui/online/mini",
            "Oracle agent on webui/global/mini", "Oracle agent on webui/online/mini",
            "Idle agent on sokoban/global/mini", "Idle agent on sokoban/online/mini",
            "Oracle agent on sokoban/global/mini", "Oracle agent on sokoban/online/mini",
            "Random agent on sokoban/global/mini", "Random agent on sokoban/online/mini",
            "Idle agent on football/online/mini", "Random agent on football/online/mini"]
    assert boards == mini + [board.replace("/mini", "/full") for board in mini]


def test_submit_baselines_lists_the_agents_the_demo_needs_for_the_demo_to_serve():
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("submit_baselines", "--list-agents", stdout=out)
    assert out.getvalue().split() == ["idle", "random", "oracle", "degraded"]
    out = StringIO()
    call_command("submit_baselines", "--list-agents", "--env", "football", stdout=out)
    assert out.getvalue().split() == ["idle", "random"]


def test_submit_baselines_can_cap_the_repeats_and_each_submission_records_what_it_ran(fixture_scenarios):
    from io import StringIO

    from django.core.management import call_command

    urls = ["--url", "idle=http://127.0.0.1:8101/v1", "--url", "random=http://127.0.0.1:8102/v1"]
    call_command("submit_baselines", "--env", "football", "--max-repeats", "3", *urls, stdout=StringIO())
    football = Submission.objects.filter(environment_id="football", subset="mini")
    assert football.count() == 2 and all(s.settings["repeats"] == 3 for s in football)  # 10 by default
    assert all(s.attempts.count() == 3 * 3 for s in football)  # 3 mini scenarios × 3 repeats
    call_command("submit_baselines", "--env", "sokoban", "--max-repeats", "3", *urls, stdout=StringIO())
    repeats = dict(Submission.objects.filter(environment_id="sokoban", flow="global").values_list(
        "model__name", "settings__repeats"))
    assert repeats == {"Idle agent": 1, "Random agent": 3}  # under the cap, each keeps its own count


def test_the_upload_page_explains_each_environments_re_scoring_in_its_plugins_words(lab):
    from evaluators.base import all_plugins

    page = lab.client.get(reverse("upload")).content.decode()
    for plugin in all_plugins():
        assert plugin.upload_note.replace("'", "&#x27;") in page
    assert "WebUI runs may\n    carry the generated <code>index.html</code>, <code>style.css</code> and " \
           "<code>script.js</code> instead." in page


def test_the_text_only_box_names_the_environments_that_can_skip_their_frames():
    from submissions.forms import EndpointSubmissionForm

    help_text = EndpointSubmissionForm().fields["text_only"].help_text
    assert help_text == "Observations are sent as text alone and no frame is rendered (Football and Sokoban)."


def test_submit_baselines_help_says_what_each_agent_does_in_each_environment():
    from io import StringIO

    from submissions.management.commands.submit_baselines import Command

    out = StringIO()
    Command(stdout=out).create_parser("manage.py", "submit_baselines").print_help(out)
    text = " ".join(out.getvalue().split())
    assert "Football: action_release_sprint, a no-op, as no idle action is accepted" in text
    assert "Sokoban: reads the level from the image and plays an optimal solution" in text
    assert "WebUI: the target page with every style stripped" in text
