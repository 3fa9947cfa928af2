"""Fair scheduling: the order in which waiting attempts are served, and a forward simulation of it.

The dispatcher (engine.attempt_run_next) and the time-left estimates (progress_selectors.queue_list) both
rank waiting work with ``fair_key``, so an estimate follows the very order the workers serve in.
Nothing here reads the database: callers hand over plain values.
"""
from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from submissions.fair_share import Backlog, finish_in_shares


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


def longest_first(seconds: Mapping[int, float]) -> dict[int, int]:
    """The rank of each scenario with an estimated time among one submission's due attempts: 1 for
    the longest, then shorter (ties by scenario id).

    The fair order picks the submission; this picks which of its attempts goes, so that the longest
    do not start last and run alone at the end while other slots idle (longest first is the classic
    list-scheduling remedy). A scenario with no estimate has no rank and goes before every ranked one
    (the claim sorts it as 0): most likely it is new, and measuring it early both avoids its ending a
    run alone and gives the rest of the run an estimate. Among equal ranks the attempts' creation
    order stands, which keeps a scenario's repeats together and in order.
    """
    ordered = sorted(seconds, key=lambda scenario_id: (-seconds[scenario_id], scenario_id))
    return {scenario_id: rank for rank, scenario_id in enumerate(ordered, start=1)}


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
             endpoint_limits: Mapping[tuple[int, str], int] | None = None,
             url_ceiling: int = 0) -> dict[int, SimOutcome]:
    """Play the fair policy forward from now and say when each submission would finish.

    Each free slot of a worker takes the first contender by ``fair_key`` among the queues that
    worker reads, as the dispatcher does; a contender is skipped while its team's attempts on its
    endpoint are at the team's limit (``endpoint_limits``' value for that team and URL, else
    ``endpoint_limit``), or every team's there at ``url_ceiling`` (0: none). Attempts running now keep their
    slot until their time is up; one running on a worker not listed holds a slot of its own.
    ``last_by_team`` and each submission's ``last_started`` are in seconds from now (negative).
    """
    return _Simulation(submissions, workers, endpoint_limit=endpoint_limit, last_by_team=last_by_team,
                       endpoint_limits=endpoint_limits, url_ceiling=url_ceiling).run()


class _Simulation:
    """The state of one ``simulate`` call: who waits, who runs where, and until when."""

    def __init__(self, submissions: Sequence[SimSubmission], workers: Sequence[SimWorker], *,
                 endpoint_limit: int, last_by_team: Mapping[int, float] | None,
                 endpoint_limits: Mapping[tuple[int, str], int] | None, url_ceiling: int = 0) -> None:
        self.workers = workers
        self.endpoint_limit = endpoint_limit
        self.endpoint_limits = endpoint_limits or {}
        self.url_ceiling = url_ceiling
        self.by_id = {s.contender.submission_id: s for s in submissions}
        self.waiting = {sid: s.waiting for sid, s in self.by_id.items()}
        # What may start now; an attempt waiting to retry joins it when its wait is over.
        self.releases = deque(sorted((t, sid) for sid, s in self.by_id.items() for t in s.due_in if t > 0))
        held = Counter(sid for _, sid in self.releases)
        self.startable = {sid: s.waiting - held[sid] for sid, s in self.by_id.items()}
        self.served = Served(last_by_team=dict(last_by_team or {}), last_by_submission={
            s.contender.submission_id: s.last_started for s in submissions if s.last_started is not None})
        # The fair order reads these two through ``served``, so they are the same dictionaries.
        self.running = self.served.running_by_submission
        self.team_running = self.served.running_by_team
        for sid in self.by_id:
            self.running[sid] = 0
        self.endpoint_running: dict[str, int] = {}
        self.team_endpoint_running: dict[tuple[int, str], int] = {}
        self.unknown_started: dict[str, bool] = {}
        self.outcomes = {sid: SimOutcome() for sid in self.by_id}
        self.reads = [set(w.queues) for w in workers]
        self.slots = [_Slot(worker=i) for i, w in enumerate(workers) for _ in range(max(0, w.slots))]
        self.on_queue: dict[str, list[int]] = {}
        for s in submissions:
            self.on_queue.setdefault(s.queue, []).append(s.contender.submission_id)
        self._seat_running(submissions)

    def _seat_running(self, submissions: Sequence[SimSubmission]) -> None:
        """Attempts running now take a slot of their own worker, or one of their own."""
        names = {w.name: i for i, w in enumerate(self.workers)}
        free_of = {i: [s for s in self.slots if s.worker == i] for i in range(len(self.workers))}
        for s in submissions:
            for left, on in zip(s.running_left, s.running_on or [""] * len(s.running_left), strict=False):
                slot = next((x for x in free_of.get(names.get(on, -1), []) if x.submission is None), None)
                if slot is None:
                    slot = _Slot(worker=-1)
                    self.slots.append(slot)
                self._start(slot, s.contender.submission_id, max(0.0, left), 0.0, new=False)
                if s.per_attempt is None:
                    self.unknown_started[s.queue] = True

    def _start(self, slot: _Slot, sid: int, seconds: float, now: float, *, new: bool = True) -> None:
        contender = self.by_id[sid].contender
        slot.submission, slot.busy_until = sid, now + seconds
        self.running[sid] += 1
        self.team_running[contender.team_id] = self.team_running.get(contender.team_id, 0) + 1
        if new:  # started in the simulation, not one running already
            self.served.last_by_team[contender.team_id] = now
            self.served.last_by_submission[sid] = now
        if contender.endpoint:
            self.endpoint_running[contender.endpoint] = self.endpoint_running.get(contender.endpoint, 0) + 1
            key = (contender.team_id, contender.endpoint)
            self.team_endpoint_running[key] = self.team_endpoint_running.get(key, 0) + 1

    def run(self) -> dict[int, SimOutcome]:
        now = 0.0
        for _ in range(MAX_EVENTS):
            self._release(now)
            self._end_attempts(now)
            self._finish_idle(now)
            self._fill_slots(now)
            self._mark_lower_bounds()
            following = self._next_instant(now)
            if following is None:
                break
            now = following
        else:
            self._rest_in_shares(now)
        return self.outcomes

    def _release(self, now: float) -> None:
        while self.releases and self.releases[0][0] <= now:
            self.startable[self.releases.popleft()[1]] += 1

    def _end_attempts(self, now: float) -> None:
        """Attempts ending now free their slots (and their team's and endpoint's places)."""
        for slot in self.slots:
            if slot.submission is None or slot.busy_until > now:
                continue
            sid = slot.submission
            contender = self.by_id[sid].contender
            self.running[sid] -= 1
            self.team_running[contender.team_id] -= 1
            if contender.endpoint:
                self.endpoint_running[contender.endpoint] -= 1
                self.team_endpoint_running[(contender.team_id, contender.endpoint)] -= 1
            if self.running[sid] == 0 and self.waiting[sid] == 0:
                self.outcomes[sid].finish = now
            slot.submission = None

    def _finish_idle(self, now: float) -> None:
        """A submission with nothing left and nothing running is done (e.g. all its attempts took 0 s)."""
        for sid in self.by_id:
            if self.outcomes[sid].finish is None and self.waiting[sid] == 0 and self.running[sid] == 0:
                self.outcomes[sid].finish = now

    def _fill_slots(self, now: float) -> None:
        for slot in self.slots:
            if slot.submission is not None or slot.worker < 0:
                continue
            chosen = self._pick(slot.worker)
            if chosen is None:
                continue
            s = self.by_id[chosen]
            self.waiting[chosen] -= 1
            self.startable[chosen] -= 1
            if s.per_attempt is None:
                self.unknown_started[s.queue] = True
            self._start(slot, chosen, s.per_attempt or 0.0, now)

    def _pick(self, worker: int) -> int | None:
        ready = [self.by_id[sid].contender for queue in self.reads[worker] for sid in self.on_queue.get(queue, ())
                 if self.startable[sid] > 0 and self._room(self.by_id[sid].contender)]
        return min(ready, key=self.served.key).submission_id if ready else None

    def _room(self, contender: Contender) -> bool:
        if not contender.endpoint:
            return True
        key = (contender.team_id, contender.endpoint)
        limit = self.endpoint_limits.get(key, self.endpoint_limit)
        if 0 < limit <= self.team_endpoint_running.get(key, 0):
            return False
        return self.url_ceiling <= 0 or self.endpoint_running.get(contender.endpoint, 0) < self.url_ceiling

    def _rest_in_shares(self, now: float) -> None:
        """Finish what the cap on instants left: each queue's work left, as fair shares of its slots."""
        left = [sid for sid in self.by_id if self.outcomes[sid].finish is None]
        backlogs = [self._backlog(sid, now, left) for sid in left]
        for sid, at in finish_in_shares(backlogs, self._slots_per_queue(), now).items():
            self.outcomes[sid].finish = at
        unknown = {self.by_id[sid].queue for sid in left if self.by_id[sid].per_attempt is None}
        for sid in left:
            self.outcomes[sid].at_least |= self.by_id[sid].queue in unknown

    def _backlog(self, sid: int, now: float, left: Sequence[int]) -> Backlog:
        s = self.by_id[sid]
        contender, seconds = s.contender, s.per_attempt or 0.0
        running = sum(max(0.0, slot.busy_until - now) for slot in self.slots if slot.submission == sid)
        cap = math.inf
        if contender.endpoint:
            limit = self.endpoint_limits.get((contender.team_id, contender.endpoint), self.endpoint_limit)
            sharing = sum(1 for other in left if self.by_id[other].contender.team_id == contender.team_id
                          and self.by_id[other].contender.endpoint == contender.endpoint)
            cap = limit / sharing if limit > 0 else math.inf
        released = max((t for t, other in self.releases if other == sid), default=0.0)
        return Backlog(submission_id=sid, team_id=contender.team_id, baseline=contender.baseline,
                       order=fair_key(contender, team_running=0, submission_running=0), queue=s.queue,
                       work=self.waiting[sid] * seconds + running, per_attempt=seconds, cap=cap,
                       not_before=released + seconds if released else 0.0)

    def _slots_per_queue(self) -> dict[str, float]:
        # A worker reading several queues shares its slots between them.
        slots: dict[str, float] = {}
        for w in self.workers:
            for queue in w.queues:
                slots[queue] = slots.get(queue, 0.0) + max(0, w.slots) / max(1, len(w.queues))
        return slots

    def _mark_lower_bounds(self) -> None:
        for sid, s in self.by_id.items():
            if self.outcomes[sid].finish is None and self.unknown_started.get(s.queue):
                self.outcomes[sid].at_least = True

    def _next_instant(self, now: float) -> float | None:
        """When something next happens; ``now`` again when an attempt started now took 0 s; None: nothing will."""
        busy = [slot.busy_until for slot in self.slots if slot.submission is not None]
        if not busy and not self.releases:
            return None
        later = [t for t in busy if t > now]
        if len(later) < len(busy):
            return now
        return min(later + [self.releases[0][0]] if self.releases else later)


#: Instants the simulation plays one by one; a longer backlog (a few full-set runs) is finished as
#: fair shares of each queue's slots (``fair_share``).
MAX_EVENTS = 5_000
