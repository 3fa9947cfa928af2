"""The long tail of the time-left simulation: what is left of a deep queue, played as fair shares.

``scheduling.simulate`` plays each attempt one by one up to a cap of instants; past it, the rest of
each queue is finished here in one pass of rates rather than attempt by attempt. It must keep the
fair order's interleaving, or a deep queue's first submissions read as if they had every slot to
themselves: the teams on a queue take turns (the team with the fewest running goes next), so when
there are at least as many slots as teams each team holds an equal number of them, and the slots
left over go round the teams turn by turn, one attempt each (a team with longer attempts then
holds them longer). The same split is made between a team's submissions. A team's endpoint limit
caps what it may hold, and what it cannot use goes to the others; baseline runs take only what the
teams leave, one run after another in the fair order.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any


@dataclass
class Backlog:
    """One submission's work left when the attempt-by-attempt play stops."""

    submission_id: int
    team_id: int
    #: The platform's own run: served only with what the teams leave.
    baseline: bool
    #: Its place among baseline runs (the fair key with nothing running).
    order: tuple[Any, ...]
    queue: str
    #: Seconds of work left: its waiting attempts' and what its running ones still have to run.
    work: float
    #: Seconds per attempt (0 when nothing has been observed: its work then counts as nothing).
    per_attempt: float
    #: The most attempts it may run at once (its share of its team's endpoint limit); inf: no limit.
    cap: float = math.inf
    #: It may not finish before this (its last attempt waiting to retry is released then, and runs).
    not_before: float = 0.0


def split(capacity: float, members: Sequence[tuple[int, float, float]]) -> dict[int, float]:
    """Slots each member holds on average, from ``(key, seconds per attempt, cap)``.

    Whole slots are shared equally; the ones left over go round by turns, one attempt each, so a
    member holds them in proportion to its attempts' length. A member capped below its share keeps
    its cap and the others share the rest.
    """
    shares: dict[int, float] = {}
    open_ = list(members)
    while open_ and capacity > 1e-12:
        each = math.floor(capacity / len(open_) + 1e-9)
        rest = capacity - each * len(open_)
        lengths = sum(seconds for _, seconds, _ in open_)
        wanted = {key: each + (rest * seconds / lengths if lengths > 0 else rest / len(open_))
                  for key, seconds, _ in open_}
        capped = [(key, cap) for key, _, cap in open_ if cap < wanted[key]]
        if not capped:
            shares.update(wanted)
            break
        for key, cap in capped:
            shares[key] = cap
            capacity -= cap
        open_ = [m for m in open_ if m[0] not in dict(capped)]
    return shares


def _team_rates(left: Sequence[Backlog], capacity: float) -> tuple[dict[int, float], float]:
    """Slots per submission of the teams on one queue, and the slots they leave unused."""
    teams: dict[int, list[Backlog]] = {}
    for b in left:
        teams.setdefault(b.team_id, []).append(b)
    team_share = split(capacity, [(team, sum(b.per_attempt for b in subs) / len(subs), sum(b.cap for b in subs))
                                  for team, subs in teams.items()])
    rates: dict[int, float] = {}
    for team, subs in teams.items():
        rates |= split(team_share.get(team, 0.0),
                       [(b.submission_id, b.per_attempt, b.cap) for b in subs])
    return rates, max(0.0, capacity - sum(rates.values()))


def _rates(left: Sequence[Backlog], capacity: float) -> dict[int, float]:
    """Slots each submission left on one queue holds now: teams first, then baselines in order."""
    rates, spare = _team_rates([b for b in left if not b.baseline], capacity)
    for b in sorted((b for b in left if b.baseline), key=lambda b: b.order):
        rates[b.submission_id] = min(spare, b.cap)
        spare -= rates[b.submission_id]
    return rates


def finish_in_shares(backlogs: Sequence[Backlog], capacity: Mapping[str, float], now: float) -> dict[int, float]:
    """When each submission would finish, playing each queue's work left as fair shares of its slots.

    A submission on a queue without slots has no finish (absent from the answer).
    """
    finish: dict[int, float] = {}
    for queue in {b.queue for b in backlogs}:
        slots = capacity.get(queue, 0.0)
        if slots <= 0:
            continue
        left = [replace(b) for b in backlogs if b.queue == queue]
        t = now
        while left:
            done = [b for b in left if b.work <= 1e-9]
            rates = _rates([b for b in left if b.work > 1e-9], slots)
            moving = {sid: r for sid, r in rates.items() if r > 1e-12}
            if not done and not moving:
                break  # nothing can move (every endpoint at a limit of 0): no finish
            step = min((b.work / moving[b.submission_id] for b in left
                        if b.submission_id in moving), default=0.0) if not done else 0.0
            t += step
            for b in left:
                b.work -= step * moving.get(b.submission_id, 0.0)
            for b in [b for b in left if b.work <= 1e-9]:
                finish[b.submission_id] = max(t, b.not_before)
            left = [b for b in left if b.work > 1e-9]
    return finish
