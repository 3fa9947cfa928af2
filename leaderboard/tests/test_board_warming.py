"""After a change, the data of the changed boards' pages is computed into the board cache by a Celery
task, not by their first visitor; a change to one board leaves every other board's cached data alone."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from kombu.exceptions import OperationalError

from accounts.models import Team
from leaderboard import tasks
from leaderboard.cache import WARM_PENDING_KEY
from leaderboard.selectors import board_cached, board_organisations_cached, home_boards_cached
from leaderboard.selectors.analysis_reads import analysis_cached, comparison_cached, cost_cached, pairs_cached
from leaderboard.tests.test_board_cache import _entry, _shown
from leaderboard.warming import warm_boards
from submissions.models import Submission
from submissions.services import submission_publish, submission_refresh_status

pytestmark = pytest.mark.django_db

MINI = ("sokoban", "global", "mini")
# What an anonymous visitor reads first of the boards: the board's page, its API answer, the home page.
VISITOR_PAGES = [reverse("board", args=MINI), reverse("api-board", args=MINI), reverse("home")]
# The tables the boards' data comes from: after a warm, a visitor's page reads none of them.
BOARD_DATA_TABLES = ('"submissions_submission"', '"leaderboard_storedboardranking"', '"leaderboard_suitepromptset"')


@pytest.fixture
def shared_cache(settings, tmp_path):
    """A cache every process shares, as Redis is in production (the test settings' default is each
    process's own, whose generations are read from the database: one query per cached read)."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                                   "LOCATION": str(tmp_path / "cache")}}


def _queries(read) -> list[str]:
    with CaptureQueriesContext(connection) as done:
        read()
    return [query["sql"] for query in done.captured_queries]


@pytest.fixture
def entries(fixture_scenarios) -> dict[str, Submission]:
    return {"a": _entry(Team.objects.create(name="First lab", slug="first-lab"), "Alpha model", [80.0, 60.0, 40.0]),
            "b": _entry(Team.objects.create(name="Second lab", slug="second-lab"), "Beta model", [30.0, 20.0, 10.0])}


@pytest.fixture
def warming(settings):
    settings.MAGEBENCH_WARM_BOARDS = True


@pytest.fixture
def sent(monkeypatch) -> list[dict[str, object]]:
    """The warms sent to the broker (none runs: the test runs them itself)."""
    calls: list[dict[str, object]] = []
    monkeypatch.setattr(tasks.warm_boards, "apply_async", lambda *args, **kwargs: calls.append(kwargs))
    return calls


def test_after_the_warm_the_board_s_data_is_read_without_a_query(entries, warming, shared_cache,
                                                                 django_assert_num_queries):
    warmed = warm_boards()
    assert MINI in warmed.boards and warmed.home and not warmed.failed
    with django_assert_num_queries(0):
        board = board_cached(env="sokoban", flow="global", subset="mini")
        assert board_organisations_cached(env="sokoban", flow="global", subset="mini", suite=board.suite) == []
        assert MINI in home_boards_cached()
    assert [row.model for row in board.rows] == ["Alpha model", "Beta model"]


def test_before_the_warm_reading_the_board_s_data_queries_the_database(entries, shared_cache):
    # What the test above saves: without the warm, the first read computes the board.
    assert any('"submissions_submission"' in sql for sql in _queries(
        lambda: board_cached(env="sokoban", flow="global", subset="mini")))


@pytest.mark.parametrize("url", VISITOR_PAGES)
def test_after_the_warm_a_visitors_first_request_reads_no_board_data(client, entries, warming, shared_cache, url):
    warm_boards()
    queries = _queries(lambda: client.get(url))
    # What is left is the page's own small reads (its suites' names, its snapshot link).
    assert [sql for sql in queries if any(table in sql for table in BOARD_DATA_TABLES)] == []
    assert len(queries) <= 3
    assert "Alpha model" in client.get(url).content.decode()


def _finish_one_more(sent: list[dict[str, object]], capture) -> None:
    with capture(execute=True):
        newer = _entry(Team.objects.create(name="Late lab", slug="late-lab"), "Gamma model", [99.0, 99.0, 99.0],
                       status=Submission.Status.RUNNING)
        submission_refresh_status(submission_id=newer.id)
    assert len(sent) == 1  # the finished submission sent a warm


def test_a_new_result_shows_at_once_on_warmed_boards(client, entries, warming, shared_cache, sent,
                                                    django_capture_on_commit_callbacks):
    warm_boards()
    _finish_one_more(sent, django_capture_on_commit_callbacks)
    # Before its warm runs: the data warmed earlier is not served any more.
    assert "Gamma model" in _shown(client) and "Gamma model" in _shown(client, reverse("home"))
    assert client.get(reverse("api-board", args=MINI)).json()["rows"][0]["model"] == "Gamma model"


def test_the_warm_after_a_new_result_stores_the_board_with_it(entries, warming, shared_cache, sent,
                                                              django_capture_on_commit_callbacks,
                                                              django_assert_num_queries):
    warm_boards()
    _finish_one_more(sent, django_capture_on_commit_callbacks)
    warmed = warm_boards()
    assert warmed.boards == [MINI] and warmed.home
    with django_assert_num_queries(0):
        rows = board_cached(env="sokoban", flow="global", subset="mini").rows
        home = home_boards_cached()[MINI].board.rows
    assert [row.model for row in rows] == ["Gamma model", "Alpha model", "Beta model"]
    assert [row.model for row in home] == ["Gamma model", "Alpha model", "Beta model"]


def test_the_warm_rebuilds_only_the_board_that_changed_and_the_home_page(entries, warming, sent,
                                                                         django_capture_on_commit_callbacks):
    warm_boards()
    with django_capture_on_commit_callbacks(execute=True):
        private = _entry(Team.objects.create(name="Shy lab", slug="shy-lab"), "Quiet model", [50.0, 50.0, 50.0],
                         is_public=False)
        submission_publish(submission=private)
    warmed = warm_boards()
    assert warmed.boards == [MINI] and warmed.home


def test_a_burst_of_changes_sends_one_warm(entries, warming, sent, django_capture_on_commit_callbacks):
    for name in ("Third", "Fourth", "Fifth"):
        # Each in a transaction of its own, as workers finishing submissions commit.
        with django_capture_on_commit_callbacks(execute=True):
            private = _entry(Team.objects.create(name=f"{name} lab", slug=f"{name.lower()}-lab"), f"{name} model",
                             [50.0, 50.0, 50.0], is_public=False)
            submission_publish(submission=private)
    assert len(sent) == 1 and sent[0]["countdown"] > 0
    assert sent[0]["queue"] == "light"
    # Once the warm runs, the next change sends one again.
    warm_boards()
    with django_capture_on_commit_callbacks(execute=True):
        submission_publish(submission=entries["b"])
    assert len(sent) == 2


def test_no_warm_is_sent_where_the_cache_is_each_processs_own(entries, sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        submission_publish(submission=entries["b"])
    assert sent == []


def test_a_change_to_one_board_keeps_another_boards_cache(client, entries, django_capture_on_commit_callbacks,
                                                          django_assert_max_num_queries):
    online = reverse("board", args=["sokoban", "online", "mini"]) + "?suite=fixture"
    before = _shown(client, online)
    with django_capture_on_commit_callbacks(execute=True):
        private = _entry(Team.objects.create(name="Shy lab", slug="shy-lab"), "Quiet model", [50.0, 50.0, 50.0],
                         is_public=False)
        submission_publish(submission=private)
    with django_assert_max_num_queries(1):
        assert _shown(client, online) == before
    assert "Quiet model" in _shown(client) and "Quiet model" in _shown(client, reverse("home"))


def test_a_submission_finishes_when_the_broker_cannot_be_reached(client, entries, warming, monkeypatch,
                                                                 django_capture_on_commit_callbacks):
    def unreachable(*args, **kwargs):
        raise OperationalError("the broker is down")

    monkeypatch.setattr(tasks.warm_boards, "apply_async", unreachable)
    running = _entry(Team.objects.create(name="Late lab", slug="late-lab"), "Gamma model", [99.0, 99.0, 99.0],
                     status=Submission.Status.RUNNING)
    with django_capture_on_commit_callbacks(execute=True):
        submission_refresh_status(submission_id=running.id)
    assert Submission.objects.get(id=running.id).status == Submission.Status.COMPLETED
    assert "Gamma model" in _shown(client)
    # Nothing waits on the warm that was never sent: the next change tries the broker again.
    assert cache.get(WARM_PENDING_KEY) is None


# The analysis, comparison, all-pairs and cost pages: the data of their default view is warmed too.
READS = [analysis_cached, comparison_cached, pairs_cached, cost_cached]
PAGES = [reverse(name, args=MINI) for name in ("board-analysis", "board-compare", "board-pairs", "board-cost")]
#: The pages that name these fixtures' entries: the all-pairs page pairs ranked entries only, and theirs
#: (one repeat each) are not ranked; its data is checked through ``pairs_cached``.
NAMING_PAGES = [url for url in PAGES if "/pairs/" not in url]


def _read(read):
    return read(env="sokoban", flow="global", subset="mini")


@pytest.mark.parametrize("read", READS, ids=lambda read: read.__name__)
def test_after_the_warm_the_page_s_data_is_read_without_a_query(entries, warming, shared_cache, read,
                                                                django_assert_num_queries):
    warmed = warm_boards()
    assert MINI in warmed.boards and not warmed.failed
    with django_assert_num_queries(0):
        data = _read(read)
    assert [row.model for row in data.board.rows] == ["Alpha model", "Beta model"]


@pytest.mark.parametrize("read", READS, ids=lambda read: read.__name__)
def test_before_the_warm_reading_the_page_s_data_queries_the_database(entries, shared_cache, read):
    # What the test above saves: without the warm, the first read computes the page's data.
    assert any('"submissions_submission"' in sql for sql in _queries(lambda: _read(read)))


@pytest.mark.parametrize("url", PAGES)
def test_after_the_warm_a_visitors_first_request_for_the_page_reads_no_board_data(client, entries, warming,
                                                                                 shared_cache, url):
    warm_boards()
    queries = _queries(lambda: client.get(url))
    assert [sql for sql in queries if any(table in sql for table in BOARD_DATA_TABLES)] == []
    assert client.get(url).status_code == 200


@pytest.mark.parametrize("read", READS, ids=lambda read: read.__name__)
def test_a_new_result_is_in_the_page_s_data_at_once(entries, warming, shared_cache, sent, read,
                                                    django_capture_on_commit_callbacks):
    warm_boards()
    _finish_one_more(sent, django_capture_on_commit_callbacks)
    # Before its warm runs: the data warmed earlier is not read any more.
    assert [row.model for row in _read(read).board.rows] == ["Gamma model", "Alpha model", "Beta model"]


@pytest.mark.parametrize("url", NAMING_PAGES)
def test_a_new_result_shows_at_once_on_the_warmed_page(client, entries, warming, shared_cache, sent, url,
                                                       django_capture_on_commit_callbacks):
    warm_boards()
    assert "Gamma model" not in _shown(client, url)
    _finish_one_more(sent, django_capture_on_commit_callbacks)
    assert "Gamma model" in _shown(client, url)


def test_the_warm_after_a_new_result_stores_the_pages_data_with_it(entries, warming, shared_cache, sent,
                                                                   django_capture_on_commit_callbacks,
                                                                   django_assert_num_queries):
    warm_boards()
    _finish_one_more(sent, django_capture_on_commit_callbacks)
    assert MINI in warm_boards().boards
    with django_assert_num_queries(0):
        boards = [_read(read).board for read in READS]
    assert all(board.rows[0].model == "Gamma model" for board in boards)
