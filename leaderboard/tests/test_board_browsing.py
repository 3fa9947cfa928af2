"""Board search, sort and permalinks, incomplete entries, the Sokoban floor note and model pages, read
through the selectors and the Django client on entries with hand-set scores."""
from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from catalogue.models import Scenario
from leaderboard.query_params import BoardFilterParams
from leaderboard.selectors import BoardFilter, BoardSort, board_get, model_page_get, parameters_label
from leaderboard.tests.board_entries import Entries, board_entries, finished_entry
from leaderboard.views import board_storable
from submissions.models import ModelEntry

pytestmark = pytest.mark.django_db
BOARD = ("sokoban", "global", "mini")


@pytest.fixture
def entries(fixture_scenarios, lab) -> Entries:
    return board_entries(lab.team)


def _rows(**query: str) -> list[tuple[str, int | None, bool]]:
    """The board's rows for ``query``, read as the board's API and page read it."""
    board = board_get(env="sokoban", flow="global", subset="mini", suite="fixture",
                      filters=BoardFilterParams.parse(query).filters)
    return [(row.model, row.rank, row.complete) for row in board.rows]


def test_an_entry_covering_2_of_10_scenarios_is_unranked_and_listed_after_the_ranked_ones(entries):
    # Partial's mean (90) is the highest, but over 2 of the 10 scenarios only.
    assert _rows() == [("Vision-7B", 1, True), ("Tiny", 2, True), ("Partial", None, False)]
    partial = board_get(env="sokoban", flow="global", subset="mini", suite="fixture").rows[-1]
    assert (partial.n_scenarios, partial.board_scenarios, partial.mean) == (2, 10, 90.0)


def test_a_visitor_can_rank_incomplete_entries_among_the_complete_ones(entries):
    assert _rows(incomplete="1") == [("Partial", 1, False), ("Vision-7B", 2, True), ("Tiny", 3, True)]


def test_the_api_and_the_csv_mark_an_incomplete_entry_with_no_rank(client, entries):
    api = client.get(reverse("api-board", args=BOARD) + "?suite=fixture").json()
    by_model = {row["model"]: row for row in api["rows"]}
    assert (by_model["Partial"]["rank"], by_model["Partial"]["complete"]) == (None, False)
    assert (by_model["Tiny"]["rank"], by_model["Tiny"]["complete"]) == (2, True)
    assert by_model["Tiny"]["submitted_at"] == entries.tiny.created_at.isoformat()
    export = client.get(reverse("board-export", args=[*BOARD, "csv"]) + "?suite=fixture&incomplete=1")
    rows = {row["model"]: row for row in csv.DictReader(io.StringIO(export.content.decode()))}
    assert (rows["Partial"]["rank"], rows["Partial"]["complete"]) == ("1", "False")


def test_the_board_page_marks_an_incomplete_entry_with_its_coverage(client, entries):
    page = client.get(reverse("board", args=BOARD) + "?suite=fixture").content.decode()
    assert "incomplete (2 of 10 scenarios)" in page
    assert page.index("Tiny") < page.index("Partial")


def test_a_search_keeps_the_matching_rows_with_their_board_ranks(client, entries):
    assert _rows(q="tin") == [("Tiny", 2, True)]
    assert _rows(q="  OTHER ") == [("Tiny", 2, True), ("Partial", None, False)]  # the team's name matches too
    api = client.get(reverse("api-board", args=BOARD) + "?suite=fixture&q=vision").json()
    assert [(row["model"], row["rank"]) for row in api["rows"]] == [("Vision-7B", 1)]
    page = client.get(reverse("board", args=BOARD) + "?suite=fixture&q=tiny").content.decode()
    assert ">Tiny</a>" in page and ">Vision-7B</a>" not in page and 'value="tiny"' in page
    page = client.get(reverse("board", args=BOARD) + "?suite=fixture&q=nothing+like+it").content.decode()
    assert "No entry matches the search." in page and "No finished submissions yet." not in page
    export = client.get(reverse("board-export", args=[*BOARD, "csv"]) + "?suite=fixture&q=tiny")
    assert [row["model"] for row in csv.DictReader(io.StringIO(export.content.decode()))] == ["Tiny"]


def test_the_board_is_sorted_by_the_column_and_direction_in_its_url(client, entries):
    assert BoardSort.of("model") == BoardSort(column="model", descending=False)
    assert BoardSort.of("score") == BoardSort(column="score", descending=True)
    assert BoardSort.of("score", "asc") == BoardSort(column="score", descending=False)
    assert BoardSort.of("", "asc") == BoardSort()
    by_score = client.get(reverse("board", args=BOARD) + "?suite=fixture").content.decode()
    assert 'title="Higher is better" class="num sorted" data-dir="desc" aria-sort="descending"' in by_score
    page = client.get(reverse("board", args=BOARD) + "?suite=fixture&sort=model&dir=asc").content.decode()
    assert page.index(">Partial</a>") < page.index(">Tiny</a>") < page.index(">Vision-7B</a>")
    assert 'data-col="model" data-label="Model" data-sort="text" class="sorted" data-dir="asc"' in page
    page = client.get(reverse("board", args=BOARD) + "?suite=fixture&sort=model&dir=desc").content.decode()
    assert page.index(">Vision-7B</a>") < page.index(">Tiny</a>") < page.index(">Partial</a>")
    # The filter form carries the sort along when it is submitted.
    assert '<input type="hidden" name="sort" value="model">' in page


def test_each_sort_of_a_board_is_cached_apart_and_a_search_is_not_cached(client, entries, settings):
    settings.MAGEBENCH_BOARD_CACHE_SECONDS = 60
    url = reverse("board", args=BOARD) + "?suite=fixture"
    by_score = client.get(url).content.decode()
    by_name = client.get(url + "&sort=model&dir=asc").content.decode()
    assert by_score.index(">Vision-7B</a>") < by_score.index(">Partial</a>")
    assert by_name.index(">Partial</a>") < by_name.index(">Vision-7B</a>")
    first = client.get(url + "&q=tiny").content.decode()
    second = client.get(url + "&q=vision").content.decode()
    assert ">Vision-7B</a>" not in first and ">Vision-7B</a>" in second
    # Any text can be searched for: a search must not fill the cache.
    board = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    assert board_storable(board, BoardFilter(search="tiny")) is False and board_storable(board, BoardFilter())


def test_the_sokoban_board_and_metric_card_state_the_floor_of_the_installed_levels(client, fixture_scenarios):
    # The fixture's ten mini levels: R_ub from upper_bound.json, floor 100 − 5 · R_ub.
    bounds = sorted(Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True)
                    .values_list("data__upper_bound__reward", flat=True))
    floors = [100 - 5 * bound for bound in bounds]
    board = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    assert f"here {min(floors):.1f} to {max(floors):.1f}" in board.note and "10 levels" in board.note
    assert board_get(env="webui", flow="global", subset="mini", suite="fixture").note == ""
    page = client.get(reverse("board", args=BOARD) + "?suite=fixture").content.decode()
    assert 'id="board-note"' in page and "100 − 5 · R_ub" in page
    card = client.get(reverse("metric-card", args=["sokoban"])).content.decode()
    assert 'id="score-floor"' in card and "Suite <strong>fixture</strong>" in card


def test_the_floor_note_reads_the_levels_optimal_rewards():
    from evaluators.sokoban.card import floor_note

    # R_ub 10.0 → 50, 11.0 → 45, 9.0 → 55 (mean 50).
    assert "here 45.0 to 55.0 (mean 50.0) over the 3 levels" in floor_note([10.0, 11.0, 9.0])
    assert "here 50.0 over the 1 level;" in floor_note([10.0])
    assert floor_note([]) == ""


def test_a_parameter_count_is_shown_as_people_write_it():
    assert [parameters_label(n) for n in (7_000_000_000, 1_500_000_000, 400_000_000, 1_200_000_000_000, None)] == [
        "7B", "1.5B", "400M", "1.2T", ""]


def test_an_outsider_sees_a_models_public_entries_but_not_its_private_or_hidden_ones(entries):
    page = model_page_get(model_id=entries.vision.id)
    assert page is not None and page.parameters == "7B"
    assert [(e.flow, e.row.submission_id, e.row.rank) for e in page.entries] == [("global", entries.full.id, 1)]
    mine = model_page_get(model_id=entries.vision.id, viewer_team_ids=[entries.lab.id])
    assert mine is not None
    assert {(e.flow, e.row.submission_id) for e in mine.entries} == {("global", entries.full.id),
                                                                     ("online", entries.private.id)}
    assert [(best.env, best.entry.row.mean) for best in mine.best] == [("sokoban", 70.0)]


def test_the_model_page_shows_the_models_metadata_and_entries(client, entries):
    client.logout()
    page = client.get(reverse("model-detail", args=[entries.vision.id])).content.decode()
    for text in ("Vision-7B", "Acme", ">7B<", "apache-2.0", "https://example.org/vision-7b", "Lab",
                 f'data-submission="{entries.full.id}"', 'id="model-chart-data"'):
        assert text in page, text
    assert f'data-submission="{entries.private.id}"' not in page
    assert f'data-submission="{entries.hidden.id}"' not in page
    partial = ModelEntry.objects.get(name="Partial")
    assert "incomplete (2 of 10 scenarios)" in client.get(reverse("model-detail", args=[partial.id])).content.decode()


def test_a_model_with_only_private_entries_is_a_404_to_outsiders_and_shown_to_its_team(client, entries, lab):
    secret = ModelEntry.objects.create(team=entries.lab, name="Secret")
    submission = finished_entry(entries.lab, secret, [80.0] * 10, public=False)
    url = reverse("model-detail", args=[secret.id])
    assert f'data-submission="{submission.id}"' in lab.client.get(url).content.decode()
    lab.client.logout()
    assert lab.client.get(url).status_code == 404
    assert client.get(reverse("model-detail", args=[999999])).status_code == 404


def test_a_board_rows_model_name_links_to_its_model_page(client, entries):
    page = client.get(reverse("board", args=BOARD) + "?suite=fixture").content.decode()
    assert f'href="{reverse("model-detail", args=[entries.vision.id])}"' in page
    assert f'href="{reverse("submission-detail", args=[entries.full.id])}"' in page


def test_the_model_page_shows_a_new_entry_once_it_is_published(client, entries, lab, settings):
    from submissions.services import submission_publish

    settings.MAGEBENCH_BOARD_CACHE_SECONDS = 60
    lab.client.logout()
    url = reverse("model-detail", args=[entries.vision.id])
    assert f'data-submission="{entries.private.id}"' not in client.get(url).content.decode()
    submission_publish(submission=entries.private)
    assert f'data-submission="{entries.private.id}"' in client.get(url).content.decode()
