"""The analysis page of a board with many entries stays small: its per-entry tables are paged, its
chart data rounded."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import Team
from leaderboard.analysis_views import ANALYSIS_ROWS_PER_PAGE
from leaderboard.tests.test_board_cache import _entry

pytestmark = pytest.mark.django_db

URL = reverse("board-analysis", args=["sokoban", "global", "mini"])
ENTRIES = 50


@pytest.fixture
def crowded_board(fixture_scenarios) -> None:
    team = Team.objects.create(name="Busy lab", slug="busy-lab")
    for number in range(ENTRIES):
        _entry(team, f"Model {number:02d}", [100.0 * ((number * 7 + k) % 13) / 13 for k in range(10)])


def _rows(html: str, table: str) -> int:
    body = html[html.index(f'<table class="board {table}'):]
    return body[:body.index("</table>")].count("<tr class=")


def test_the_analysis_page_of_fifty_entries_is_under_120_kib(client, crowded_board):
    html = client.get(URL).content.decode()
    assert len(html.encode()) < 120 * 1024
    assert _rows(html, "matrix") == ANALYSIS_ROWS_PER_PAGE


def test_every_entry_is_on_one_of_the_analysis_pages_and_in_the_chart_data(client, crowded_board):
    first = client.get(URL).content.decode()
    second = client.get(URL, {"page": 2}).content.decode()
    assert _rows(first, "matrix") + _rows(second, "matrix") == ENTRIES
    assert all(f"Model {number:02d}" in first + second for number in range(ENTRIES))
    data = client.get(URL, {"charts": 1}).json()
    assert len(data["curves"]) == ENTRIES
    # Rounded to three decimals: 100 * 1 / 13 is sent as 7.692.
    assert all(len(repr(value).partition(".")[2]) <= 3 for curve in data["curves"] for value in curve["value"])


def test_a_page_past_the_last_shows_the_last_and_is_not_cached(client, crowded_board):
    assert "Entries 26–50 of 50" in client.get(URL, {"page": 99}).content.decode()
    with CaptureQueriesContext(connection) as queries:
        assert client.get(URL, {"page": 99}).status_code == 200
    assert len(queries) > 1
