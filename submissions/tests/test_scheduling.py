"""Fair scheduling: which waiting attempt a free worker takes, and the time-left simulation of it."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from accounts.models import Team
from catalogue.models import Scenario
from submissions.engine import attempt_claim, attempt_claim_next
from submissions.models import Attempt, LiveWorker, ModelEntry, Submission, SubmissionResult
from submissions.progress_selectors import queue_list
from submissions.scheduling import Contender, Served, SimSubmission, SimWorker, fair_order, simulate
from submissions.selectors import queue_loads

pytestmark = pytest.mark.django_db


def _submission(team: str, attempts: int, *, baseline: bool = False, subset: str = "mini", url: str = "",
                env: str = "sokoban", ago: float = 0.0) -> Submission:
    """A submission with ``attempts`` pending attempts, created ``ago`` seconds before now."""
    owner, _ = Team.objects.get_or_create(name=team, defaults={"slug": team.lower().replace(" ", "-")})
    model = ModelEntry.objects.create(team=owner, name=f"{team} model {ModelEntry.objects.count()}",
                                      is_baseline=baseline)
    submission = Submission.objects.create(team=owner, model=model, environment_id=env, flow="global", subset=subset,
                                           suite="fixture", is_baseline=baseline, endpoint_url=url, is_public=True)
    Submission.objects.filter(id=submission.id).update(created_at=timezone.now() - timedelta(seconds=ago))
    scenario = Scenario.objects.filter(environment_id="sokoban", suite="fixture").order_by("key").first()
    Attempt.objects.bulk_create(Attempt(submission=submission, scenario=scenario, repeat=r) for r in range(attempts))
    submission.refresh_from_db()
    return submission


def _next(worker: str = "w") -> Submission | None:
    claim = attempt_claim_next(queues=["light"], worker=worker)
    return claim.attempt.submission if claim.attempt is not None else None


# --- the order ------------------------------------------------------------------------------------


def test_a_small_submission_created_after_a_large_one_is_served_next(fixture_scenarios):
    large = _submission("Big lab", 40, ago=60)
    small = _submission("Small lab", 2)
    assert _next() == large  # both teams idle: the older one first
    assert _next() == small  # then the team with nothing running, not the 39 attempts ahead of it


def test_teams_are_served_before_the_platform_s_baseline_runs(fixture_scenarios):
    baseline = _submission("Platform", 5, baseline=True, ago=600)
    team = _submission("Lab", 2)
    assert [_next(), _next(), _next()] == [team, team, baseline]


def test_two_teams_take_turns(fixture_scenarios):
    first = _submission("Lab A", 5, ago=30)
    second = _submission("Lab B", 5, ago=20)
    first_again = _submission("Lab A", 5, ago=10)
    served = [_next() for _ in range(6)]
    assert [s.team.name for s in served] == ["Lab A", "Lab B"] * 3
    # Within a team, its submission with the fewest attempts running goes next.
    assert [s for s in served if s.team.name == "Lab A"] == [first, first_again, first]
    assert all(s == second for s in served if s.team.name == "Lab B")


def test_among_baseline_runs_mini_sets_come_before_full_sets_then_the_oldest(fixture_scenarios):
    full = _submission("Platform", 2, baseline=True, subset="full", ago=300)
    mini_old = _submission("Platform", 2, baseline=True, ago=200)
    mini_new = _submission("Platform", 2, baseline=True, ago=100)
    assert [_next() for _ in range(6)] == [mini_old, mini_old, mini_new, mini_new, full, full]


def test_a_retrying_attempt_waits_for_its_next_try_time(fixture_scenarios):
    submission = _submission("Lab", 1)
    attempt = submission.attempts.get()
    Attempt.objects.filter(id=attempt.id).update(status=Attempt.Status.RETRYING, tries=1,
                                                 next_try_at=timezone.now() + timedelta(minutes=5))
    assert _next() is None
    Attempt.objects.filter(id=attempt.id).update(next_try_at=timezone.now() - timedelta(seconds=1))
    assert _next() == submission


def test_an_endpoint_at_its_limit_is_skipped_for_the_next_submission(fixture_scenarios, settings):
    settings.MAGEBENCH_ENDPOINT_CONCURRENCY = 1
    busy = _submission("Lab A", 3, url="http://busy.example/v1", ago=60)
    other = _submission("Lab B", 3, url="http://other.example/v1", ago=30)
    assert attempt_claim(attempt_id=busy.attempts.order_by("id").first().id) is not None
    claim = attempt_claim_next(queues=["light"], worker="w")
    assert claim.attempt is not None and claim.attempt.submission == other
    # With the other endpoint full too, nothing is taken and the message is to come back later.
    claim = attempt_claim_next(queues=["light"], worker="w")
    assert claim.attempt is None and claim.endpoint_busy


def test_a_worker_takes_only_work_of_its_own_queue(fixture_scenarios):
    _submission("Lab", 2, env="webui")
    assert _next() is None
    assert attempt_claim_next(queues=["browser"], worker="w").attempt is not None


def test_the_order_function_is_the_one_the_dispatcher_and_the_estimates_share():
    t0 = datetime(2026, 1, 1)
    team = Contender(submission_id=1, team_id=1, baseline=False, subset="full", created_at=t0)
    other = Contender(submission_id=2, team_id=2, baseline=False, subset="mini", created_at=t0 + timedelta(1))
    base = Contender(submission_id=3, team_id=3, baseline=True, subset="mini", created_at=t0 - timedelta(1))
    assert fair_order([base, other, team], Served()) == [team, other, base]
    assert fair_order([base, other, team], Served(running_by_team={1: 2}, running_by_submission={1: 2})) == [
        other, team, base]
    # Equal running counts: the team served least recently goes first, so one worker alternates.
    assert fair_order([team, other], Served(last_by_team={1: 100.0, 2: 50.0})) == [other, team]


# --- the simulation -------------------------------------------------------------------------------


T0 = datetime(2026, 1, 1, 12, 0)


def _contender(sid: int, team: int, *, baseline: bool = False, subset: str = "mini", minute: int = 0,
               endpoint: str = "") -> Contender:
    return Contender(submission_id=sid, team_id=team, baseline=baseline, subset=subset,
                     created_at=T0 + timedelta(minutes=minute), endpoint=endpoint)


def test_the_simulation_lets_a_later_small_submission_finish_early():
    # Two slots. A (team 1): 10 attempts × 6 s; B (team 2, created later): 2 attempts × 3 s.
    # t=0: slot 1 takes A (oldest, both teams idle), slot 2 takes B (its team has nothing running).
    # t=3: slot 2 takes B again (team 2 still has fewer running); t=6: B is done.
    # A: 0-6 on slot 1, then its 9 others two at a time from t=6: 12, 18, 24, 30, and the last at 36.
    a = SimSubmission(contender=_contender(1, 1), queue="light", waiting=10, per_attempt=6.0)
    b = SimSubmission(contender=_contender(2, 2, minute=1), queue="light", waiting=2, per_attempt=3.0)
    outcomes = simulate([a, b], [SimWorker(name="w", queues=["light"], slots=2)])
    assert outcomes[2].finish == pytest.approx(6.0) and not outcomes[2].at_least
    assert outcomes[1].finish == pytest.approx(36.0)


def test_the_simulation_counts_what_runs_now_and_serves_baselines_last():
    # One slot, busy 4 s more with the baseline's running attempt; then the team's 3 × 5 s, then
    # the baseline's last 2 × 10 s: team done at 4 + 15 = 19 s, baseline at 19 + 20 = 39 s.
    baseline = SimSubmission(contender=_contender(1, 9, baseline=True), queue="light", waiting=2,
                             running_left=[4.0], running_on=["w"], per_attempt=10.0)
    team = SimSubmission(contender=_contender(2, 1, minute=5), queue="light", waiting=3, per_attempt=5.0)
    outcomes = simulate([baseline, team], [SimWorker(name="w", queues=["light"], slots=1)])
    assert outcomes[2].finish == pytest.approx(19.0)
    assert outcomes[1].finish == pytest.approx(39.0)


def test_a_worker_reading_several_queues_serves_them_by_one_fair_order():
    # One slot reading both queues: light's team (older) 0-10, then browser's team (never served)
    # 10-12, then light again 12-22.
    light = SimSubmission(contender=_contender(1, 1), queue="light", waiting=2, per_attempt=10.0)
    browser = SimSubmission(contender=_contender(2, 2), queue="browser", waiting=1, per_attempt=2.0)
    outcomes = simulate([light, browser], [SimWorker(name="w", queues=["light", "browser"], slots=1)])
    assert (outcomes[2].finish, outcomes[1].finish) == (pytest.approx(12.0), pytest.approx(22.0))


def test_work_with_no_observed_time_makes_what_follows_it_a_lower_bound():
    unknown = SimSubmission(contender=_contender(1, 1), queue="light", waiting=3, per_attempt=None)
    later = SimSubmission(contender=_contender(2, 1, minute=1), queue="light", waiting=2, per_attempt=5.0)
    elsewhere = SimSubmission(contender=_contender(3, 2), queue="engine", waiting=1, per_attempt=7.0)
    outcomes = simulate([unknown, later, elsewhere], [SimWorker(name="w", queues=["light"], slots=1),
                                                      SimWorker(name="e", queues=["engine"], slots=1)])
    assert outcomes[2].finish == pytest.approx(10.0) and outcomes[2].at_least
    assert outcomes[3].finish == pytest.approx(7.0) and not outcomes[3].at_least


def test_a_queue_no_worker_reads_has_no_finish_time():
    waiting = SimSubmission(contender=_contender(1, 1), queue="engine", waiting=1, per_attempt=5.0)
    assert simulate([waiting], [SimWorker(name="w", queues=["light"], slots=2)])[1].finish is None


def test_the_simulation_keeps_an_endpoint_under_its_limit():
    # Limit 1 on the shared endpoint: two slots, but its 3 × 4 s attempts run one at a time.
    a = SimSubmission(contender=_contender(1, 1, endpoint="u"), queue="light", waiting=3, per_attempt=4.0)
    outcomes = simulate([a], [SimWorker(name="w", queues=["light"], slots=2)], endpoint_limit=1)
    assert outcomes[1].finish == pytest.approx(12.0)


def test_an_attempt_waiting_to_retry_is_not_served_before_its_time_and_the_slot_serves_others_meanwhile():
    # One slot. A (older): 1 attempt due now + 1 retrying in 20 s, 5 s each; B: 2 × 4 s.
    # t=0 A's due one (0-5), t=5 B (5-9), t=9 B again (A has nothing startable): 9-13, the slot is then
    # idle until A's retry is due at 20: 20-25. B done at 13 s, A at 25 s.
    a = SimSubmission(contender=_contender(1, 1), queue="light", waiting=2, due_in=[20.0], per_attempt=5.0)
    b = SimSubmission(contender=_contender(2, 2, minute=1), queue="light", waiting=2, per_attempt=4.0)
    outcomes = simulate([a, b], [SimWorker(name="w", queues=["light"], slots=1)])
    assert outcomes[2].finish == pytest.approx(13.0)
    assert outcomes[1].finish == pytest.approx(25.0)


def test_a_retry_already_due_counts_as_waiting_now():
    a = SimSubmission(contender=_contender(1, 1), queue="light", waiting=2, due_in=[0.0, -3.0], per_attempt=5.0)
    assert simulate([a], [SimWorker(name="w", queues=["light"], slots=2)])[1].finish == pytest.approx(5.0)


def test_the_queue_estimate_of_a_submission_waiting_on_a_retry_includes_the_wait(fixture_scenarios):
    LiveWorker.objects.create(hostname="w@host", queues=["browser", "engine", "light"], concurrency=1)
    waiting = _submission("Lab", 1)
    done = _submission("Earlier", 1)
    Submission.objects.filter(id=done.id).update(status=Submission.Status.COMPLETED)
    SubmissionResult.objects.create(submission=done, mean_seconds=3.0, computed_at=timezone.now())
    Attempt.objects.filter(submission=waiting).update(status=Attempt.Status.RETRYING,
                                                      next_try_at=timezone.now() + timedelta(seconds=60))
    item = next(item for item in queue_list() if item.submission.id == waiting.id)
    # Its one attempt may start in about 60 s and takes 3 s (the board's recent mean).
    assert item.eta_seconds == pytest.approx(63.0, abs=2.0)


def test_the_queue_estimates_use_the_live_workers_slots(fixture_scenarios):
    LiveWorker.objects.create(hostname="w@host", queues=["browser", "engine", "light"], concurrency=2)
    large = _submission("Big lab", 10, ago=60)
    small = _submission("Small lab", 2)
    for submission, seconds in ((large, 6.0), (small, 3.0)):
        done = _submission("Earlier", 1, subset=submission.subset)
        Submission.objects.filter(id=done.id).update(status=Submission.Status.COMPLETED)
        SubmissionResult.objects.create(submission=done, mean_seconds=seconds, computed_at=timezone.now())
    # Both boards are sokoban/global/mini: their recent runs average 4.5 s per attempt. With two
    # slots, the small one's 2 attempts run beside the large one's first: done at 9 s.
    items = {item.submission.id: item for item in queue_list() if item.position is not None}
    assert items[small.id].eta_seconds == pytest.approx(9.0) and items[small.id].position == 1
    assert items[small.id].eta_basis == "recent runs of this board" and not items[small.id].eta_at_least
    assert items[large.id].eta_seconds == pytest.approx(27.0) and items[large.id].position == 2


def test_one_worker_reading_every_queue_busy_on_another_queue_is_not_reported_down(fixture_scenarios):
    LiveWorker.objects.create(hostname="w@host", queues=["browser", "engine", "light"], concurrency=1)
    busy = _submission("Lab", 1)
    Attempt.objects.filter(submission=busy).update(status=Attempt.Status.RUNNING, heartbeat_at=timezone.now(),
                                                   worker="w@host")
    _submission("Other lab", 3, env="webui")
    loads = {load.queue: load for load in queue_loads()}
    assert loads["browser"].waiting == 3 and loads["browser"].running == 0 and not loads["browser"].unserved
    # A worker that stopped saying it is up no longer serves anything.
    LiveWorker.objects.update(last_seen=timezone.now() - timedelta(hours=1))
    assert {load.queue: load for load in queue_loads()}["browser"].unserved


def test_the_queue_page_warns_only_about_a_queue_no_live_worker_reads(client, fixture_scenarios):
    LiveWorker.objects.create(hostname="light@host", queues=["light"], concurrency=1)
    _submission("Lab", 2, env="webui")
    page = client.get("/queue/").content.decode()
    assert "no live worker reads this queue" in page
    LiveWorker.objects.create(hostname="browser@host", queues=["browser"], concurrency=1)
    assert "no live worker reads this queue" not in client.get("/queue/").content.decode()


def test_a_worker_reading_every_queue_fills_mini_boards_of_any_queue_before_full_sets(fixture_scenarios):
    full = _submission("Platform", 1, baseline=True, subset="full", ago=300)
    mini_webui = _submission("Platform", 1, baseline=True, env="webui", ago=100)
    reads = ["browser", "engine", "light"]
    assert [attempt_claim_next(queues=reads, worker="w").attempt.submission for _ in range(2)] == [mini_webui, full]


# --- the messages that keep every due attempt's turn --------------------------------------------


@pytest.fixture
def sent(monkeypatch) -> list[tuple[list[int], float | None]]:
    """What attempt_run_next sends again, with episodes not played (each claimed one just ends)."""
    from submissions import engine

    messages: list[tuple[list[int], float | None]] = []
    monkeypatch.setattr(engine, "attempts_enqueue", lambda ids, countdown=None: messages.append((ids, countdown)))
    monkeypatch.setattr(engine, "_attempt_play", lambda attempt: None)
    return messages


def test_running_another_queue_s_attempt_sends_this_queue_s_message_again(fixture_scenarios, sent):
    from submissions.engine import attempt_run_next

    baseline = _submission("Platform", 1, baseline=True)
    team = _submission("Lab", 1, env="webui")
    hint = baseline.attempts.get().id
    attempt_run_next(queue="light", worker="w", hint=hint, reads=["browser", "engine", "light"])
    assert team.attempts.get().status == Attempt.Status.RUNNING  # the team's attempt, on the browser queue
    assert sent == [([hint], None)]  # the baseline's attempt still has its message on the light queue


def test_a_message_finding_every_due_endpoint_busy_comes_back_later(fixture_scenarios, sent, settings):
    from submissions.engine import attempt_run_next

    settings.MAGEBENCH_ENDPOINT_CONCURRENCY = 1
    settings.MAGEBENCH_ENDPOINT_BUSY_RETRY_SECONDS = 7.0
    busy = _submission("Lab", 2, url="http://busy.example/v1")
    first, second = busy.attempts.order_by("id")
    assert attempt_claim(attempt_id=first.id) is not None
    attempt_run_next(queue="light", worker="w", hint=second.id)
    assert sent == [([second.id], 7.0)]


def test_a_message_that_comes_before_its_retry_is_due_waits_for_it_and_others_do_nothing(fixture_scenarios, sent):
    from submissions.engine import attempt_run_next

    retrying = _submission("Lab", 1).attempts.get()
    Attempt.objects.filter(id=retrying.id).update(status=Attempt.Status.RETRYING, tries=1,
                                                  next_try_at=timezone.now() + timedelta(seconds=60))
    attempt_run_next(queue="light", worker="w", hint=retrying.id)
    assert len(sent) == 1 and sent[0][0] == [retrying.id] and 55 < (sent[0][1] or 0) <= 60
    attempt_run_next(queue="light", worker="w", hint=None)
    assert len(sent) == 1


@pytest.mark.django_db(transaction=True)
def test_a_message_finding_the_due_attempts_locked_by_a_write_comes_back_instead_of_being_dropped(
        fixture_scenarios, sent):
    import threading

    from django.db import connection, transaction

    from submissions.engine import LOCKED_RETRY_SECONDS, attempt_run_next

    waiting = _submission("Lab", 2)
    hint = waiting.attempts.order_by("id").first().id
    locked, release = threading.Event(), threading.Event()

    def stamp_queued_at() -> None:
        # What attempts_enqueue does right after sending the messages: one UPDATE of every row it sent.
        try:
            with transaction.atomic():
                Attempt.objects.filter(submission=waiting).update(queued_at=timezone.now())
                locked.set()
                release.wait(60)
        finally:
            connection.close()

    writer = threading.Thread(target=stamp_queued_at)
    writer.start()
    try:
        assert locked.wait(60)
        attempt_run_next(queue="light", worker="w", hint=hint)
    finally:
        release.set()
        writer.join()
    assert not waiting.attempts.exclude(status=Attempt.Status.PENDING).exists()
    assert sent == [([hint], LOCKED_RETRY_SECONDS)]
    # Once the write is over, the message takes an attempt; with every attempt taken, one more does nothing.
    for _ in range(3):
        attempt_run_next(queue="light", worker="w", hint=hint)
    assert not waiting.attempts.filter(status=Attempt.Status.PENDING).exists()
    assert sent == [([hint], LOCKED_RETRY_SECONDS)]
