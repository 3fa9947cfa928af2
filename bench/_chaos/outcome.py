"""The stored side of the chaos checks, read with the ORM from the database the run used.

Local runs call :func:`stored_outcome` in their own process; on the compose stack it runs inside the
web container (``python -m bench._chaos.outcome``), which prints it as JSON.
"""
from __future__ import annotations

import json
import os
from typing import Any


def result_fields(submission_id: int) -> dict[str, Any]:
    from django.forms.models import model_to_dict

    from submissions.models import SubmissionResult

    row = SubmissionResult.objects.filter(submission_id=submission_id).first()
    # When it was computed is the one field a rebuild changes.
    return {} if row is None else {k: v for k, v in model_to_dict(row).items()
                                   if k not in ("submission", "computed_at")}


def stored_outcome() -> dict[str, Any]:
    """``{"checks": [[ok, text], ...], "figures": [text, ...], "active": n}``."""
    from django.db.models import Count

    from submissions.models import Attempt, Submission
    from submissions.services import submission_result_rebuild

    checks: list[tuple[bool, str]] = []
    attempts = Attempt.objects.all()
    by_status = dict(attempts.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    figures = [f"submissions: {Submission.objects.count()} "
               f"({dict(Submission.objects.values_list('status').annotate(n=Count('id')).values_list('status', 'n'))})",
               f"attempts: {attempts.count()} by status {by_status}",
               f"attempts that needed more than one try: {attempts.filter(tries__gt=1).count()}; "
               f"most tries {max(attempts.values_list('tries', flat=True), default=0)}"]
    waiting = attempts.filter(status__in=[Attempt.Status.PENDING, Attempt.Status.RETRYING, Attempt.Status.RUNNING])
    checks.append((not waiting.exists(), f"no attempt lost (left waiting or running): {waiting.count()}"))
    scored = attempts.filter(status=Attempt.Status.SCORED)
    wrong_try = [a.id for a in scored.filter(submission__source="endpoint")
                 if not a.trajectory_path.endswith(f"try-{a.tries}")]
    checks.append((not wrong_try,
                   f"every scored endpoint attempt holds its last try's result: {len(wrong_try)} do not"))
    infra_scored = scored.exclude(error_kind="").count()
    failed_with_score = attempts.filter(status=Attempt.Status.INFRA_FAILED, score__isnull=False).count()
    checks.append((infra_scored == 0 and failed_with_score == 0,
                   f"no infrastructure failure scored: {infra_scored} scored with an error, "
                   f"{failed_with_score} failed with a score"))
    finished = list(Submission.objects.filter(status__in=[Submission.Status.COMPLETED, Submission.Status.INCOMPLETE])
                    .values_list("id", flat=True))
    differing = []
    for submission_id in finished:
        before = result_fields(submission_id)
        submission_result_rebuild(submission_id=submission_id)
        if before != result_fields(submission_id):
            differing.append(submission_id)
    checks.append((not differing, f"every board result equals its rebuild from the stored attempts "
                                  f"({len(finished)} submissions): {len(differing)} differ {differing[:10]}"))
    active = sum(1 for s in Submission.objects.all() if s.is_active)
    return {"checks": checks, "figures": figures, "active": active}


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    import django

    django.setup()
    print(json.dumps(stored_outcome()))


if __name__ == "__main__":
    main()
