"""Server-rendered pages: submit, queue, submission, replay."""
from __future__ import annotations

from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from submissions.forms import EndpointSubmissionForm
from submissions.models import Attempt, Submission
from submissions.selectors import (attempt_artifact, attempt_frame_path, attempt_trace_path, attempt_trajectory, queue_item,
                                   queue_list, scenario_rows, submission_attempts, submission_progress)
from submissions.services import (SubmissionError, model_entry_upsert, submission_cancel,
                                  submission_create_endpoint, submission_rerun, submission_resume,
                                  team_get_or_create)


def submit(request: HttpRequest) -> HttpResponse:
    form = EndpointSubmissionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            team = team_get_or_create(name=data["team"])
            model = model_entry_upsert(team=team, name=data["model_name"], organisation=data["organisation"],
                                       parameter_count=data["parameter_count"], open_weights=data["open_weights"],
                                       link=data["link"], licence=data["licence"])
            submission = submission_create_endpoint(
                model=model, env=data["env"], flow=data["flow"], subset=data["subset"],
                endpoint_url=data["endpoint_url"], endpoint_model=data["endpoint_model"], api_key=data["api_key"],
                settings={k: data[k] for k in ("repeats", "temperature", "max_tokens") if data[k] is not None}
                | ({"no_system_role": True} if data["no_system_role"] else {})
                | ({"observation_images": False} if data["text_only"] else {}),
            )
        except SubmissionError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Submission #{submission.id} queued with {submission.attempts.count()} attempts.")
            return redirect("submission-detail", submission_id=submission.id)
    return render(request, "submissions/submit.html", {"form": form})


def queue(request: HttpRequest) -> HttpResponse:
    return render(request, "submissions/queue.html", {"items": queue_list()})


def submission_detail(request: HttpRequest, submission_id: int) -> HttpResponse:
    submission = get_object_or_404(Submission.objects.select_related("model", "team", "environment"), id=submission_id)
    attempts = list(submission_attempts(submission))
    return render(request, "submissions/detail.html", {
        "submission": submission, "progress": submission_progress(submission), "attempts": attempts,
        "queue_item": queue_item(submission) if submission.is_active else None,
        "scenarios": scenario_rows(attempts),
    })


@require_POST
def submission_action(request: HttpRequest, submission_id: int, action: str) -> HttpResponse:
    submission = get_object_or_404(Submission, id=submission_id)
    if action == "cancel":
        submission_cancel(submission=submission)
        messages.info(request, "Submission cancelled; running attempts stop at their next step.")
    elif action == "resume":
        submission_resume(submission=submission)
        messages.info(request, "Unscored attempts queued again.")
    elif action == "rerun":
        try:
            rerun = submission_rerun(submission=submission)
        except SubmissionError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Re-run queued as submission #{rerun.id}; this one is kept.")
            return redirect("submission-detail", submission_id=rerun.id)
    else:
        raise Http404("unknown action")
    return redirect("submission-detail", submission_id=submission.id)


def attempt_replay(request: HttpRequest, attempt_id: int) -> HttpResponse:
    attempt = get_object_or_404(Attempt.objects.select_related("submission__model", "scenario"), id=attempt_id)
    trajectory = attempt_trajectory(attempt)
    artifacts = (trajectory or {}).get("artifacts") or {}
    football = None
    if isinstance(artifacts, dict) and artifacts.get("kind") == "football":
        football = attempt_artifact(attempt, str(artifacts.get("file") or "football.json"))
    return render(request, "submissions/replay.html",
                  {"attempt": attempt, "trajectory": trajectory, "football": football})


def attempt_frame(request: HttpRequest, attempt_id: int, name: str) -> FileResponse:
    attempt = get_object_or_404(Attempt, id=attempt_id)
    path = attempt_frame_path(attempt, name)
    if path is None:
        raise Http404("no such frame")
    response = FileResponse(path.open("rb"), content_type="image/png")
    response["Cache-Control"] = "public, max-age=86400, immutable"
    return response


def attempt_trace(request: HttpRequest, attempt_id: int) -> FileResponse:
    """The Playwright trace of the generated page's evaluation (open it with `playwright show-trace`)."""
    attempt = get_object_or_404(Attempt, id=attempt_id)
    path = attempt_trace_path(attempt)
    if path is None:
        raise Http404("this attempt has no trace")
    return FileResponse(path.open("rb"), as_attachment=True, filename=f"attempt-{attempt.id}-trace.zip",
                        content_type="application/zip")
