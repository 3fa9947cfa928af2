"""Within a submission's turn, its longest attempts go first: the fair order still says whose turn it
is, the scenarios' recent times say which of that submission's attempts goes."""
from __future__ import annotations

import heapq
from collections.abc import Sequence
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import Team
from catalogue.models import Scenario
from submissions.engine import attempt_claim_next
from submissions.models import Attempt, ModelEntry, Submission
from submissions.scheduling import longest_first

pytestmark = pytest.mark.django_db


def _scenarios(count: int) -> list[Scenario]:
    scenarios = list(Scenario.objects.filter(environment_id="sokoban", suite="fixture").order_by("id")[:count])
    assert len(scenarios) == count
    return scenarios


def _submission(team: str, scenarios: Sequence[Scenario], *, repeats: int = 1, flow: str = "global",
                ago: float = 0.0) -> Submission:
    """A submission with every scenario × repeat pending, created as a run creates them (scenario by
    scenario, each one's repeats in turn)."""
    owner, _ = Team.objects.get_or_create(name=team, defaults={"slug": team.lower().replace(" ", "-")})
    model = ModelEntry.objects.create(team=owner, name=f"{team} model {ModelEntry.objects.count()}")
    submission = Submission.objects.create(team=owner, model=model, environment_id="sokoban", flow=flow,
                                           subset="mini", suite="fixture", is_public=True)
    Submission.objects.filter(id=submission.id).update(created_at=timezone.now() - timedelta(seconds=ago))
    Attempt.objects.bulk_create(Attempt(submission=submission, scenario=s, repeat=r)
                                for s in scenarios for r in range(repeats))
    submission.refresh_from_db()
    return submission


def _history(times: dict[Scenario, list[float]], *, flow: str = "global") -> None:
    """A finished run of another team whose attempts of each scenario took these seconds."""
    done = _submission("History lab", [], flow=flow)
    Submission.objects.filter(id=done.id).update(status=Submission.Status.COMPLETED)
    finished = timezone.now() - timedelta(hours=1)
    Attempt.objects.bulk_create(
        Attempt(submission=done, scenario=scenario, repeat=r, status=Attempt.Status.SCORED, score=1.0,
                duration_seconds=seconds, finished_at=finished)
        for scenario, values in times.items() for r, seconds in enumerate(values))


def _claims(count: int) -> list[Attempt]:
    claimed = []
    for _ in range(count):
        attempt = attempt_claim_next(queues=["light"], worker="w").attempt
        assert attempt is not None
        claimed.append(attempt)
    return claimed


def test_one_submission_s_attempts_are_claimed_longest_first(fixture_scenarios):
    ten, sixty, thirty = _scenarios(3)
    _history({ten: [10.0], sixty: [60.0], thirty: [30.0]})
    _submission("Lab", [ten, sixty, thirty])
    assert [a.scenario for a in _claims(3)] == [sixty, thirty, ten]


def test_the_estimate_is_the_median_of_recent_runs_on_the_same_flow(fixture_scenarios):
    spiky, steady = _scenarios(2)
    # Median 6 s (one slow outlier, which a mean of 37 s would rank first) against 20 s; on the
    # other flow the order would be the reverse, and that flow is not this submission's.
    _history({spiky: [100.0, 5.0, 6.0], steady: [20.0]})
    _history({spiky: [500.0], steady: [1.0]}, flow="local")
    _submission("Lab", [spiky, steady])
    assert [a.scenario for a in _claims(2)] == [steady, spiky]


def test_a_scenario_never_run_is_claimed_first(fixture_scenarios):
    ten, sixty, thirty, new = _scenarios(4)
    _history({ten: [10.0], sixty: [60.0], thirty: [30.0]})
    _submission("Lab", [ten, sixty, thirty, new])
    assert [a.scenario for a in _claims(4)] == [new, sixty, thirty, ten]


def test_repeats_of_a_scenario_stay_together_in_order(fixture_scenarios):
    ten, sixty, thirty = _scenarios(3)
    _history({ten: [10.0], sixty: [60.0], thirty: [30.0]})
    _submission("Lab", [ten, sixty, thirty], repeats=2)
    assert [(a.scenario, a.repeat) for a in _claims(6)] == [
        (sixty, 0), (sixty, 1), (thirty, 0), (thirty, 1), (ten, 0), (ten, 1)]


def test_with_no_estimate_at_all_attempts_go_in_the_order_they_were_created(fixture_scenarios):
    first, second = _scenarios(2)
    _submission("Lab", [first, second], repeats=2)
    assert [(a.scenario, a.repeat) for a in _claims(4)] == [(first, 0), (first, 1), (second, 0), (second, 1)]


def test_two_teams_still_take_turns_and_each_turn_takes_that_team_s_longest(fixture_scenarios):
    ten, sixty, thirty = _scenarios(3)
    _history({ten: [10.0], sixty: [60.0], thirty: [30.0]})
    first = _submission("Lab A", [ten, sixty, thirty], ago=30)
    second = _submission("Lab B", [thirty, ten], ago=20)
    first_again = _submission("Lab A", [ten, thirty], ago=10)
    claimed = _claims(7)
    # The turns are the fair order's, as without estimates (test_scheduling.test_two_teams_take_turns).
    assert [a.submission.team.name for a in claimed] == ["Lab A", "Lab B", "Lab A", "Lab B", "Lab A", "Lab A",
                                                         "Lab A"]
    assert [a.submission for a in claimed if a.submission.team.name == "Lab A"] == [
        first, first_again, first, first_again, first]
    assert [(a.submission, a.scenario) for a in claimed] == [
        (first, sixty), (second, thirty), (first_again, thirty), (second, ten), (first, thirty),
        (first_again, ten), (first, ten)]


def test_longest_first_ranks_the_longest_scenario_first_and_ties_by_scenario():
    assert longest_first({7: 10.0, 3: 60.0, 5: 30.0, 4: 30.0}) == {3: 1, 4: 2, 5: 3, 7: 4}
    assert longest_first({}) == {}


def _makespan(durations: Sequence[float], slots: int) -> float:
    """List scheduling: each attempt in the given order starts on the slot that frees first."""
    free = [0.0] * slots
    for seconds in durations:
        heapq.heappush(free, heapq.heappop(free) + seconds)
    return max(free)


def test_longest_first_shortens_a_run_whose_longest_attempt_was_last():
    # Seven 30 s attempts then one of 189 s, on 2 slots. In creation order the 189 s one starts at
    # 90 s, when the other slot still has 30 s to go, and ends alone at 279 s; longest first, it
    # runs from 0 s while the other slot takes the seven 30 s ones (210 s). The bound is 199.5 s.
    created = [30.0] * 7 + [189.0]
    assert _makespan(created, 2) == 279.0
    assert _makespan(sorted(created, reverse=True), 2) == 210.0
