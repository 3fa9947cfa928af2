"""A submission's own page: its attempts, progress and effort beside its place on its board, which
only the boards know; every action on it is the submissions' (``submissions.views``)."""
from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from accounts.selectors import can_manage_submission, can_publish_submission, can_view_submission, request_access
from catalogue.prompt_sets import prompt_set_get
from evaluators.base import get_plugin
from leaderboard.selectors import submission_headline
from submissions.models import Submission
from submissions.selectors import (
    queue_item,
    scenario_rows,
    submission_attempts,
    submission_effort,
    submission_progress,
)


def _prompts_of(submission: Submission) -> dict[str, Any]:
    """The prompt set the submission froze: its version, and its texts where the catalogue holds them."""
    # Read as stored: the page shows whatever a row froze, even settings today's rules would refuse.
    version = str(submission.settings.get("prompt_version")
                  or get_plugin(submission.environment_id).prompts(submission.flow).version)
    return {"version": version, "set": prompt_set_get(submission.environment_id, submission.suite, submission.flow,
                                                      version)}


def submission_detail(request: HttpRequest, submission_id: int) -> HttpResponse:
    access = request_access(request)
    submission = get_object_or_404(Submission.objects.select_related("model", "team", "environment"), id=submission_id)
    if not can_view_submission(access, submission):
        raise Http404("no such submission")  # a private one is a 404 to outsiders, as if absent
    attempts = list(submission_attempts(submission))
    progress = submission_progress(submission)
    return render(request, "submissions/detail.html", {
        "submission": submission, "progress": progress, "attempts": attempts,
        "headline": submission_headline(submission, access.team_ids),
        "can_resume": progress.resumable(active=submission.is_active),
        "queue_item": queue_item(submission) if submission.is_active else None,
        "scenarios": scenario_rows(attempts), "effort": submission_effort(submission, attempts),
        "prompts": _prompts_of(submission),
        "can_manage": can_manage_submission(access, submission),
        "can_publish": can_publish_submission(access, submission) and not submission.is_public,
    })
