"""`magebench results --format csv` prints a view of the per-attempt table `magebench export` writes:
the same columns, named and valued the same for the same attempt."""
from __future__ import annotations

import csv
import io

import pytest

from accounts.services import team_get_or_create
from catalogue.models import Scenario
from magebench_client import cli
from magebench_client.commands import ATTEMPT_COLUMNS
from submissions.models import Attempt, ModelEntry, Submission

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _finished_run() -> Submission:
    """A public run with one attempt per mini scenario: scored ones, and one that failed with a message."""
    team = team_get_or_create(name="Lab")
    model = ModelEntry.objects.create(team=team, name="Tabled", price_input_per_mtok=1.0, price_output_per_mtok=2.0)
    submission = Submission.objects.create(team=team, model=model, environment_id="sokoban", flow="global",
                                           subset="mini", suite="fixture", status=Submission.Status.INCOMPLETE,
                                           is_public=True, settings={"repeats": 1})
    scenarios = Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True).order_by("key")
    Attempt.objects.bulk_create(
        Attempt(submission=submission, scenario=scenario, repeat=0, status=Attempt.Status.SCORED, score=25.0 * i,
                outcome="solved" if i else "timeout", steps=3 + i, model_calls=2 + i, parse_errors=i % 2,
                invalid_action=i == 1, prompt_tokens=100, completion_tokens=10, duration_seconds=4.5)
        for i, scenario in enumerate(scenarios))
    Attempt.objects.filter(id=submission.attempts.order_by("id").last().id).update(
        status=Attempt.Status.INFRA_FAILED, score=None, error_kind="timeout", error_message="=no reply in 60 s")
    return submission


def _by_attempt(text: str) -> tuple[list[str], dict[tuple[str, str], dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text))
    return list(reader.fieldnames or []), {(row["scenario"], row["repeat"]): row for row in reader}


def test_every_results_column_is_an_export_column_with_the_same_value_for_the_same_attempt(
        capsys, live_server, fixture_scenarios, exports_built_when_sent):
    submission = _finished_run()
    site = ["--url", live_server.url]
    code, exported, err = _run(capsys, *site, "export", str(submission.id))
    assert code == 0, err
    code, results, err = _run(capsys, *site, "results", str(submission.id), "--format", "csv")
    assert code == 0, err
    export_columns, export_rows = _by_attempt(exported)
    columns, rows = _by_attempt(results)
    assert columns == list(ATTEMPT_COLUMNS) and set(columns) <= set(export_columns)
    assert rows.keys() == export_rows.keys() and len(rows) == submission.attempts.count()
    for key, row in rows.items():
        assert row == {name: export_rows[key][name] for name in columns}
    # What a reader checks by hand: the failed attempt's message, spreadsheet-safe in both.
    failed = next(row for row in rows.values() if row["status"] == "infra_failed")
    assert failed["error_message"] == "'=no reply in 60 s" and failed["score"] == ""


def test_results_with_every_column_is_the_export_itself(capsys, live_server, fixture_scenarios,
                                                        exports_built_when_sent):
    submission = _finished_run()
    site = ["--url", live_server.url]
    _, exported, _ = _run(capsys, *site, "export", str(submission.id))
    code, results, err = _run(capsys, *site, "results", str(submission.id), "--format", "csv", "--all-columns")
    assert code == 0, err
    assert _by_attempt(results) == _by_attempt(exported)
