"""Time left when several teams wait on one queue: a team's estimate counts the other teams' work
the fair order runs before its own, at each team's own pace, however deep the queue."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from accounts.models import Team
from catalogue.models import Scenario
from submissions import scheduling
from submissions.models import Attempt, LiveWorker, ModelEntry, Submission, SubmissionResult
from submissions.progress_selectors import queue_list
from submissions.scheduling import Contender, SimSubmission, SimWorker, simulate

T0 = datetime(2026, 1, 1, 12, 0)


def _waiting(sid: int, team: int, attempts: int, seconds: float, *, minute: int = 0, endpoint: str = "",
             baseline: bool = False) -> SimSubmission:
    return SimSubmission(contender=Contender(submission_id=sid, team_id=team, baseline=baseline, subset="mini",
                                             created_at=T0 + timedelta(minutes=minute), endpoint=endpoint),
                         queue="light", waiting=attempts, per_attempt=seconds)


def _one_worker(slots: int) -> list[SimWorker]:
    return [SimWorker(name="w", queues=["light"], slots=slots)]


def test_three_teams_on_one_slot_take_turns_to_the_end_of_a_queue_deeper_than_the_played_instants():
    # 2,000 attempts each, longer than the instants played one by one (5,000). A (1 s, oldest), B
    # (1.5 s), C (2 s) take turns on the one slot: A, B, C, A, B, C, ... a round of 4.5 s. A's k-th
    # attempt ends at (k - 1) × 4.5 + 1: its last at 1,999 × 4.5 + 1 = 8,996.5 s; B's at 8,998, C's at 9,000.
    assert 3 * 2_000 > scheduling.MAX_EVENTS
    teams = [_waiting(1, 1, 2_000, 1.0), _waiting(2, 2, 2_000, 1.5, minute=1), _waiting(3, 3, 2_000, 2.0, minute=2)]
    outcomes = simulate(teams, _one_worker(1))
    assert outcomes[1].finish == pytest.approx(8_996.5, rel=1e-3)
    assert outcomes[2].finish == pytest.approx(8_998.0, rel=1e-3)
    assert outcomes[3].finish == pytest.approx(9_000.0, rel=1e-3)


def test_past_the_played_instants_a_team_at_its_endpoint_limit_leaves_its_other_slots_to_the_next_team(monkeypatch):
    # Play one instant only, the rest as shares. Four slots; A may call its endpoint once at a time.
    # t=0: A takes 1 slot, B 3. From t=1: A 29 × 1 s on its one slot, done at 30; B 57 × 1 s over
    # three slots, done at 1 + 19 = 20 (then A, alone, still runs one at a time).
    monkeypatch.setattr(scheduling, "MAX_EVENTS", 1)
    a = _waiting(1, 1, 30, 1.0, endpoint="https://a.example/v1")
    b = _waiting(2, 2, 60, 1.0, minute=1)
    outcomes = simulate([a, b], _one_worker(4), endpoint_limit=1)
    assert outcomes[1].finish == pytest.approx(30.0)
    assert outcomes[2].finish == pytest.approx(20.0)


def test_past_the_played_instants_baselines_take_only_what_the_teams_leave(monkeypatch):
    # Two slots, the team's endpoint limited to one: the baseline runs beside it on the other slot.
    # t=0: the team's first attempt (0-2) and the baseline's (0-1). From t=1: the team's 1 s left and
    # 9 × 2 s on its one slot (done at 20); the baseline's 9 × 1 s on the other (done at 10).
    monkeypatch.setattr(scheduling, "MAX_EVENTS", 1)
    team = _waiting(1, 1, 10, 2.0, endpoint="https://a.example/v1")
    baseline = _waiting(2, 9, 10, 1.0, baseline=True)
    outcomes = simulate([team, baseline], _one_worker(2), endpoint_limit=1)
    assert (outcomes[1].finish, outcomes[2].finish) == (pytest.approx(20.0), pytest.approx(10.0))


def test_a_lone_team_s_deep_queue_finishes_as_its_own_work_over_its_slots():
    # Alone, nothing interleaves: 6,000 attempts × 1 s on one slot end at 6,000 s, as before.
    assert simulate([_waiting(1, 1, 6_000, 1.0)], _one_worker(1))[1].finish == pytest.approx(6_000.0, rel=1e-3)


# --- on the queue, each team's pace from its own recent runs --------------------------------------------


def _team_run(team: str, *, pending: int = 0, scored: list[float] | None = None,
              status: str = Submission.Status.RUNNING, mean_seconds: float | None = None) -> Submission:
    owner, _ = Team.objects.get_or_create(name=team, defaults={"slug": team.lower()})
    model = ModelEntry.objects.create(team=owner, name=f"{team} model {ModelEntry.objects.count()}")
    submission = Submission.objects.create(team=owner, model=model, environment_id="sokoban", flow="global",
                                           subset="mini", suite="fixture", status=status, is_public=True)
    scenarios = list(Scenario.objects.filter(environment_id="sokoban", suite="fixture").order_by("key"))
    Attempt.objects.bulk_create(
        [Attempt(submission=submission, scenario=scenarios[i], repeat=0, status=Attempt.Status.SCORED,
                 duration_seconds=seconds, score=1.0, started_at=timezone.now() - timedelta(seconds=5))
         for i, seconds in enumerate(scored or [])]
        + [Attempt(submission=submission, scenario=scenarios[i], repeat=1) for i in range(pending)])
    if mean_seconds is not None:
        SubmissionResult.objects.create(submission=submission, mean_seconds=mean_seconds, computed_at=timezone.now())
    return submission


@pytest.mark.django_db
def test_another_team_s_queued_work_counts_at_that_team_s_own_recent_pace(fixture_scenarios):
    LiveWorker.objects.create(hostname="w@host", queues=["browser", "engine", "light"], concurrency=1)
    # Beta's earlier run took 20 s per attempt; a fast baseline finished on the board since (1 s).
    _team_run("Beta", status=Submission.Status.COMPLETED, mean_seconds=20.0)
    _team_run("Platform", status=Submission.Status.COMPLETED, mean_seconds=1.0)
    # Alpha has been served (10 s per attempt so far), Beta's new run not yet: two attempts each.
    alpha = _team_run("Alpha", pending=2, scored=[10.0])
    beta = _team_run("Beta", pending=2)
    # One slot, turn by turn from the team served least recently: Beta 0-20, Alpha 20-30, Beta 30-50,
    # Alpha 50-60.
    items = {item.submission.id: item for item in queue_list() if item.position is not None}
    assert items[beta.id].eta_basis == "recent runs of this team on this board"
    assert items[beta.id].eta_seconds == pytest.approx(50.0)
    assert items[alpha.id].eta_seconds == pytest.approx(60.0)


@pytest.mark.django_db
def test_a_lone_team_s_estimate_is_its_own_pace_over_the_slots(fixture_scenarios):
    LiveWorker.objects.create(hostname="w@host", queues=["browser", "engine", "light"], concurrency=2)
    _team_run("Platform", status=Submission.Status.COMPLETED, mean_seconds=1.0)
    alone = _team_run("Alpha", pending=6, scored=[4.0, 6.0])
    # 6 attempts × 5 s over two slots: 15 s.
    item = next(item for item in queue_list() if item.submission.id == alone.id)
    assert item.eta_seconds == pytest.approx(15.0) and item.eta_basis == "this submission"
