"""What a board's pages compute over all its entries is stored as entries finish (leaderboard.stored):
the stored values equal a rebuild from the attempts, a finished submission adds its own, and hiding,
publishing or deleting an entry brings them up to date."""
from __future__ import annotations

import statistics

import pytest
from django.db import transaction

from accounts.models import Team
from catalogue.models import Scenario
from leaderboard.analysis import board_analysis_get, board_compare_get
from leaderboard.changes import boards_changed
from leaderboard.models import BoardAggregate, EntryAnalysis, StoredPairedTest
from leaderboard.selectors import board_get
from leaderboard.stored import entry_aggregate, suite_scenarios_get
from scoring.stats import paired_test, summarise_entry
from submissions.models import Attempt, ModelEntry, Submission, SubmissionResult
from submissions.selectors import attempt_outcomes
from submissions.services import submission_publish, submission_refresh_status

pytestmark = pytest.mark.django_db

BOARD = ("sokoban", "global", "mini")


def _scenarios() -> list[Scenario]:
    return list(Scenario.objects.filter(environment_id="sokoban", suite="fixture", in_mini=True).order_by("key"))


def _finish(team: Team, name: str, offset: float, *, public: bool = True, repeats: int = 2) -> Submission:
    """A submission whose attempts are all scored, finished the way the worker finishes one."""
    model = ModelEntry.objects.create(team=team, name=name)
    submission = Submission.objects.create(team=team, model=model, environment_id="sokoban", flow="global",
                                           subset="mini", suite="fixture", status=Submission.Status.RUNNING,
                                           is_public=public, settings={"repeats": repeats})
    Attempt.objects.bulk_create(
        Attempt(submission=submission, scenario=scenario, repeat=repeat, status=Attempt.Status.SCORED,
                score=round(min(100.0, max(0.0, offset + 7.0 * ((index * 3 + repeat * 5) % 11) - 20.0)), 3),
                invalid_action=(index + repeat) % 4 == 0, repeating_action=index % 5 == 0)
        for index, scenario in enumerate(_scenarios()) for repeat in range(repeats))
    submission_refresh_status(submission_id=submission.id)
    return submission


@pytest.fixture
def entries(stored_lab, django_capture_on_commit_callbacks) -> list[Submission]:
    other = Team.objects.create(name="Other", slug="other")
    with django_capture_on_commit_callbacks(execute=True):
        return [_finish(stored_lab, "Alpha", 60.0), _finish(other, "Beta", 55.0), _finish(stored_lab, "Gamma", 30.0),
                _finish(other, "Delta", 58.0, repeats=3)]


def _leader() -> int:
    board = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    return next(row.submission_id for row in board.rows if row.rank == 1)


def _from_attempts():
    """The board, its analysis and a comparison computed from the attempts alone, nothing stored read
    (every stored result and aggregate dropped for the computation, then restored)."""
    with transaction.atomic():
        SubmissionResult.objects.all().delete()  # its aggregates and tests go with it
        assert not StoredPairedTest.objects.exists() and not EntryAnalysis.objects.exists()
        BoardAggregate.objects.all().delete()
        board = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
        analysis = board_analysis_get(env="sokoban", flow="global", subset="mini", suite="fixture")
        comparison = board_compare_get(env="sokoban", flow="global", subset="mini", suite="fixture")
        transaction.set_rollback(True)
    return board, analysis, comparison


def _analysis_view(analysis) -> tuple:
    return (analysis.chart_data(), [(t.tag, t.values, [(r.model, r.means, r.counts) for r in t.rows])
                                    for t in analysis.tags],
            [(view.key, [(row.model, row.data) for row in view.rows]) for view in analysis.panels],
            [(row.model, [(c.mean, c.repeats, c.attempt_id, c.hue) if c else None for c in row.cells])
             for row in analysis.matrix], [s.id for s in analysis.scenarios])


def test_the_stored_aggregates_equal_a_rebuild_from_the_attempts(entries):
    stored_board = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    stored_analysis = board_analysis_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    stored_comparison = board_compare_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    board, analysis, comparison = _from_attempts()
    # Every number the board shows, its tie tests included, is the rebuild's to the last bit.
    assert [row.as_dict() for row in stored_board.rows] == [row.as_dict() for row in board.rows]
    assert any(row.tie_p_value is not None for row in board.rows)
    assert _analysis_view(stored_analysis) == _analysis_view(analysis)
    assert (stored_comparison.fail_threshold, stored_comparison.test) == (comparison.fail_threshold, comparison.test)
    assert [(d.scenario.id, d.a, d.b, d.a_attempt_id) for d in stored_comparison.shared] == [
        (d.scenario.id, d.a, d.b, d.a_attempt_id) for d in comparison.shared]

    # The stored rows themselves: one test per entry against the leader, one aggregate per entry, the median.
    leader = _leader()
    outcomes = attempt_outcomes([s.id for s in entries])
    means = {s.id: summarise_entry(outcomes[s.id]).scenario_means for s in entries}
    for submission in entries:
        result = SubmissionResult.objects.get(submission=submission)
        aggregate = EntryAnalysis.objects.get(result=result)
        assert aggregate.computed_from == result.computed_at
        expected = entry_aggregate(means[submission.id], suite_scenarios_get("sokoban", "fixture"),
                                   (("variant", "Variant"), ("boxes", "Boxes")), "mini")
        assert (aggregate.tag_means, aggregate.panels, aggregate.low, aggregate.high) == (
            expected.tag_means, expected.panels, expected.low, expected.high)
        if submission.id != leader:
            test = StoredPairedTest.objects.get(leader_id=leader, other_id=submission.id)
            expected_test = paired_test(means[leader], means[submission.id])
            assert (test.n_shared, test.mean_difference, test.p_value) == (
                expected_test.n_shared, expected_test.mean_difference, expected_test.p_value)
    assert StoredPairedTest.objects.count() == len(entries) - 1
    (median,) = BoardAggregate.objects.values_list("median", flat=True)
    assert median == statistics.median([v for per in means.values() for v in per.values()])


def test_a_finished_submission_adds_its_own_aggregate_and_test_and_leaves_the_others(
        entries, stored_lab, django_capture_on_commit_callbacks):
    leader = _leader()
    before = {(t.leader_id, t.other_id): (t.id, t.p_value) for t in StoredPairedTest.objects.all()}
    analyses = dict(EntryAnalysis.objects.values_list("result_id", "computed_from"))
    with django_capture_on_commit_callbacks(execute=True):
        late = _finish(stored_lab, "Epsilon", 40.0)
    assert _leader() == leader
    after = {(t.leader_id, t.other_id): (t.id, t.p_value) for t in StoredPairedTest.objects.all()}
    # One new test, the newcomer against the leader; every other stored row untouched.
    assert set(after) - set(before) == {(leader, late.id)} and all(after[key] == before[key] for key in before)
    assert dict(EntryAnalysis.objects.exclude(result_id=late.id).values_list("result_id", "computed_from")) == analyses
    assert EntryAnalysis.objects.filter(result_id=late.id).exists()
    board, *_ = _from_attempts()
    assert [row.as_dict() for row in board_get(env="sokoban", flow="global", subset="mini", suite="fixture").rows] \
        == [row.as_dict() for row in board.rows]


def test_a_new_leader_gets_a_test_against_every_entry(entries, stored_lab, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        best = _finish(stored_lab, "Champion", 95.0)
    assert _leader() == best.id
    assert set(StoredPairedTest.objects.filter(leader_id=best.id).values_list("other_id", flat=True)) == {
        s.id for s in entries}


def _current_tests_cover_the_board() -> None:
    """The stored tests hold the current leader against every other entry with a score, and the board
    built from them equals the rebuild from the attempts."""
    board = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    leader = next(row for row in board.rows if row.rank == 1)
    others = {row.submission_id for row in board.rows if row is not leader and row.mean is not None}
    stored = set(StoredPairedTest.objects.filter(leader_id=leader.submission_id).values_list("other_id", flat=True))
    assert others <= stored
    rebuilt, *_ = _from_attempts()
    assert [row.as_dict() for row in board.rows] == [row.as_dict() for row in rebuilt.rows]


def test_hiding_the_leader_stores_the_tests_against_the_next_one(entries, django_capture_on_commit_callbacks):
    leader = _leader()
    with django_capture_on_commit_callbacks(execute=True):
        # As the admin hides an entry: the row changes and its board is told.
        Submission.objects.filter(id=leader).update(hidden=True, hidden_reason="spam")
        boards_changed(BOARD)
    assert _leader() != leader and StoredPairedTest.objects.filter(leader_id=_leader()).exists()
    _current_tests_cover_the_board()


def test_publishing_an_entry_that_leads_stores_its_tests(entries, stored_lab, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        private = _finish(stored_lab, "Secret", 97.0, public=False)
    assert _leader() != private.id and not StoredPairedTest.objects.filter(leader_id=private.id).exists()
    with django_capture_on_commit_callbacks(execute=True):
        submission_publish(submission=private)
    assert _leader() == private.id
    _current_tests_cover_the_board()


def test_deleting_an_entry_drops_what_was_stored_of_it(entries, django_capture_on_commit_callbacks):
    leader = _leader()
    with django_capture_on_commit_callbacks(execute=True):
        Submission.objects.filter(id=leader).delete()
        boards_changed(BOARD)
    assert not StoredPairedTest.objects.filter(leader_id=leader).exists()
    assert not EntryAnalysis.objects.filter(result_id=leader).exists()
    assert StoredPairedTest.objects.filter(leader_id=_leader()).exists()
    _current_tests_cover_the_board()


def test_a_rebuilt_result_is_never_read_with_its_stale_aggregates(entries):
    """A result recomputed after its attempts changed (a re-score) invalidates what was stored of it,
    even before its board is brought up to date."""
    from django.utils import timezone

    victim = next(s for s in entries if s.id != _leader())
    Attempt.objects.filter(submission=victim).update(score=0.0)
    from submissions.services import submission_result_rebuild

    submission_result_rebuild(submission_id=victim.id)  # on_commit not run: nothing stored refreshed
    assert SubmissionResult.objects.get(submission=victim).computed_at <= timezone.now()
    stored = board_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    analysis = board_analysis_get(env="sokoban", flow="global", subset="mini", suite="fixture")
    board, rebuilt, _ = _from_attempts()
    assert [row.as_dict() for row in stored.rows] == [row.as_dict() for row in board.rows]
    assert _analysis_view(analysis) == _analysis_view(rebuilt)
