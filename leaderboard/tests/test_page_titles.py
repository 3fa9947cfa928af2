"""Each page's browser-tab title names what it shows, so that tabs and history tell the submission, queue
and metric-card pages apart."""
from __future__ import annotations

import re
from html import unescape

import pytest

from accounts.models import Team
from leaderboard.tests.board_entries import board_entries

pytestmark = pytest.mark.django_db


def _title(client, path: str) -> str:
    page = client.get(path).content.decode()
    found = re.search(r"<title>(.*?)</title>", page, re.S)
    assert found is not None, path
    return unescape(found.group(1)).strip()


def test_a_submission_page_is_titled_with_its_number_model_and_board(client, fixture_scenarios):
    entry = board_entries(Team.objects.create(name="Lab", slug="lab")).full
    assert _title(client, f"/submissions/{entry.id}/") == (
        f"Submission #{entry.id} · Vision-7B · Sokoban · Global · mini — MageBench")


def test_the_queue_page_is_titled_queue(client, db):
    assert _title(client, "/queue/") == "Queue · submissions and workers — MageBench"


@pytest.mark.parametrize(("env", "title"), [("sokoban", "Sokoban"), ("webui", "WebUI"), ("football", "Football")])
def test_each_metric_card_is_titled_with_its_environment(client, fixture_scenarios, env, title):
    assert _title(client, f"/environments/{env}/") == f"{title} metric card · how it is scored — MageBench"


def test_a_board_is_titled_with_its_suite_so_that_its_official_and_fixture_tabs_differ(client, fixture_scenarios):
    board_entries(Team.objects.create(name="Lab", slug="lab"))
    fixture = _title(client, "/boards/sokoban/global/mini/?suite=fixture")
    official = _title(client, "/boards/sokoban/global/mini/?suite=official")
    assert fixture == "Sokoban · Global · mini · suite fixture — MageBench"
    assert official == "Sokoban · Global · mini · suite official — MageBench"


def test_a_board_names_its_status_column_only_when_a_row_has_a_status(client, fixture_scenarios):
    board_entries(Team.objects.create(name="Lab", slug="lab"))
    # The fixture board's entries include an incomplete one (not ranked: its status says why).
    with_status = client.get("/boards/sokoban/global/mini/?suite=fixture").content.decode()
    assert 'title="Why a row is not ranked, or where a published row comes from">Status</th>' in with_status
    # Only complete entries: the column's cells are empty, and so is its visible header.
    complete = client.get("/boards/sokoban/global/mini/?suite=fixture&q=Vision").content.decode()
    assert '<span class="visually-hidden">Status</span></th>' in complete
