"""A user's own quota, across every team they belong to.

A team's quota alone would let one person multiply it by making teams: every submission also
counts against the user who started it (``Submission.created_by``), whichever team it is for, with
per-user limits that default to a team's. A team the operators granted more (its own quota) lets
its members use that much there: the user's limit is never tighter than the team's it submits to.
"""
from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from submissions.models import Submission
from submissions.quotas import QuotaStatus, counting, quota_of

ACTIVE = [Submission.Status.QUEUED, Submission.Status.RUNNING]
#: A team's (total, per day, at once) limits.
QuotaLimits = tuple[int, int, int]


def user_counted_submissions(user_id: int) -> QuerySet[Submission]:
    """The user's submissions that count, by the team quota's rule: scored, or waiting or running."""
    return counting(Submission.objects.filter(created_by_id=user_id))


def user_quota_refusal(user_id: int, *, team_limits: QuotaLimits = (0, 0, 0), excluding: Submission | None = None,
                       now: datetime | None = None) -> str:
    """Why the user may start no new work now, on any of their teams, or "" if they may.
    ``team_limits`` (total, per day, at once) are those of the team the work is for."""
    now = now or timezone.now()
    counted = user_counted_submissions(user_id)
    if excluding is not None:
        counted = counted.exclude(id=excluding.id)
    total = max(settings.MAGEBENCH_QUOTA_PER_USER_TOTAL, team_limits[0])
    if counted.count() >= total:
        return f"you have used your {total} submissions in total, across all your teams"
    per_day = max(settings.MAGEBENCH_QUOTA_PER_USER_PER_DAY, team_limits[1])
    window = counted.filter(created_at__gt=now - timedelta(days=1))
    if window.count() >= per_day:
        oldest = window.order_by("created_at").values_list("created_at", flat=True).first()
        when = timezone.localtime(oldest + timedelta(days=1)).strftime("%Y-%m-%d %H:%M %Z") if oldest else "later"
        return (f"you have used your {per_day} submissions of the last 24 hours, across all your teams; "
                f"the next frees up at {when}")
    concurrent = max(settings.MAGEBENCH_QUOTA_PER_USER_CONCURRENT, team_limits[2])
    if counted.filter(status__in=ACTIVE).count() >= concurrent:
        return (f"you already have {concurrent} submissions waiting or running, across all your teams; "
                "wait for one to finish")
    return ""


def user_quota_status(user_id: int, *, now: datetime | None = None) -> QuotaStatus:
    """The user's own use across all their teams, against the per-user limits (a team granted more
    lifts them for its own submissions, as :func:`user_quota_refusal` does)."""
    counted = user_counted_submissions(user_id)
    return quota_of(counted, now=now, per_day_limit=settings.MAGEBENCH_QUOTA_PER_USER_PER_DAY,
                    total_limit=settings.MAGEBENCH_QUOTA_PER_USER_TOTAL,
                    concurrent_limit=settings.MAGEBENCH_QUOTA_PER_USER_CONCURRENT,
                    concurrent_used=counted.filter(status__in=ACTIVE).count())
