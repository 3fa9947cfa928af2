"""Boards with no run of their own: unknown boards, reported results, the metric card and the home
page's queries (test_board_pages.py shares played runs across its tests; these need none)."""
from __future__ import annotations

import pytest
from django.urls import reverse

from leaderboard.selectors import BoardFilter, board_get, size_bucket

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


def test_an_unknown_board_is_a_404(client, db):
    assert client.get(reverse("board", args=["chess", "global", "mini"])).status_code == 404
    assert client.get(reverse("api-board", args=["sokoban", "sideways", "mini"])).status_code == 404


def test_the_football_board_has_only_the_online_flow_and_its_metric_card(client, fixture_scenarios):
    board = client.get(reverse("board", args=["football", "online", "mini"]) + "?suite=fixture")
    assert board.status_code == 200
    assert "Global" not in board.content.decode().split('class="tabs"')[1].split("</nav>")[0]
    assert client.get(reverse("board", args=["football", "global", "mini"])).status_code == 404
    card = client.get(reverse("metric-card", args=["football"])).content.decode()
    assert "football-online-v3" in card and "S_stolen" in card and "action_release_sprint" in card
    assert "frequency_penalty" in card and "0.005" in card  # the request settings and the no-effect test
    assert "Football" in client.get(reverse("home")).content.decode()


def test_size_buckets_cover_every_parameter_count():
    assert [size_bucket(n) for n in (None, 1, 10_000_000_000, 70_000_000_000, 400_000_000_000)] == [
        "unknown", "<10B", "10-40B", "40-100B", ">100B"]


def test_reported_results_show_on_official_boards_marked_and_unranked_by_default(client, db):
    from catalogue.models import ReportedResult
    from catalogue.services import environment_ensure

    env = environment_ensure("sokoban")
    ReportedResult.objects.create(environment=env, flow="global", subset="mini", model_name="Paper model",
                                  organisation="Some Lab", score=57.5, source="https://example.org/paper")
    board = board_get(env="sokoban", flow="global", subset="mini", suite="official")
    (row,) = board.rows
    assert row.is_reported and row.rank is None and row.mean == 57.5 and row.submission_id is None
    ranked = board_get(env="sokoban", flow="global", subset="mini", suite="official",
                       filters=BoardFilter(rank_reported=True)).rows
    assert ranked[0].rank == 1
    assert board_get(env="sokoban", flow="global", subset="mini", suite="fixture").rows == []
    page = client.get(reverse("board", args=["sokoban", "global", "mini"]) + "?suite=official").content.decode()
    assert "Paper model" in page and "reported-badge" in page and "https://example.org/paper" in page
    data = client.get(reverse("api-board", args=["sokoban", "global", "mini"]) + "?suite=official").json()
    assert data["rows"][0]["reported"] is True and data["rows"][0]["rank"] is None


def test_the_home_page_builds_each_board_once(client, fixture_scenarios, django_assert_max_num_queries):
    # 5 boards × mini/full, a handful of queries each; the overview adds none of its own (the cached
    # boards' reads of the generations kept in the database, as the test settings' cache is per process, add 2).
    with django_assert_max_num_queries(62) as captured:
        assert client.get(reverse("home")).status_code == 200
    boards = sum(1 for q in captured.captured_queries if 'FROM "submissions_submission"' in q["sql"]
                 and "submissions_attempt" not in q["sql"])
    assert boards == 10


def test_a_suite_that_is_not_a_slug_is_a_400_naming_it_and_never_reaches_the_database(client, db):
    # A NUL byte in a query string once made PostgreSQL fail the request (found by fuzzing the API schema).
    api = client.get("/api/v1/boards/sokoban/global/mini/?suite=%00")
    assert (api.status_code, api.json()["message"]) == (400, "invalid query parameter: suite")
    for url in ("/boards/sokoban/global/mini/?suite=a%00b", "/boards/sokoban/global/mini/export.csv?suite=%00",
                "/boards/sokoban/global/mini/analysis/?suite=%00"):
        page = client.get(url)
        assert page.status_code == 400, url
        assert '<li data-parameter="suite">' in page.content.decode(), url
