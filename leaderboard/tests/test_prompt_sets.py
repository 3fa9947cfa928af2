"""A suite's prompt sets: the official texts when it is imported with an official checkout, the
platform's wording without one; submissions freeze theirs and boards never mix two."""
from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.urls import reverse

from accounts.services import team_get_or_create
from catalogue.models import SuitePromptSet
from catalogue.prompt_sets import prompt_set_current, prompt_sets_for_run
from catalogue.services import scenarios_import
from conftest import FIXTURE_RESOURCES
from evaluators.agents.checkout import OfficialCheckout
from evaluators.base import get_plugin
from leaderboard.selectors import BoardFilter, board_get
from submissions.engine import attempt_run
from submissions.models import Submission
from submissions.services import model_entry_upsert, submission_create_endpoint

pytestmark = pytest.mark.django_db

FIXTURE_CHECKOUT = Path(__file__).resolve().parents[2] / "fixtures" / "official-checkout"


@pytest.fixture
def checkout(tmp_path) -> Path:
    """The project's stand-in checkout in the official layout, with the fixture resources inside it."""
    root = tmp_path / "MageBench"
    shutil.copytree(FIXTURE_CHECKOUT, root)
    shutil.copytree(FIXTURE_RESOURCES, root / "resources")
    return root


def _official(env: str, flow: str):
    return get_plugin(env).official_prompts(OfficialCheckout(FIXTURE_CHECKOUT), flow)


def _submit(url: str, name: str, *, suite: str, flow: str = "global") -> Submission:
    team = team_get_or_create(name="Lab")
    model = model_entry_upsert(team=team, name=name)
    return submission_create_endpoint(model=model, env="sokoban", flow=flow, subset="mini", suite=suite,
                                      endpoint_url=url, settings={"repeats": 1, "resolution": 256})


def test_a_suite_imported_from_inside_a_checkout_stores_the_official_prompt_sets(checkout):
    report = scenarios_import(path=checkout / "resources", suite="official", envs=["sokoban", "football"],
                              verify=False)
    stored = {(row.environment_id, row.flow): row for row in SuitePromptSet.objects.all()}
    assert set(stored) == {("sokoban", "global"), ("sokoban", "online"), ("football", "online")}
    for (env, flow), row in stored.items():
        expected = _official(env, flow)
        assert row.source == "official" and row.version == expected.version
        assert prompt_set_current(env, "official", flow) == expected
        assert "Flow/Online_HL_FBandSB.py" in row.source_files and len(row.checkout_digest) == 64
    assert f"prompts: sokoban global: official {_official('sokoban', 'global').version} (new) [suite official]" \
        in report.lines()
    again = scenarios_import(path=checkout / "resources", suite="official", envs=["sokoban"], verify=False)
    assert any("(unchanged)" in line for line in again.lines()) and SuitePromptSet.objects.count() == 3


def test_the_command_reads_a_checkout_named_with_official_code_and_refuses_a_broken_one(checkout, tmp_path):
    out = StringIO()
    call_command("import_magebench", str(FIXTURE_RESOURCES), "--suite", "mine", "--env", "sokoban",
                 "--official-code", str(checkout), "--no-page-check", "--no-verify", stdout=out)
    assert "prompts: sokoban online: official" in out.getvalue()
    assert prompt_set_current("sokoban", "mine", "online").source == "official"
    broken = tmp_path / "broken"
    shutil.copytree(FIXTURE_CHECKOUT, broken)
    (broken / "Flow" / "GlobalPlanning.py").unlink()
    with pytest.raises(CommandError, match="GlobalPlanning.py"):
        call_command("import_magebench", str(FIXTURE_RESOURCES), "--suite", "other", "--env", "sokoban",
                     "--official-code", str(broken), "--no-page-check", "--no-verify", stdout=StringIO())
    assert not SuitePromptSet.objects.filter(suite="other").exists()
    assert not Submission.objects.exists()


def test_without_a_checkout_a_suite_runs_with_the_platforms_wording(fixture_scenarios):
    assert "prompts: the platform's own wording [suite fixture]" in " ".join(fixture_scenarios.lines())
    assert prompt_set_current("sokoban", "fixture", "online") == get_plugin("sokoban").prompts("online")
    assert prompt_sets_for_run("sokoban", "fixture", "online", get_plugin("sokoban").prompts("online").version) == {}


@pytest.mark.integration
def test_an_attempt_on_an_official_suite_sends_the_official_texts_and_its_entry_says_which(
        checkout, baseline_endpoint, client):
    scenarios_import(path=checkout / "resources", suite="official", envs=["sokoban"], verify=False)
    prompts = _official("sokoban", "online")
    submission = _submit(baseline_endpoint("random", seed=1).url, "Lab model", suite="official", flow="online")
    assert submission.settings["prompt_version"] == prompts.version
    attempt = submission.attempts.order_by("id").first()
    attempt_run(attempt_id=attempt.id)
    attempt.refresh_from_db()
    trajectory = json.loads((Path(settings.MEDIA_ROOT) / attempt.trajectory_path / "trajectory.json").read_text())
    first = trajectory["calls"][0]["messages"]
    assert first[0] == {"role": "system", "content": [{"type": "text", "text": prompts.system}]}
    texts = [part.get("text") for part in first[1]["content"]]
    assert texts[0] == prompts.format_instruction and texts[-1] == prompts.first_turn
    page = client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    assert prompts.version in page and "official prompts" in page


def test_a_new_prompt_set_starts_a_new_board_generation(checkout, baseline_endpoint, client):
    scenarios_import(path=FIXTURE_RESOURCES, suite="official", envs=["sokoban"], verify=False)
    platform = get_plugin("sokoban").prompts("global")
    before = _submit(baseline_endpoint("oracle").url, "Before", suite="official")
    Submission.objects.filter(pk=before.pk).update(status=Submission.Status.COMPLETED)
    assert [row.model for row in board_get(env="sokoban", flow="global", subset="mini", suite="official").rows] == \
        ["Before"]
    scenarios_import(path=checkout / "resources", suite="official", envs=["sokoban"], verify=False)
    official = _official("sokoban", "global")
    after = _submit(baseline_endpoint("oracle").url, "After", suite="official")
    Submission.objects.filter(pk=after.pk).update(status=Submission.Status.COMPLETED)
    board = board_get(env="sokoban", flow="global", subset="mini", suite="official")
    assert [row.model for row in board.rows] == ["After"] and board.prompts == official
    assert [(g.version, g.entries, g.current) for g in board.generations] == [
        (official.version, 1, True), (platform.version, 1, False)]
    earlier = board_get(env="sokoban", flow="global", subset="mini", suite="official",
                        filters=BoardFilter(prompts=platform.version))
    assert [row.model for row in earlier.rows] == ["Before"] and earlier.prompts == platform
    page = client.get(reverse("board", args=["sokoban", "global", "mini"]) + "?suite=official").content.decode()
    assert "official prompts" in page and f"prompts={platform.version}" in page and "After" in page
    assert "Before" not in page
    older = client.get(reverse("board", args=["sokoban", "global", "mini"])
                       + f"?suite=official&prompts={platform.version}").content.decode()
    assert "Before" in older and "After" not in older and "platform prompts" in older
    api = client.get(reverse("api-board", args=["sokoban", "global", "mini"]) + "?suite=official").json()
    assert api["prompts"] == {"version": official.version, "source": "official", "current": True}
    assert [g["version"] for g in api["generations"]] == [official.version, platform.version]
    earlier_api = client.get(reverse("api-board", args=["sokoban", "global", "mini"])
                             + f"?suite=official&prompts={platform.version}").json()
    assert [row["model"] for row in earlier_api["rows"]] == ["Before"] and earlier_api["prompts"]["current"] is False


def test_the_prompt_set_page_lists_every_text_and_where_it_was_read_from(checkout, client):
    scenarios_import(path=checkout / "resources", suite="official", envs=["sokoban"], verify=False)
    official = _official("sokoban", "online")
    page = client.get(reverse("prompt-set", args=["sokoban", "online", official.version]) + "?suite=official")
    text = page.content.decode()
    assert page.status_code == 200 and "official prompts" in text and "Flow/GlobalPlanning.py" in text
    for value in (official.system, official.format_instruction, official.first_turn, official.regenerate):
        assert value.strip().splitlines()[0].replace("'", "&#x27;").replace('"', "&quot;") in text
    platform = get_plugin("sokoban").prompts("online")
    assert "platform prompts" in client.get(reverse("prompt-set", args=["sokoban", "online", platform.version]))\
        .content.decode()
    assert client.get(reverse("prompt-set", args=["sokoban", "online", "official-000000000000"])).status_code == 404
    card = client.get(reverse("metric-card", args=["sokoban"])).content.decode()
    assert official.version in card and platform.version in card and "png_image_label" in card
