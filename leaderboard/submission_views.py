"""A submission's own page: its attempts, progress and effort beside its place on its board, which
only the boards know; every action on it is the submissions' (``submissions.views``)."""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from accounts.selectors import can_manage_submission, can_publish_submission, request_access, viewable_or_404
from catalogue.prompt_sets import prompt_set_get
from evaluators.base import get_plugin
from leaderboard.attempt_exports import submission_export_links
from leaderboard.selectors import Headline, submission_headline
from leaderboard.selectors.entry_tags import EntryTagTable, entry_tag_tables
from submissions.effort import submission_effort
from submissions.endpoint_privacy import can_see_endpoint, endpoint_marks, struck
from submissions.models import Submission
from submissions.progress_selectors import QueueItem, queue_item, submission_progress
from submissions.selectors import scenario_rows, submission_attempts


def _prompts_of(submission: Submission) -> dict[str, Any]:
    """The prompt set the submission froze: its version, and its texts where the catalogue holds them."""
    # Read as stored: the page shows whatever a row froze, even settings today's rules would refuse.
    version = str(submission.settings.get("prompt_version")
                  or get_plugin(submission.environment_id).prompts(submission.flow).version)
    return {"version": version, "set": prompt_set_get(submission.environment_id, submission.suite, submission.flow,
                                                      version)}


#: Settings of the requests the platform sends a model: an upload's replies were generated elsewhere,
#: so for an upload they record only the platform's defaults and are not shown.
REQUEST_SETTINGS = frozenset({"temperature", "top_p", "frequency_penalty", "max_tokens", "parse_retries",
                              "no_system_role", "png_image_label", "max_image", "max_memory",
                              "observation_images", "token_limit_parameter", "omit_parameters", "extra_body"})


def _applied_settings(submission: Submission) -> dict[str, Any]:
    """The settings that applied to the submission's runs, as its page lists them."""
    shown = submission.shown_settings
    if submission.source != Submission.Source.UPLOAD:
        return shown
    return {name: value for name, value in shown.items()
            if name not in REQUEST_SETTINGS and name != "missing_scenarios"}


def _diagnostics(submission: Submission, headline: Headline) -> dict[str, Any]:
    """What the board shows of the entry beside its score (IA/RA %, the lost-score bar) and its row of
    the analysis's tag tables; nothing where the entry is not on its board."""
    try:
        plugin = get_plugin(submission.environment_id)
    except KeyError:
        return {"action_diagnostics": False, "breakdown": False, "tags": []}
    place = headline.place
    tags: list[EntryTagTable] = entry_tag_tables(submission, place) if place and place.mean is not None else []
    return {"action_diagnostics": plugin.has_action_diagnostics, "breakdown": bool(plugin.breakdown_keys),
            "tags": tags}


def _queue_item_for(submission: Submission, marks: list[tuple[str, str]]) -> QueueItem | None:
    item = queue_item(submission)
    if item is not None:
        item.last_error = struck(item.last_error, marks)
    return item


def submission_detail(request: HttpRequest, submission_id: int) -> HttpResponse:
    access = request_access(request)
    submission = get_object_or_404(Submission.objects.select_related("model", "team", "environment"), id=submission_id)
    viewable_or_404(access, submission)
    attempts = list(submission_attempts(submission))
    marks = [] if can_see_endpoint(access, submission) else endpoint_marks(submission)
    for attempt in attempts:  # shown, never saved: outside the team the endpoint is struck out
        attempt.error_message = struck(attempt.error_message, marks)
    submission.status_reason = struck(submission.status_reason, marks)
    progress = submission_progress(submission)
    headline = submission_headline(submission, access.team_ids)
    return render(request, "submissions/detail.html", {
        "submission": submission, "progress": progress, "attempts": attempts,
        "headline": headline, "diagnostics": _diagnostics(submission, headline),
        "applied_settings": _applied_settings(submission),
        "can_resume": progress.resumable(active=submission.is_active),
        "queue_item": _queue_item_for(submission, marks) if submission.is_active else None,
        "scenarios": scenario_rows(attempts), "effort": submission_effort(submission, attempts),
        "prompts": _prompts_of(submission),
        "can_manage": can_manage_submission(access, submission),
        "can_see_endpoint": can_see_endpoint(access, submission),
        "can_publish": can_publish_submission(access, submission) and not submission.is_public,
        "export_links": submission_export_links(submission),
    })
