"""Each board's ranked rows are stored as its entries finish (``StoredBoardRanking``), and the home
page and its overview read them instead of ranking every board again: the stored rows are the
board's own, a finished submission changes them, and a ranking that a later write made stale is
never read."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import Team
from catalogue.models import Scenario
from evaluators.base import all_plugins
from leaderboard.models import StoredBoardRanking
from leaderboard.selectors import RankedBoard, board_get, boards_ranked_get, overview_get, overview_of
from submissions.models import Attempt, ModelEntry, Submission
from submissions.services import model_entry_upsert, submission_refresh_status

pytestmark = pytest.mark.django_db

EVERY_ROW = 10_000


def _home_boards() -> list[tuple[str, str, str]]:
    return [(plugin.slug, flow, subset) for plugin in all_plugins() for subset in ("mini", "full")
            for flow in plugin.flows]


def _finish(team: Team, name: str, offset: float, *, flow: str = "global", subset: str = "mini",
            public: bool = True, baseline: bool = False, failing: int = 0, settings: dict | None = None) -> Submission:
    """A Sokoban submission whose attempts are scored (``failing`` of them failed for infrastructure
    reasons), finished the way the worker finishes one."""
    model, _ = ModelEntry.objects.get_or_create(team=team, name=name, defaults={
        "organisation": f"{name} Labs", "open_weights": public, "parameter_count": 7_000_000_000,
        "price_input_per_mtok": 1.5})
    submission = Submission.objects.create(team=team, model=model, environment_id="sokoban", flow=flow,
                                           subset=subset, suite="fixture", status=Submission.Status.RUNNING,
                                           is_public=public, is_baseline=baseline,
                                           settings={"repeats": 2, **(settings or {})})
    scenarios = Scenario.objects.filter(environment_id="sokoban", suite="fixture",
                                        **Scenario.subset_filter(subset)).order_by("key")
    Attempt.objects.bulk_create(
        Attempt(submission=submission, scenario=scenario, repeat=repeat,
                status=Attempt.Status.INFRA_FAILED if index < failing and repeat == 0 else Attempt.Status.SCORED,
                score=None if index < failing and repeat == 0 else
                round(min(100.0, max(0.0, offset + 7.0 * ((index * 3 + repeat * 5) % 11) - 20.0)), 3),
                invalid_action=(index + repeat) % 4 == 0, repeating_action=index % 5 == 0, model_calls=3,
                prompt_tokens=1000 + index, completion_tokens=40)
        for index, scenario in enumerate(scenarios) for repeat in range(2))
    submission_refresh_status(submission_id=submission.id)
    return submission


@pytest.fixture
def entries(stored_lab, django_capture_on_commit_callbacks) -> list[Submission]:
    """Entries of every kind a board shows differently, on two of its boards, all finished."""
    other = Team.objects.create(name="Other", slug="other")
    with django_capture_on_commit_callbacks(execute=True):
        finished = [_finish(stored_lab, "Alpha", 60.0), _finish(other, "Beta", 59.0),
                    _finish(stored_lab, "Gamma", 30.0),
                    _finish(other, "Oracle", 90.0, baseline=True), _finish(stored_lab, "Flaky", 50.0, failing=3),
                    _finish(other, "Retrying", 70.0, settings={"parse_retries": 2}),
                    _finish(stored_lab, "Secret", 95.0, public=False),
                    _finish(stored_lab, "Alpha", 45.0, flow="online"), _finish(other, "Beta", 65.0, flow="online"),
                    _finish(other, "Delta", 40.0, subset="full")]
    # The boards no entry changed are ranked by the first read, as by the first home page.
    boards_ranked_get(_home_boards(), head=1)
    return finished


def _stored_boards() -> dict[tuple[str, str, str], RankedBoard]:
    """Every home board as read from its stored ranking, every row parsed; asserting it was read
    (no board's entries queried)."""
    with CaptureQueriesContext(connection) as captured:
        ranked = boards_ranked_get(_home_boards(), head=EVERY_ROW)
    assert not [q for q in captured.captured_queries if 'FROM "submissions_submission"' in q["sql"]]
    return dict(zip(_home_boards(), ranked, strict=True))


def test_the_stored_rows_equal_the_rows_the_boards_compute(entries):
    stored = _stored_boards()
    for (env, flow, subset), ranked in stored.items():
        computed = board_get(env=env, flow=flow, subset=subset)
        # Every field of every row, in rank order, the stamps the ties were tested on included.
        assert ranked.board.rows == computed.rows
        assert [row.as_dict() for row in ranked.board.rows] == [row.as_dict() for row in computed.rows]
        assert [row.result_stamp for row in ranked.board.rows] == [row.result_stamp for row in computed.rows]
        assert ranked.board.entries == len(computed.rows)
        assert (ranked.board.suite, ranked.board.scenario_count, ranked.board.note, ranked.board.title) == (
            computed.suite, computed.scenario_count, computed.note, computed.title)
    rows = stored[("sokoban", "global", "mini")].board.rows
    assert {"leader", "tied"} <= {row.standing for row in rows} and any(row.variant for row in rows)
    assert any(row.incomplete for row in rows) and not any(row.is_private for row in rows)
    for subset in ("mini", "full"):
        columns = [stored[(plugin.slug, flow, subset)] for plugin in all_plugins() for flow in plugin.flows]
        assert overview_of(subset, columns).rows == overview_get(subset=subset).rows


def test_the_home_page_from_the_stored_rows_is_the_page_the_boards_compute(entries, client):
    pages = {}
    ranking_reads = []
    for overview in ("mini", "full"):
        for query in ("", "&models=all"):
            with CaptureQueriesContext(connection) as captured:
                pages[overview, query] = client.get(f"{reverse('home')}?overview={overview}{query}").content
            assert not [q for q in captured.captured_queries if 'FROM "submissions_submission"' in q["sql"]]
            ranking_reads.append(len([q for q in captured.captured_queries
                                      if '"leaderboard_storedboardranking"' in q["sql"]]))
    # Every board's ranking in one read, by the first page; the others find them in the board cache.
    assert ranking_reads == [1, 0, 0, 0]
    StoredBoardRanking.objects.all().delete()
    cache.clear()
    for (overview, query), page in pages.items():
        assert client.get(f"{reverse('home')}?overview={overview}{query}").content == page
    assert StoredBoardRanking.objects.count() == len(_home_boards())


def test_a_newly_finished_submission_changes_the_stored_rows(entries, stored_lab, django_capture_on_commit_callbacks):
    board = ("sokoban", "global", "mini")
    before = StoredBoardRanking.objects.get(env="sokoban", flow="global", subset="mini")
    untouched = {(r.env, r.flow, r.subset): r.rows for r in StoredBoardRanking.objects.exclude(id=before.id)}
    with django_capture_on_commit_callbacks(execute=True):
        champion = _finish(stored_lab, "Champion", 99.0)
    after = StoredBoardRanking.objects.get(id=before.id)
    assert after.board_generation > before.board_generation and after.rows != before.rows
    assert after.entries == before.entries + 1
    rows = _stored_boards()[board].board.rows
    assert rows[0].submission_id == champion.id and rows[0].rank == 1 and rows[0].standing == "leader"
    assert rows == board_get(env="sokoban", flow="global", subset="mini").rows
    # The other boards' rankings were not ranked again.
    assert {(r.env, r.flow, r.subset): r.rows for r in StoredBoardRanking.objects.exclude(id=before.id)} == untouched


def test_hiding_the_last_entry_of_a_board_stores_its_empty_ranking(entries, django_capture_on_commit_callbacks):
    from leaderboard.changes import boards_changed

    with django_capture_on_commit_callbacks(execute=True):
        Submission.objects.filter(subset="full").update(hidden=True, hidden_reason="spam")
        boards_changed(("sokoban", "global", "full"))
    stored = _stored_boards()[("sokoban", "global", "full")]
    assert stored.board.rows == [] and stored.board.entries == 0 and stored.overview == []


def test_a_ranking_stored_before_a_change_of_everything_is_ranked_again(
        entries, stored_lab, client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        # A model's metadata changes every board it is on, and names none (boards_changed()).
        model_entry_upsert(team=stored_lab, name="Alpha", organisation="Renamed Labs")
    with CaptureQueriesContext(connection) as captured:
        ranked = dict(zip(_home_boards(), boards_ranked_get(_home_boards(), head=EVERY_ROW), strict=True))
    assert [q for q in captured.captured_queries if 'FROM "submissions_submission"' in q["sql"]]
    alpha = next(row for row in ranked[("sokoban", "global", "mini")].board.rows if row.model == "Alpha")
    assert alpha.organisation == "Renamed Labs"
    # Ranked again, and stored: the next read is one read.
    board = ("sokoban", "global", "mini")
    assert _stored_boards()[board].board.rows == ranked[board].board.rows


def test_a_ranking_stored_under_other_settings_is_never_read(entries, settings):
    settings.MAGEBENCH_DEFAULT_SUITE = "elsewhere"
    with CaptureQueriesContext(connection) as captured:
        ranked = boards_ranked_get([("sokoban", "global", "mini")], head=EVERY_ROW)
    assert [q for q in captured.captured_queries if 'FROM "submissions_submission"' in q["sql"]]
    assert ranked[0].board.suite == "elsewhere" and ranked[0].board.rows == []


def test_a_page_built_inside_the_writers_transaction_ranks_again_the_boards_it_changed(entries):
    from leaderboard.changes import boards_changed

    board = ("sokoban", "global", "mini")
    leader = _stored_boards()[board].board.rows[0]
    Submission.objects.filter(id=leader.submission_id).update(hidden=True, hidden_reason="spam")
    boards_changed(board)  # its on-commit work never runs here: the database's generations stay as they were
    (ranked,) = boards_ranked_get([board], head=EVERY_ROW)
    assert leader.submission_id not in {row.submission_id for row in ranked.board.rows}
    assert ranked.board.rows == board_get(env="sokoban", flow="global", subset="mini").rows
