"""The platform measures what each entry's runs took (model calls, tokens, wall time) and, with the
model's prices, what they cost; the submission page, the board's rows and exports and its cost page show it."""
from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.urls import reverse

from accounts.services import team_get_or_create
from catalogue.models import Scenario
from magebench_client import cli, commands
from submissions.engine import attempt_run
from submissions.models import Attempt, ModelEntry, Submission
from submissions.services import model_entry_upsert, submission_create_endpoint, submission_result_rebuild

BOARD_API = "/api/v1/boards/sokoban/global/mini/?suite=fixture"


def _run_all(submission: Submission) -> None:
    for attempt_id in submission.attempts.values_list("id", flat=True):
        for _ in range(5):
            if attempt_run(attempt_id=attempt_id) is None:
                break


def _board_row(client, model: str) -> dict[str, Any]:
    rows = client.get(BOARD_API).json()["rows"]
    return next(row for row in rows if row["model"] == model)


@pytest.mark.integration
@pytest.mark.django_db
def test_a_real_episode_against_a_baseline_endpoint_records_its_tokens_and_prices_them(
        client, fixture_scenarios, baseline_endpoint):
    server = baseline_endpoint("oracle")
    team = team_get_or_create(name="Pricing lab")
    model = model_entry_upsert(team=team, name="oracle model")
    submission = submission_create_endpoint(model=model, env="sokoban", flow="global", subset="mini", suite="fixture",
                                            endpoint_url=server.url, endpoint_model="oracle",
                                            settings={"repeats": 1, "resolution": 256}, is_public=True)
    _run_all(submission)
    attempts = list(submission.attempts.all())
    assert attempts and all(a.status == Attempt.Status.SCORED for a in attempts)
    # The baseline server answers with OpenAI's usage field; each reply is short, each prompt has a frame.
    for attempt in attempts:
        assert attempt.model_calls >= 1
        assert attempt.prompt_tokens is not None and attempt.prompt_tokens > attempt.completion_tokens > 0
    result = Submission.objects.get(id=submission.id).result
    assert result.effort_attempts == result.token_attempts == len(attempts)
    assert result.prompt_tokens_total == sum(a.prompt_tokens for a in attempts)
    assert result.completion_tokens_total == sum(a.completion_tokens for a in attempts)
    assert result.model_calls_total == sum(a.model_calls for a in attempts)
    # One repeat each: a scenario's tokens are its attempt's, averaged over the scenarios.
    assert result.prompt_tokens_per_scenario == pytest.approx(result.prompt_tokens_total / len(attempts))

    row = _board_row(client, "oracle model")
    assert row["tokens_per_scenario"] == pytest.approx(
        result.prompt_tokens_per_scenario + result.completion_tokens_per_scenario)
    assert row["cost_per_scenario_usd"] is None  # no prices yet

    model_entry_upsert(team=team, name="oracle model", price_input_per_mtok=3.0, price_output_per_mtok=15.0)
    row = _board_row(client, "oracle model")  # the board's cache was dropped with the model's change
    assert row["cost_per_scenario_usd"] == pytest.approx(
        (result.prompt_tokens_per_scenario * 3.0 + result.completion_tokens_per_scenario * 15.0) / 1_000_000)

    page = client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    assert "Cost and effort" in page and "Prompt tokens" in page
    total = (result.prompt_tokens_total * 3.0 + result.completion_tokens_total * 15.0) / 1_000_000
    assert f"${total:.4f}" in page


def _entry(team_name: str, model: str, *, tokens: tuple[int | None, int | None], score: float,
           prices: tuple[float | None, float | None] = (None, None), source: str = Submission.Source.ENDPOINT,
           calls: int = 2) -> Submission:
    """A finished public entry with one scored attempt per mini fixture scenario, each with these counts."""
    team = team_get_or_create(name=team_name)
    entry = ModelEntry.objects.create(team=team, name=model, price_input_per_mtok=prices[0],
                                      price_output_per_mtok=prices[1])
    submission = Submission.objects.create(team=team, model=entry, environment_id="sokoban", flow="global",
                                           subset="mini", suite="fixture", status=Submission.Status.COMPLETED,
                                           is_public=True, source=source, settings={"repeats": 1})
    scenarios = Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True)
    Attempt.objects.bulk_create(
        Attempt(submission=submission, scenario=scenario, repeat=0, status=Attempt.Status.SCORED, score=score,
                model_calls=calls, prompt_tokens=tokens[0], completion_tokens=tokens[1], duration_seconds=1.5)
        for scenario in scenarios)
    submission_result_rebuild(submission_id=submission.id)
    return submission


@pytest.mark.django_db
def test_an_upload_shows_not_measured_rather_than_zeros(client, fixture_scenarios):
    upload = _entry("Uploaders", "uploaded model", tokens=(None, None), score=40.0, prices=(1.0, 2.0),
                    source=Submission.Source.UPLOAD)
    page = client.get(reverse("submission-detail", args=[upload.id])).content.decode()
    assert "Not measured: these are uploaded outputs" in page
    row = _board_row(client, "uploaded model")
    assert row["measured_attempts"] == 0 and row["model_calls_per_scenario"] is None
    assert row["tokens_per_scenario"] is None and row["cost_per_scenario_usd"] is None
    board = client.get(reverse("board", args=["sokoban", "global", "mini"]) + "?suite=fixture").content.decode()
    assert "not measured" in board


@pytest.mark.django_db
def test_the_csv_export_carries_the_effort_and_cost_columns(client, fixture_scenarios):
    _entry("Lab", "priced model", tokens=(1000, 200), score=70.0, prices=(2.0, 10.0))
    response = client.get(reverse("board-export", args=["sokoban", "global", "mini", "csv"]) + "?suite=fixture")
    row = next(csv.DictReader(io.StringIO(response.content.decode())))
    # Every scenario's one attempt took 1000 + 200 tokens: 1000 × $2/M + 200 × $10/M = $0.004.
    assert float(row["tokens_per_scenario"]) == 1200 and float(row["model_calls_per_scenario"]) == 2
    assert float(row["cost_per_scenario_usd"]) == pytest.approx(0.004)


@pytest.mark.django_db
def test_the_cost_page_marks_the_frontier_and_lists_entries_it_cannot_place(client, fixture_scenarios):
    _entry("A", "cheap", tokens=(1000, 100), score=40.0, prices=(1.0, 1.0))       # $0.0011
    _entry("B", "strong", tokens=(5000, 500), score=80.0, prices=(2.0, 4.0))      # $0.012
    _entry("C", "wasteful", tokens=(9000, 900), score=60.0, prices=(2.0, 4.0))    # $0.0216: B is better and cheaper
    _entry("D", "unpriced", tokens=(100, 10), score=90.0)                         # tokens, no prices
    _entry("E", "uploaded", tokens=(None, None), score=50.0, source=Submission.Source.UPLOAD)
    url = reverse("board-cost", args=["sokoban", "global", "mini"]) + "?suite=fixture"
    page = client.get(url).content.decode()
    assert 'id="chart-cost"' in page and "vendor/plotly-basic.min.js" in page and "vendor/plotly.min.js" not in page

    def states(html: str) -> dict[str, str]:
        found = {}
        for name in ("cheap", "strong", "wasteful", "unpriced", "uploaded"):
            row = html[html.index(f">{name}</a>") - 400:html.index(f">{name}</a>")]
            found[name] = row[row.rindex('data-frontier="') + 15:].split('"')[0]
        return found

    assert states(page) == {"cheap": "yes", "strong": "yes", "wasteful": "no", "unpriced": "excluded",
                            "uploaded": "excluded"}
    assert "not placed: the model has no prices" in page and "not placed: not measured (uploaded outputs)" in page
    # By tokens, the unpriced entry uses the fewest and scores the most: it alone is on the frontier.
    by_tokens = client.get(url + "&x=tokens").content.decode()
    assert states(by_tokens) == {"cheap": "no", "strong": "no", "wasteful": "no", "unpriced": "yes",
                                 "uploaded": "excluded"}
    board = client.get(reverse("board", args=["sokoban", "global", "mini"]) + "?suite=fixture").content.decode()
    assert reverse("board-cost", args=["sokoban", "global", "mini"]) in board
    assert 'data-column="cost"' in board and "$0.0120" in board


@pytest.mark.django_db
def test_a_team_sets_its_models_prices_through_the_api_and_a_negative_price_is_refused(lab):
    created = lab.client.post("/api/v1/models/", {"name": "Vision-7B", "price_input_per_mtok": 0.15,
                                                  "price_output_per_mtok": 0.6},
                              content_type="application/json", **lab.auth())
    assert created.status_code == 201, created.content
    assert (created.json()["price_input_per_mtok"], created.json()["price_output_per_mtok"]) == (0.15, 0.6)
    refused = lab.client.post("/api/v1/models/", {"name": "Vision-7B", "price_input_per_mtok": -1},
                              content_type="application/json", **lab.auth())
    assert refused.status_code == 400
    assert ModelEntry.objects.get(name="Vision-7B").price_input_per_mtok == 0.15


def test_the_command_line_client_sends_the_prices_it_is_given():
    args = cli.build_parser().parse_args(["submit-endpoint", "--model", "m", "--env", "sokoban", "--flow", "global",
                                          "--subset", "mini", "--endpoint", "http://example.org/v1",
                                          "--price-input", "0.5", "--price-output", "0"])
    sent = commands.metadata(args)
    assert (sent["price_input_per_mtok"], sent["price_output_per_mtok"]) == (0.5, 0.0)


@pytest.mark.integration
@pytest.mark.django_db
def test_the_submit_form_sets_the_models_prices_and_a_blank_price_keeps_the_stored_one(lab, fixture_scenarios,
                                                                                      baseline_endpoint):
    url = baseline_endpoint("oracle").url
    form = {"team": str(lab.team.id), "model_name": "Lab model", "env": "sokoban", "flow": "global",
            "subset": "mini", "endpoint_url": url, "repeats": 1}
    page = lab.client.get(reverse("submit")).content.decode()
    assert 'name="price_input_per_mtok"' in page and 'name="price_output_per_mtok"' in page
    response = lab.client.post(reverse("submit"), {**form, "price_input_per_mtok": "1.25",
                                                   "price_output_per_mtok": "0"})
    assert response.status_code == 302
    model = ModelEntry.objects.get(team=lab.team, name="Lab model")
    # A free model's 0 is a price given, not a blank.
    assert (model.price_input_per_mtok, model.price_output_per_mtok) == (1.25, 0.0)
    assert lab.client.post(reverse("submit"), form).status_code == 302
    model.refresh_from_db()
    assert (model.price_input_per_mtok, model.price_output_per_mtok) == (1.25, 0.0)
    refused = lab.client.post(reverse("submit"), {**form, "price_input_per_mtok": "-2"})
    assert refused.status_code == 200 and Submission.objects.count() == 2
