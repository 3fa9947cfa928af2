"""Fair scheduling: the order in which waiting attempts are served, and a forward simulation of it.

The dispatcher (engine.attempt_run_next) and the time-left estimates (selectors.queue_list) both
rank waiting work with ``fair_key``, so an estimate follows the very order the workers serve in.
Nothing here reads the database: callers hand over plain values.
"""
from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Contender:
    """A submission with attempts waiting to be served, as the scheduler ranks it."""

    submission_id: int
    team_id: int
    #: The platform's own baseline run (submission or model flagged baseline): served after teams.
    baseline: bool
    subset: str
    created_at: datetime
    #: Attempts calling one endpoint at once are capped; "" for uploads, which call none.
    endpoint: str = ""


#: "Never served yet": earlier than any time an attempt was started.
NEVER = float("-inf")


def fair_key(contender: Contender, *, team_running: int, submission_running: int, team_last: float = NEVER,
             submission_last: float = NEVER) -> tuple[Any, ...]:
    """The rank of a contender now; the lowest is served first.

    Teams' submissions come before the platform's baseline runs. Among teams, round-robin: the team
    with the fewest attempts running, the one served least recently among equals (``team_last``:
    when it last had an attempt started, in seconds on any clock the caller keeps to), then its
    submission with the fewest running, served least recently, then the oldest. So a small
    submission does not wait behind a large one that arrived first, even with a single worker.
    Among baseline runs, mini sets before full sets, oldest first, so every mini board fills before
    the long runs start.
    """
    if contender.baseline:
        return (1, 0, NEVER, 0, NEVER, contender.subset != "mini", contender.created_at, contender.submission_id)
    return (0, team_running, team_last, submission_running, submission_last, False, contender.created_at,
            contender.submission_id)


@dataclass
class Served:
    """What the fair order counts: attempts running, and when an attempt was last started, per team
    and per submission (absent: none)."""

    running_by_team: dict[int, int] = field(default_factory=dict)
    running_by_submission: dict[int, int] = field(default_factory=dict)
    last_by_team: dict[int, float] = field(default_factory=dict)
    last_by_submission: dict[int, float] = field(default_factory=dict)

    def key(self, contender: Contender) -> tuple[Any, ...]:
        return fair_key(contender, team_running=self.running_by_team.get(contender.team_id, 0),
                        submission_running=self.running_by_submission.get(contender.submission_id, 0),
                        team_last=self.last_by_team.get(contender.team_id, NEVER),
                        submission_last=self.last_by_submission.get(contender.submission_id, NEVER))


def fair_order(contenders: Iterable[Contender], served: Served) -> list[Contender]:
    """Contenders from the one to serve first to the last."""
    return sorted(contenders, key=served.key)


# --- the forward simulation ---------------------------------------------------------------------


@dataclass
class SimSubmission:
    """One active submission as the simulation sees it."""

    contender: Contender
    queue: str
    #: Attempts not started yet (pending, or retrying).
    waiting: int
    #: Seconds from now until each of those that waits to retry after an infrastructure error may be
    #: started again (one entry per such attempt; the others of ``waiting`` may start now).
    due_in: list[float] = field(default_factory=list)
    #: Seconds left of each attempt running now (the mean time less the time it has run, at least 0).
    running_left: list[float] = field(default_factory=list)
    #: Where each running attempt runs (a worker's name), parallel to ``running_left``; "" if unknown.
    running_on: list[str] = field(default_factory=list)
    #: Seconds per attempt; None when nothing has been observed (its attempts then count as 0 s).
    per_attempt: float | None = None
    #: When it last had an attempt started, in seconds from now (negative); None: never.
    last_started: float | None = None


@dataclass(frozen=True)
class SimWorker:
    """A worker: ``slots`` processes, each taking the fairest due attempt of the queues it reads."""

    name: str
    queues: Sequence[str]
    slots: int


@dataclass
class SimOutcome:
    #: Seconds from now until the submission's last attempt ends (None: no worker would serve it).
    finish: float | None = None
    #: True when work with no observed time ran on its queue before it finished: then a lower bound.
    at_least: bool = False


@dataclass
class _Slot:
    worker: int  # index into the workers list; -1 for a slot held only by an attempt already running
    busy_until: float = 0.0
    submission: int | None = None


def simulate(submissions: Sequence[SimSubmission], workers: Sequence[SimWorker], *,
             endpoint_limit: int = 0, last_by_team: Mapping[int, float] | None = None,
             endpoint_limits: Mapping[str, int] | None = None) -> dict[int, SimOutcome]:
    """Play the fair policy forward from now and say when each submission would finish.

    Each free slot of a worker takes the first contender by ``fair_key`` among the queues that
    worker reads, as the dispatcher does; an endpoint at its limit (``endpoint_limits``' value for it, else
    ``endpoint_limit``) is skipped. Attempts running now keep their
    slot until their time is up; one running on a worker not listed holds a slot of its own.
    ``last_by_team`` and each submission's ``last_started`` are in seconds from now (negative).
    """
    by_id = {s.contender.submission_id: s for s in submissions}
    waiting = {sid: s.waiting for sid, s in by_id.items()}
    # What may start now; an attempt waiting to retry joins it when its wait is over.
    releases = deque(sorted((t, sid) for sid, s in by_id.items() for t in s.due_in if t > 0))
    held = Counter(sid for _, sid in releases)
    startable = {sid: s.waiting - held[sid] for sid, s in by_id.items()}
    served = Served(last_by_team=dict(last_by_team or {}), last_by_submission={
        s.contender.submission_id: s.last_started for s in submissions if s.last_started is not None})
    running = served.running_by_submission
    team_running = served.running_by_team
    for sid in by_id:
        running[sid] = 0
    endpoint_running: dict[str, int] = {}
    unknown_started: dict[str, bool] = {}
    outcomes = {sid: SimOutcome() for sid in by_id}
    reads = [set(w.queues) for w in workers]
    names = {w.name: i for i, w in enumerate(workers)}
    slots: list[_Slot] = [_Slot(worker=i) for i, w in enumerate(workers) for _ in range(max(0, w.slots))]
    free_of = {i: [s for s in slots if s.worker == i] for i in range(len(workers))}

    def start(slot: _Slot, sid: int, seconds: float, now: float, *, new: bool = True) -> None:
        s = by_id[sid]
        slot.submission, slot.busy_until = sid, now + seconds
        running[sid] += 1
        team_running[s.contender.team_id] = team_running.get(s.contender.team_id, 0) + 1
        if new:  # started in the simulation, not one running already
            served.last_by_team[s.contender.team_id] = now
            served.last_by_submission[sid] = now
        if s.contender.endpoint:
            endpoint_running[s.contender.endpoint] = endpoint_running.get(s.contender.endpoint, 0) + 1

    # Attempts running now take a slot of their own worker, or one of their own.
    for s in submissions:
        for left, on in zip(s.running_left, s.running_on or [""] * len(s.running_left), strict=False):
            index = names.get(on, -1)
            slot = next((x for x in free_of.get(index, []) if x.submission is None), None)
            if slot is None:
                slot = _Slot(worker=-1)
                slots.append(slot)
            start(slot, s.contender.submission_id, max(0.0, left), 0.0, new=False)
            if s.per_attempt is None:
                unknown_started[s.queue] = True

    on_queue: dict[str, list[int]] = {}
    for s in submissions:
        on_queue.setdefault(s.queue, []).append(s.contender.submission_id)

    def pick(worker: int) -> int | None:
        ready = [by_id[sid].contender for queue in reads[worker] for sid in on_queue.get(queue, ())
                 if startable[sid] > 0 and _room(by_id[sid].contender)]
        return min(ready, key=served.key).submission_id if ready else None

    def _room(contender: Contender) -> bool:
        if not contender.endpoint:
            return True
        limit = (endpoint_limits or {}).get(contender.endpoint, endpoint_limit)
        return limit <= 0 or endpoint_running.get(contender.endpoint, 0) < limit

    now = 0.0
    for _ in range(MAX_EVENTS):
        while releases and releases[0][0] <= now:
            startable[releases.popleft()[1]] += 1
        # Attempts ending now free their slots (and their team's and endpoint's places).
        for slot in slots:
            if slot.submission is not None and slot.busy_until <= now:
                s = by_id[slot.submission]
                running[slot.submission] -= 1
                team_running[s.contender.team_id] -= 1
                if s.contender.endpoint:
                    endpoint_running[s.contender.endpoint] -= 1
                if running[slot.submission] == 0 and waiting[slot.submission] == 0:
                    outcomes[slot.submission].finish = now
                slot.submission = None
        # A submission with nothing left and nothing running is done (e.g. all its attempts took 0 s).
        for sid in by_id:
            if outcomes[sid].finish is None and waiting[sid] == 0 and running[sid] == 0:
                outcomes[sid].finish = now
        for slot in slots:
            if slot.submission is not None or slot.worker < 0:
                continue
            chosen = pick(slot.worker)
            if chosen is None:
                continue
            s = by_id[chosen]
            waiting[chosen] -= 1
            startable[chosen] -= 1
            if s.per_attempt is None:
                unknown_started[s.queue] = True
            start(slot, chosen, s.per_attempt or 0.0, now)
        busy = [slot.busy_until for slot in slots if slot.submission is not None]
        for sid, s in by_id.items():
            if outcomes[sid].finish is None and unknown_started.get(s.queue):
                outcomes[sid].at_least = True
        if not busy and not releases:
            break
        later = [t for t in busy if t > now]
        if len(later) < len(busy):  # an attempt started at this instant took 0 s: go round again now
            continue
        now = min(later + [releases[0][0]] if releases else later)
    else:
        _rest_in_bulk(by_id, waiting, running, outcomes, workers, now)
    return outcomes


#: Instants the simulation plays one by one; a longer backlog (a few full-set runs) is finished in bulk.
MAX_EVENTS = 5_000


def _rest_in_bulk(by_id: Mapping[int, SimSubmission], waiting: Mapping[int, int], running: Mapping[int, int],
                  outcomes: dict[int, SimOutcome], workers: Sequence[SimWorker], now: float) -> None:
    """Finish what the event cap left: each queue's remaining work, in fair order, over its slots.

    Coarser than the round-robin it stands in for (it serves each submission to its end before the
    next), so it only ever decides the last, longest estimates of a very deep queue.
    """
    slots_of: dict[str, float] = {}
    for w in workers:
        for queue in w.queues:
            # A worker reading several queues shares its slots between them.
            slots_of[queue] = slots_of.get(queue, 0.0) + w.slots / max(1, len(w.queues))
    left = [s for sid, s in by_id.items() if outcomes[sid].finish is None]
    done: dict[str, float] = {}
    for s in fair_order([s.contender for s in left], Served()):
        sim = by_id[s.submission_id]
        slots = slots_of.get(sim.queue, 0.0)
        if slots <= 0:
            continue
        work = (waiting[s.submission_id] + running[s.submission_id]) * (sim.per_attempt or 0.0)
        done[sim.queue] = done.get(sim.queue, now) + work / slots
        outcomes[s.submission_id].finish = done[sim.queue]
