"""Boards, exports, the home page and the analysis pages come from the board cache, which every write
that changes a board drops: a finished, published, hidden or re-scored submission shows at once."""
from __future__ import annotations

import io

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.core.management import call_command
from django.db import connection
from django.db.models import F
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import Team
from accounts.services import team_create
from catalogue.models import Scenario
from leaderboard.models import BoardsGeneration
from submissions.models import Attempt, ModelEntry, Submission
from submissions.services import submission_publish, submission_refresh_status, submission_result_rebuild

pytestmark = pytest.mark.django_db

BOARD = reverse("board", args=["sokoban", "global", "mini"]) + "?suite=fixture"
PAGES = [
    BOARD,
    reverse("api-board", args=["sokoban", "global", "mini"]) + "?suite=fixture",
    reverse("board-export", args=["sokoban", "global", "mini", "csv"]) + "?suite=fixture",
    reverse("board-export", args=["sokoban", "global", "mini", "json"]) + "?suite=fixture",
    reverse("home"),
    reverse("board-analysis", args=["sokoban", "global", "mini"]) + "?suite=fixture",
    reverse("board-compare", args=["sokoban", "global", "mini"]) + "?suite=fixture",
]


def _entry(team: Team, name: str, scores: list[float], *, status: str = Submission.Status.COMPLETED,
           is_public: bool = True) -> Submission:
    """A submission of ``team`` with one scored attempt per score, finished (its result stored) or not."""
    scenarios = list(Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True).order_by("key"))
    model = ModelEntry.objects.create(team=team, name=name)
    submission = Submission.objects.create(team=team, model=model, environment_id="sokoban", flow="global",
                                           subset="mini", suite="fixture", status=status, is_public=is_public,
                                           settings={"repeats": 1})
    Attempt.objects.bulk_create(Attempt(submission=submission, scenario=scenario, repeat=0,
                                        status=Attempt.Status.SCORED, score=score)
                                for scenario, score in zip(scenarios, scores))
    if status == Submission.Status.COMPLETED:
        submission_result_rebuild(submission_id=submission.id)
    return submission


@pytest.fixture
def board(fixture_scenarios) -> dict[str, Submission]:
    first = Team.objects.create(name="First lab", slug="first-lab")
    second = Team.objects.create(name="Second lab", slug="second-lab")
    return {"a": _entry(first, "Alpha model", [80.0, 60.0, 40.0]),
            "b": _entry(second, "Beta model", [30.0, 20.0, 10.0])}


def _shown(client, url: str = BOARD) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("url", PAGES)
def test_a_second_request_for_a_cached_page_makes_at_most_one_query(client, board, url,
                                                                    django_assert_max_num_queries):
    first = client.get(url)
    assert first.status_code == 200
    # The one query reads the database's generation (the test settings' cache is per process).
    with django_assert_max_num_queries(1):
        again = client.get(url)
    assert again.status_code == 200 and again.content == first.content


def test_the_board_shows_a_submission_right_after_it_finishes(client, board):
    running = _entry(Team.objects.create(name="Late lab", slug="late-lab"), "Gamma model", [99.0, 99.0, 99.0],
                     status=Submission.Status.RUNNING)
    assert "Gamma model" not in _shown(client)
    submission_refresh_status(submission_id=running.id)
    assert Submission.objects.get(id=running.id).status == Submission.Status.COMPLETED
    assert "Gamma model" in _shown(client)
    assert client.get(PAGES[1]).json()["rows"][0]["model"] == "Gamma model"


def test_the_board_shows_a_private_submission_to_everyone_right_after_it_is_published(client, board):
    private = _entry(Team.objects.create(name="Shy lab", slug="shy-lab"), "Quiet model", [50.0, 50.0, 50.0],
                     is_public=False)
    assert "Quiet model" not in _shown(client)
    submission_publish(submission=private)
    assert "Quiet model" in _shown(client)
    assert "Quiet model" in _shown(client, PAGES[2])


def test_the_board_drops_a_submission_right_after_the_maintainers_hide_it(client, board):
    assert "Beta model" in _shown(client) and "Beta model" in _shown(client, reverse("home"))
    submission = board["b"]
    submission.hidden, submission.hidden_reason = True, "the endpoint read the answers"
    staff = get_user_model().objects.create_superuser("maintainer", password="a long passphrase 7")
    request = RequestFactory().post("/admin/")
    request.user = staff
    # The admin's change form saves through its ModelAdmin.
    admin.site._registry[Submission].save_model(request, submission, form=None, change=True)
    assert "Beta model" not in _shown(client)
    assert "Beta model" not in _shown(client, reverse("home"))
    assert "Beta model" not in _shown(client, PAGES[5])


def test_the_board_shows_a_teams_new_name_right_after_the_maintainers_rename_it(client, board):
    assert "First lab" in _shown(client) and "First lab" in _shown(client, reverse("home"))
    team = board["a"].team
    team.name = "Renamed lab"
    staff = get_user_model().objects.create_superuser("maintainer", password="a long passphrase 7")
    request = RequestFactory().post("/admin/")
    request.user = staff
    admin.site._registry[Team].save_model(request, team, form=None, change=True)
    assert "Renamed lab" in _shown(client) and "First lab" not in _shown(client)
    assert "Renamed lab" in _shown(client, reverse("home"))


def test_the_board_shows_new_numbers_right_after_a_submission_is_re_scored(client, board):
    assert client.get(PAGES[1]).json()["rows"][0]["mean"] == pytest.approx(60.0)
    Attempt.objects.filter(submission=board["a"]).update(score=F("score") + 10)
    call_command("rebuild_results", str(board["a"].id), stdout=io.StringIO())
    assert client.get(PAGES[1]).json()["rows"][0]["mean"] == pytest.approx(70.0)
    assert "70.00" in _shown(client)


def test_a_cached_board_never_shows_a_teams_private_rows_to_a_visitor(client, board, django_user_model):
    user = django_user_model.objects.create_user("owner", password="a long passphrase 7")
    team = team_create(user=user, name="Secret lab")
    _entry(team, "Hidden gem", [90.0, 90.0, 90.0], is_public=False)
    member = type(client)()
    member.force_login(user)
    for url in PAGES[:4]:
        assert "Hidden gem" in _shown(member, url)
        # The same query, cached a moment ago for the team's member, is rebuilt for an outsider.
        assert "Hidden gem" not in _shown(client, url)
    outsider = type(client)()
    outsider.force_login(django_user_model.objects.create_user("other", password="a long passphrase 7"))
    assert "Hidden gem" not in _shown(outsider)
    assert "Hidden gem" in _shown(member)


def test_a_board_cached_by_one_process_is_rebuilt_once_another_process_commits_a_change(client, board):
    if not isinstance(caches["default"], LocMemCache):
        pytest.skip("a shared cache (Redis) hears every process's writes through its own counter")
    private = _entry(Team.objects.create(name="Late lab", slug="late-lab"), "Late model", [70.0, 70.0, 70.0],
                     is_public=False)
    assert "Late model" not in _shown(client)
    # Another process (a Celery worker, another web process) publishes it: its own cache's counter
    # moves, which a per-process cache here never hears of ...
    Submission.objects.filter(id=private.id).update(is_public=True)
    assert "Late model" not in _shown(client)
    # ... but once its transaction commits, the database's generation moves too (its row is new if no
    # write committed since the database was emptied).
    generation, _ = BoardsGeneration.objects.get_or_create(scope="")
    BoardsGeneration.objects.filter(pk=generation.pk).update(value=F("value") + 1)
    assert "Late model" in _shown(client)


def test_a_write_bumps_the_database_generation_of_its_board_once_its_transaction_commits(
        board, django_capture_on_commit_callbacks):
    def stored() -> int:
        row = BoardsGeneration.objects.filter(scope="board:sokoban/global/mini")
        return row.values_list("value", flat=True).first() or 0

    before = stored()
    with django_capture_on_commit_callbacks(execute=True):
        submission_publish(submission=board["b"])
        assert stored() == before
    assert stored() == before + 1


def test_a_board_filtered_on_an_organisation_no_entry_has_is_not_cached(client, board):
    url = BOARD + "&org=made-up-organisation"
    assert "Alpha model" not in _shown(client, url)
    with CaptureQueriesContext(connection) as queries:
        _shown(client, url)
    assert len(queries) > 1


def test_the_board_cache_is_off_when_its_lifetime_is_zero(client, board, settings):
    settings.MAGEBENCH_BOARD_CACHE_SECONDS = 0
    _shown(client)
    Submission.objects.filter(id=board["b"].id).update(hidden=True, hidden_reason="gone")  # no invalidation at all
    assert "Beta model" not in _shown(client)


def test_without_its_cache_the_site_serves_boards_and_writes_still_commit(client, board, monkeypatch):
    from django.core.cache import cache

    def unreachable(*args, **kwargs):
        raise ConnectionError("the cache is down")

    for method in ("get", "set", "add", "incr"):
        monkeypatch.setattr(cache, method, unreachable)
    with pytest.raises(ConnectionError):
        cache.get("anything")
    assert "Alpha model" in _shown(client) and "Alpha model" in _shown(client, reverse("home"))
    private = _entry(Team.objects.create(name="Shy lab", slug="shy-lab"), "Quiet model", [50.0, 50.0, 50.0],
                     is_public=False)
    submission_publish(submission=private)
    assert Submission.objects.get(id=private.id).is_public
    assert "Quiet model" in _shown(client)
