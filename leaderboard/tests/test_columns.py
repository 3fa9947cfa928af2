"""The column dictionary against the real exports: every exported column is described, no described
column is gone, and the API schema and the columns page describe the same columns."""
from __future__ import annotations

import csv
import html
import io

import pytest
from django.urls import reverse

from accounts.models import Team
from evaluators.base import all_plugins, get_plugin
from leaderboard.columns import ATTEMPT_COLUMNS, STALE_ATTEMPT_MEANINGS, UNDESCRIBED_ATTEMPT_COLUMNS, board_columns
from leaderboard.selectors.rows import BoardRow
from leaderboard.tests.board_entries import board_entries

BOARD = ["sokoban", "global", "mini"]


def _names(columns) -> list[str]:
    return [column.name for column in columns]


@pytest.fixture
def entries(fixture_scenarios):
    return board_entries(Team.objects.create(name="Lab", slug="lab"))


def test_the_boards_csv_and_json_exports_have_exactly_the_dictionarys_columns(client, entries):
    url = reverse("board-export", args=[*BOARD, "csv"]) + "?suite=fixture"
    header = next(csv.reader(io.StringIO(client.get(url).content.decode())))
    assert header == _names(board_columns(get_plugin("sokoban")))
    rows = client.get(reverse("board-export", args=[*BOARD, "json"]) + "?suite=fixture").json()["rows"]
    assert len(rows) == 3 and all(list(row) == header for row in rows)


@pytest.mark.parametrize("plugin", all_plugins(), ids=lambda plugin: plugin.slug)
def test_a_row_of_every_environments_board_has_the_dictionarys_columns_lost_score_parts_included(plugin):
    row = BoardRow(submission_id=1, model="m", team="t", organisation="", parameter_count=None, open_weights=False,
                   is_baseline=False, status="completed", breakdown={key: 1.0 for key in plugin.breakdown_keys})
    assert list(row.as_dict()) == _names(board_columns(plugin))
    # Without a plug-in: every environment's columns, each lost-score part once.
    assert set(row.as_dict()) <= set(_names(board_columns()))


def test_the_per_attempt_export_has_exactly_the_dictionarys_columns(exports_built_when_sent, client, entries):
    response = exports_built_when_sent(client, reverse("api-submission-export", args=[entries.full.id, "csv"]))
    header = next(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert header == _names(ATTEMPT_COLUMNS)
    assert UNDESCRIBED_ATTEMPT_COLUMNS == () and STALE_ATTEMPT_MEANINGS == ()


def test_the_api_schema_describes_every_column_of_the_board_rows_and_the_attempt_exports(client):
    schema = client.get(reverse("api-schema") + "?format=json").json()
    components = schema["components"]["schemas"]
    for component, columns in (("BoardRow", board_columns()), ("AttemptRow", ATTEMPT_COLUMNS)):
        properties = components[component]["properties"]
        assert list(properties) == _names(columns)
        for column in columns:
            assert column.meaning in properties[column.name]["description"]
    board = schema["paths"]["/api/v1/boards/{env}/{flow}/{subset}/"]["get"]["responses"]["200"]
    assert board["content"]["application/json"]["schema"]["$ref"] == "#/components/schemas/Board"
    assert components["Board"]["properties"]["rows"]["items"]["$ref"] == "#/components/schemas/BoardRow"
    for path in ("/api/v1/boards/{env}/{flow}/{subset}/attempts.{fmt}",
                 "/api/v1/submissions/{submission_id}/attempts.{fmt}"):
        csv_answer = schema["paths"][path]["get"]["responses"]["200"]["content"]["text/csv"]["schema"]
        assert csv_answer["items"]["$ref"] == "#/components/schemas/AttemptRow"
    assert {"/api/v1/snapshots/", "/api/v1/snapshots/{env}/{flow}/{subset}/{suite}/{version}/"} <= set(schema["paths"])
    assert "content_hash" in components["Snapshot"]["properties"]
    assert {"files", "bibtex"} <= set(components["SnapshotDetail"]["properties"])


def test_the_columns_page_lists_every_column_and_each_environments_score_scale(client):
    page = client.get(reverse("data-columns")).content.decode()
    for kind, columns in (("board", board_columns()), ("attempt", ATTEMPT_COLUMNS)):
        for column in columns:
            cells = f"<td><code>{column.name}</code></td><td>{html.escape(column.type)}</td>"
            assert f'<tr id="{kind}-{column.name}">{cells}' in page
    for plugin in all_plugins():
        assert f'id="scale-{plugin.slug}"' in page
    assert "Read the Parquet files, not CSV" in page
