"""A team's quota: which of its submissions count, and how much of each limit they use.

The same arithmetic serves the per-user quota (``submissions.user_quota``), which counts a user's
submissions across every team instead of one team's.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Exists, Min, OuterRef, Q, QuerySet
from django.utils import timezone

from accounts.models import Team
from submissions.models import Attempt, Submission


@dataclass(frozen=True)
class QuotaStatus:
    per_day_limit: int
    per_day_used: int
    #: When the oldest submission of the last 24 hours leaves the window (None: nothing counted).
    per_day_resets_at: datetime | None
    total_limit: int
    total_used: int
    concurrent_limit: int
    concurrent_used: int

    @property
    def per_day_left(self) -> int:
        return max(0, self.per_day_limit - self.per_day_used)

    @property
    def total_left(self) -> int:
        return max(0, self.total_limit - self.total_used)

    @property
    def concurrent_left(self) -> int:
        return max(0, self.concurrent_limit - self.concurrent_used)

    def refusal(self) -> str:
        """Why a new submission is refused now, or "" if it is allowed."""
        if self.total_left == 0:
            return f"the team has used its {self.total_limit} submissions in total"
        if self.per_day_left == 0:
            when = (timezone.localtime(self.per_day_resets_at).strftime("%Y-%m-%d %H:%M %Z")
                    if self.per_day_resets_at else "later")
            return (f"the team has used its {self.per_day_limit} submissions of the last 24 hours; "
                    f"the next frees up at {when}")
        if self.concurrent_left == 0:
            return (f"the team already has {self.concurrent_limit} submissions waiting or running; "
                    "wait for one to finish")
        return ""


def counted_submissions(team: Team) -> QuerySet[Submission]:
    """The team's submissions that count against its quota.

    A submission that finished with no scored attempt (every attempt failed for infrastructure
    reasons, or it was cancelled before any was scored) does not count: only the platform's or the
    endpoint's failure, or a withdrawal, left it empty. Baselines are the platform's own runs.
    """
    return counting(Submission.objects.filter(team=team))


def counting(submissions: QuerySet[Submission]) -> QuerySet[Submission]:
    """Those of ``submissions`` a quota counts: not baselines, and scored or waiting or running."""
    scored = Attempt.objects.filter(submission=OuterRef("pk"), status=Attempt.Status.SCORED)
    return (submissions.filter(is_baseline=False)
            .annotate(has_score=Exists(scored))
            .filter(Q(has_score=True) | Q(status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING])))


def quota_status(team: Team, *, now: datetime | None = None, excluding: Submission | None = None) -> QuotaStatus:
    """The team's quota use, leaving out ``excluding`` (a submission about to be counted again)."""
    counted = counted_submissions(team)
    if excluding is not None:
        counted = counted.exclude(id=excluding.id)
    return quota_of(
        counted, now=now,
        per_day_limit=team.quota_per_day if team.quota_per_day is not None else settings.MAGEBENCH_QUOTA_PER_DAY,
        total_limit=team.quota_total if team.quota_total is not None else settings.MAGEBENCH_QUOTA_TOTAL,
        concurrent_limit=(team.quota_concurrent if team.quota_concurrent is not None
                          else settings.MAGEBENCH_QUOTA_CONCURRENT),
        concurrent_used=Submission.objects.filter(team=team, is_baseline=False, status__in=[
            Submission.Status.QUEUED, Submission.Status.RUNNING]).count(),
    )


def quota_of(counted: QuerySet[Submission], *, now: datetime | None, per_day_limit: int, total_limit: int,
             concurrent_limit: int, concurrent_used: int) -> QuotaStatus:
    """The use of ``counted`` (the submissions a quota counts) against its limits."""
    now = now or timezone.now()
    # One pass: every submission checked takes a look at its attempts (``counting``), which each of
    # three separate queries would take again, inside the lock that holds the team's other submits.
    in_window = Q(created_at__gt=now - timedelta(days=1))
    used = counted.aggregate(total=Count("id"), per_day=Count("id", filter=in_window),
                             oldest=Min("created_at", filter=in_window))
    oldest = used["oldest"]
    return QuotaStatus(
        per_day_limit=per_day_limit, per_day_used=used["per_day"],
        per_day_resets_at=oldest + timedelta(days=1) if oldest else None,
        total_limit=total_limit, total_used=used["total"],
        concurrent_limit=concurrent_limit, concurrent_used=concurrent_used,
    )
