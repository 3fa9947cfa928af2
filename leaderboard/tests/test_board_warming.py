"""After a change, the changed boards' pages are rebuilt by a Celery task, not by their first visitor;
a change to one board leaves every other board's cached pages alone."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse
from kombu.exceptions import OperationalError

from accounts.models import Team
from leaderboard import tasks
from leaderboard.cache import WARM_PENDING_KEY
from leaderboard.tests.test_board_cache import _entry, _shown
from leaderboard.warming import warm_boards
from submissions.models import Submission
from submissions.services import submission_publish, submission_refresh_status

pytestmark = pytest.mark.django_db

MINI = ("sokoban", "global", "mini")
# What an anonymous visitor sees of the board, with its default suite and filters.
VISITOR_PAGES = [
    reverse("board", args=MINI),
    reverse("api-board", args=MINI),
    reverse("board-export", args=[*MINI, "csv"]),
    reverse("board-analysis", args=MINI),
    reverse("board-compare", args=MINI),
    reverse("board-pairs", args=MINI),
    reverse("board-cost", args=MINI),
    reverse("home"),
]


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


@pytest.mark.parametrize("url", VISITOR_PAGES)
def test_after_the_warm_a_visitors_first_request_renders_nothing(client, entries, warming, url,
                                                                django_assert_max_num_queries):
    warmed = warm_boards()
    assert MINI in warmed.boards and warmed.home and not warmed.failed
    # The one query reads the database's generations (the test settings' cache is per process).
    with django_assert_max_num_queries(1):
        response = client.get(url)
    assert response.status_code == 200


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
