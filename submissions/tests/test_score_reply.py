"""Offline scoring of saved replies, through the same code path as live runs."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluators.sokoban.solver import solve_grid

pytestmark = pytest.mark.django_db


def _score(*args: str) -> dict:
    out = StringIO()
    call_command("score_reply", *args, stdout=out)
    return json.loads(out.getvalue())


def test_it_scores_an_optimal_global_reply_100(fixture_scenarios, tmp_path):
    from catalogue.models import Scenario

    level = Scenario.objects.get(key="1-Sokoban-small-v0")
    moves = solve_grid(level.data["grid"]).actions
    reply = tmp_path / "reply.txt"
    reply.write_text("### Analyze\nplanned offline\n### Actions\n" + ", ".join(moves))
    result = _score("--scenario", level.key, "--flow", "global", "--reply", str(reply))
    assert result["score"] == pytest.approx(100.0) and result["actions"] == moves
    assert result["invalid_action"] is False and result["parse_errors"] == []


def test_it_reports_the_idle_score_and_the_parse_error_for_a_reply_without_actions(fixture_scenarios, tmp_path):
    from catalogue.models import Scenario

    level = Scenario.objects.get(key="1-Sokoban-small-v0")
    reply = tmp_path / "reply.txt"
    reply.write_text("I would rather not play.")
    result = _score("--scenario", level.key, "--flow", "global", "--reply", str(reply))
    assert result["score"] == pytest.approx(100 - 5 * level.data["upper_bound"]["reward"])
    assert result["invalid_action"] is True and result["parse_errors"] == ["no valid action in the reply"]


def test_it_plays_one_online_reply_per_decision(fixture_scenarios, tmp_path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["# action\nUp", "garbage", "# action\nLeft"]))
    result = _score("--scenario", "1-Sokoban-small-v0", "--flow", "online", "--reply", str(replies))
    assert result["actions"] == ["Up", "Left"] and result["diagnostics"]["invalid_decisions"] == 1
    assert result["parsed"] == [["Up"], [], ["Left"]]


def test_it_explains_bad_input(fixture_scenarios, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(CommandError, match="not valid JSON"):
        _score("--scenario", "1-Sokoban-small-v0", "--flow", "online", "--reply", str(bad))
    with pytest.raises(CommandError, match="no scenario 'nope'"):
        _score("--scenario", "nope", "--flow", "global", "--reply", str(bad))


@pytest.mark.integration
def test_it_renders_and_scores_a_webui_reply_with_its_states_and_breakdown(fixture_scenarios, tmp_path):
    from conftest import FIXTURE_RESOURCES
    from evaluators.webui.baselines import format_code_reply, page_files

    page = FIXTURE_RESOURCES / "WebUI" / "step-counter"
    reply = tmp_path / "reply.md"
    reply.write_text(format_code_reply(page_files(page, degrade=True), online=False, analysis="unstyled"))
    result = _score("--scenario", "step-counter", "--flow", "global", "--reply", str(reply), "--env", "webui")
    assert 0 < result["score"] < 100
    assert [s["name"] for s in result["details"]["state_scores"]][0] == "origin"
    breakdown = result["details"]["breakdown"]
    assert sum(breakdown.values()) == pytest.approx(1.0) and breakdown["attribute"] > 0
    assert result["actions"] == ["write_html", "write_javascript"]


def test_the_played_back_model_ends_the_run_when_its_replies_run_out_instead_of_answering_blank():
    from evaluators.agents.replay import RecordedModel, RepliesExhausted

    model = RecordedModel(["# action\nUp"])
    assert model.complete([], temperature=0.0, max_tokens=10).text == "# action\nUp"
    with pytest.raises(RepliesExhausted):
        model.complete([], temperature=0.0, max_tokens=10)


def test_it_scores_replies_exactly_as_an_upload_of_them_is_rescored(fixture_scenarios, tmp_path):
    from catalogue.models import Scenario
    from submissions.engine import scenario_spec
    from submissions.rescoring import replay_recorded, upload_settings

    replies = ["# action\nUp", "garbage", "# action\nLeft"]
    saved = tmp_path / "replies.json"
    saved.write_text(json.dumps(replies))
    scored = _score("--scenario", "1-Sokoban-small-v0", "--flow", "online", "--reply", str(saved))
    level = Scenario.objects.get(key="1-Sokoban-small-v0")
    uploaded = replay_recorded(scenario=scenario_spec(level), flow="online",
                               settings=upload_settings("sokoban", "online"), recorded={"replies": replies},
                               out_dir=tmp_path / "upload")
    assert (scored["score"], scored["steps"]) == (uploaded.score, uploaded.steps)
    assert scored["diagnostics"] == uploaded.diagnostics.as_dict()
