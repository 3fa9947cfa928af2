"""Server-rendered pages: submit, queue, a submission's actions, replay. The submission's own page shows its
place on its board too, and is the boards' (``leaderboard.submission_views``)."""
from __future__ import annotations

import contextlib
import hashlib
import logging
import math
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.selectors import (
    can_manage_submission,
    can_publish_submission,
    can_view_submission,
    request_access,
    user_teams,
    viewable_or_404,
)
from evaluators.base import ReplayPanel, all_plugins, get_plugin
from evaluators.trajectory import INDEX_NAME, REPLAY_PAGE, document_page
from submissions.endpoint_checks import endpoint_check_create
from submissions.endpoint_privacy import can_see_endpoint, endpoint_marks, for_viewer, struck
from submissions.forms import EndpointSubmissionForm, UploadSubmissionForm
from submissions.models import Attempt, Submission
from submissions.progress_selectors import queue_seen_by, submission_attempt_count, submission_progress
from submissions.quotas import quota_status
from submissions.selectors import (
    attempt_artifact,
    attempt_frame_path,
    attempt_trace_path,
    attempt_trajectory,
    endpoint_check_shown,
    endpoint_check_visible,
    queue_loads,
    trajectory_dir,
    upload_check_shown,
    upload_check_visible,
)
from submissions.services import (
    SubmissionError,
    model_spec_from,
    submission_cancel,
    submission_create_endpoint,
    submission_publish,
    submission_rerun,
    submission_resume,
)
from submissions.upload_checks import upload_check_create, upload_check_is_deferred
from submissions.upload_services import (
    UploadCheck,
    UploadRejected,
    submission_create_upload,
    upload_check,
    upload_read,
)
from submissions.upload_throttle import upload_wait

logger = logging.getLogger(__name__)


@login_required
def submit(request: HttpRequest) -> HttpResponse:
    teams = user_teams(request.user)
    form = EndpointSubmissionForm(request.POST or None, teams=teams)
    check = None
    if request.method == "POST" and "test_endpoint" in request.POST:
        check, refused = _test_call(request, form, teams)
        if request.headers.get("Accept") == "application/json":
            # The page's script: it shows the result in place and keeps what was typed, the key included.
            if check is None:
                return JsonResponse({"message": refused or _form_problems(form)}, status=400)
            return JsonResponse({"id": check.id, "poll": reverse("api-endpoint-check", args=[check.id])},
                                status=202)
    elif request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        team = next(t for t in teams if str(t.id) == data["team"])
        try:
            submission = submission_create_endpoint(
                model=model_spec_from(team=team, data=data, blanks_unchanged=True), env=data["env"],
                flow=data["flow"], subset=data["subset"], endpoint_url=data["endpoint_url"],
                endpoint_model=data["endpoint_model"], api_key=data["api_key"],
                endpoint_concurrency=data["endpoint_concurrency"], settings=form.settings_values(),
                is_public=data["public"], enforce_quota=True, created_by=request.user.pk, prepare_in_worker=True,
            )
        except SubmissionError as exc:
            form.add_error(None, str(exc))
        else:
            count = submission_attempt_count(submission)
            messages.success(request, f"Submission #{submission.id} queued with {count} attempts.")
            return redirect("submission-detail", submission_id=submission.id)
    return render(request, "submissions/submit.html", {
        "form": form, "teams": teams, "quotas": [(team, quota_status(team)) for team in teams], "check": check})


def _form_problems(form: EndpointSubmissionForm) -> str:
    """The form's errors on one line, each after its field's label."""
    problems = []
    for name, errors in form.errors.get_json_data().items():
        words = " ".join(str(error["message"]) for error in errors)
        label = form.fields[name].label if name in form.fields else None
        problems.append(f"{label or name}: {words}" if name != "__all__" else words)
    return "; ".join(problems)


def _test_call(request: HttpRequest, form: EndpointSubmissionForm, teams: Any) -> tuple[Any, str]:
    """Start a test call of the form's endpoint: the check, or None and why not (also on the form)."""
    if not form.valid_for_test_call():
        return None, ""
    data = form.cleaned_data
    team = next(t for t in teams if str(t.id) == data["team"])
    try:
        check = endpoint_check_create(
            team=team, env=data["env"], flow=data["flow"], subset=data["subset"], endpoint_url=data["endpoint_url"],
            endpoint_model=data["endpoint_model"], api_key=data["api_key"], settings=form.settings_values(),
            created_by=request.user.pk)
    except SubmissionError as exc:
        form.add_error(None, str(exc))
        return None, str(exc)
    return check, ""


@login_required
def endpoint_check_page(request: HttpRequest, check_id: int) -> HttpResponse:
    """A test call's result without script: the page reloads itself until the call is finished."""
    check = endpoint_check_visible(request_access(request).team_ids, check_id)
    if check is None:
        raise Http404("no such endpoint check")
    return render(request, "submissions/endpoint_check.html", {"check": endpoint_check_shown(check)})


@login_required
def upload(request: HttpRequest) -> HttpResponse:
    teams = user_teams(request.user)
    form = UploadSubmissionForm(request.POST or None, request.FILES or None, teams=teams)
    problems: list[str] = []
    check: UploadCheck | None = None
    wait = upload_wait(request) if request.method == "POST" else None
    if wait is not None:
        form.add_error(None, f"you have sent too many files for now (uploads and checks count together); "
                             f"try again in {math.ceil(wait)} s")
    elif request.method == "POST" and "check" in request.POST and form.is_valid():
        data = form.cleaned_data
        try:
            if upload_check_is_deferred(data["file"].size):
                team = next(t for t in teams if str(t.id) == data["team"])
                stored = upload_check_create(team=team, env=data["env"], flow=data["flow"], subset=data["subset"],
                                             data=upload_read(data["file"]), created_by=request.user.pk)
                return redirect("upload-check", check_id=stored.id)
            check = upload_check(env=data["env"], flow=data["flow"], subset=data["subset"],
                                 data=upload_read(data["file"]))
        except UploadRejected as exc:
            problems = exc.problems
            form.add_error("file", f"{len(problems)} problem(s) in the file")
        except SubmissionError as exc:
            form.add_error(None, str(exc))
    elif request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        team = next(t for t in teams if str(t.id) == data["team"])
        try:
            submission = submission_create_upload(model=model_spec_from(team=team, data=data, blanks_unchanged=True),
                                                  env=data["env"], flow=data["flow"], subset=data["subset"],
                                                  data=upload_read(data["file"]), is_public=data["public"],
                                                  enforce_quota=True, created_by=request.user.pk,
                                                  prepare_in_worker=True)
        except UploadRejected as exc:
            problems = exc.problems
            form.add_error("file", f"{len(problems)} problem(s) in the file; nothing was stored")
        except SubmissionError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Upload #{submission.id} accepted: {submission.attempts.count()} runs "
                                      "queued for re-scoring.")
            return redirect("submission-detail", submission_id=submission.id)
    plugins = sorted(all_plugins(), key=lambda plugin: plugin.position)
    # A browser cannot refill a file input: the page names the refused file so it is easy to pick again.
    chosen = request.FILES.get("file") if request.method == "POST" else None
    return render(request, "submissions/upload.html", {
        "form": form, "teams": teams, "problems": problems, "quotas": [(t, quota_status(t)) for t in teams],
        "chosen_file": (chosen.name or "")[:200] if chosen is not None else "", "check": check,
        "upload_notes": [plugin.upload_note for plugin in plugins if plugin.upload_note],
        "code_uploads": [(plugin.title, [name for _, name in plugin.code_files]) for plugin in plugins
                         if plugin.code_files]}, status=429 if wait is not None else 200)


@login_required
def upload_check_page(request: HttpRequest, check_id: int) -> HttpResponse:
    """A worker's check of a large file; the page reloads itself while the check waits."""
    check = upload_check_visible(request_access(request).team_ids, check_id)
    if check is None:
        raise Http404("no such upload check")
    return render(request, "submissions/upload_check.html", {"check": upload_check_shown(check)})


def queue(request: HttpRequest) -> HttpResponse:
    access = request_access(request)
    items = queue_seen_by(lambda submission: can_view_submission(access, submission))
    for item, visible in items:
        if visible:  # shown, never saved: outside the team the endpoint is struck out of its errors
            item.last_error, item.submission.status_reason = for_viewer(
                [item.last_error, item.submission.status_reason], access, item.submission)
    loads = queue_loads(None if access.is_staff else access.team_ids)
    return render(request, "submissions/queue.html", {"items": items, "loads": loads})


@require_POST
def submission_action(request: HttpRequest, submission_id: int, action: str) -> HttpResponse:
    access = request_access(request)
    submission = viewable_or_404(access, get_object_or_404(Submission, id=submission_id))
    check = can_publish_submission if action == "publish" else can_manage_submission
    allowed = check(access, submission)
    if not allowed:
        raise PermissionDenied("only the submission's team can do that" if action != "publish"
                               else "only the team's owner publishes a submission")
    if action == "publish":
        if request.POST.get("confirm") != "yes":
            # Publishing cannot be undone from the site: the first press only asks, with no script needed.
            return render(request, "submissions/publish_confirm.html", {"submission": submission})
        submission_publish(submission=submission)
        messages.success(request, "Published: the submission now shows on the public boards.")
    elif action == "cancel":
        submission_cancel(submission=submission)
        messages.info(request, "Submission cancelled; running attempts stop at their next step.")
    elif action == "resume":
        # Only a press that would queue nothing at all is turned away; the service decides the rest.
        if not submission_progress(submission).resumable(active=False):
            messages.info(request, "Nothing to resume: no attempt is waiting for another try.")
            return redirect("submission-detail", submission_id=submission.id)
        try:
            submission_resume(submission=submission, enforce_quota=True, actor_id=request.user.pk,
                              prepare_in_worker=True)
        except SubmissionError as exc:
            messages.error(request, str(exc))
        else:
            messages.info(request, "Unscored attempts queued again.")
    elif action == "rerun":
        try:
            rerun = submission_rerun(submission=submission, enforce_quota=True, created_by=request.user.pk,
                                     prepare_in_worker=True)
        except SubmissionError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Re-run queued as submission #{rerun.id}; this one is kept.")
            return redirect("submission-detail", submission_id=rerun.id)
    else:
        raise Http404("unknown action")
    return redirect("submission-detail", submission_id=submission.id)


def _replay_parts(attempt: Attempt) -> tuple[dict[str, Any] | None, ReplayPanel | None]:
    """The trajectory's first page and the environment's panel: read and parsed once per stored
    trajectory (a long one is megabytes of JSON), then kept in the cache under the index's own
    modification time and size, which a re-written trajectory changes."""
    directory = trajectory_dir(attempt)
    index = directory / INDEX_NAME if directory is not None else None
    stamp = None
    if index is not None:
        try:
            stored = index.stat()
            stamp = (stored.st_mtime_ns, stored.st_size)
        except OSError:
            pass
    if stamp is None or attempt.is_active:
        return _replay_read(attempt)
    timeout = settings.MAGEBENCH_BOARD_CACHE_SECONDS
    if timeout <= 0:
        return _replay_read(attempt)
    # The key names the stored file's version, so no later write needs to drop it.
    key = "replay:" + hashlib.sha256(repr((attempt.id, attempt.trajectory_path, stamp)).encode()).hexdigest()[:32]
    try:
        hit = cache.get(key)
    except Exception:  # noqa: BLE001 - without its cache (Redis down) the replay is read each time
        logger.warning("replay cache unavailable", exc_info=True)
        return _replay_read(attempt)
    if hit is None:
        hit = _replay_read(attempt)
        with contextlib.suppress(Exception):
            cache.set(key, hit, timeout=timeout)
    return hit


def _replay_read(attempt: Attempt) -> tuple[dict[str, Any] | None, ReplayPanel | None]:
    trajectory = attempt_trajectory(attempt)
    artifacts = (trajectory or {}).get("artifacts") or {}
    if trajectory is not None:
        # The first steps and model calls only: the page's script fetches the others from the API.
        trajectory = document_page(trajectory, ("steps", "calls"), offset=0, limit=REPLAY_PAGE)
    panel = None
    if isinstance(artifacts, dict):
        try:
            plugin = get_plugin(attempt.submission.environment_id)
        except KeyError:  # an environment no longer configured: its attempts keep the shared timeline
            plugin = None
        if plugin is not None:
            panel = plugin.replay_panel(artifacts, lambda name: attempt_artifact(attempt, name))
    return trajectory, panel


def attempt_replay(request: HttpRequest, attempt_id: int) -> HttpResponse:
    attempt = get_object_or_404(Attempt.objects.select_related("submission__model", "scenario"), id=attempt_id)
    access = request_access(request)
    viewable_or_404(access, attempt.submission)
    trajectory, panel = _replay_parts(attempt)
    # Shown, never saved: outside the team the endpoint is struck out of what the page quotes.
    marks = [] if can_see_endpoint(access, attempt.submission) else endpoint_marks(attempt.submission)
    trajectory = struck(trajectory, marks)
    attempt.error_message = struck(attempt.error_message, marks)
    attempt.details = struck(attempt.details, marks)  # a generated page's load error quotes what the model wrote
    return render(request, "submissions/replay.html", {"attempt": attempt, "trajectory": trajectory,
                                                        "replay_panel": panel, **(panel.context if panel else {})})


def attempt_frame(request: HttpRequest, attempt_id: int, name: str) -> FileResponse:
    attempt = get_object_or_404(Attempt.objects.select_related("submission"), id=attempt_id)
    viewable_or_404(request_access(request), attempt.submission)
    path = attempt_frame_path(attempt, name)
    if path is None:
        raise Http404("no such frame")
    response = FileResponse(path.open("rb"), content_type="image/png")
    # Frames never change; a private submission's frames must not sit in shared caches.
    visible_to_all = attempt.submission.is_public or attempt.submission.is_baseline
    response["Cache-Control"] = f"{'public' if visible_to_all else 'private'}, max-age=86400, immutable"
    return response


def attempt_trace(request: HttpRequest, attempt_id: int) -> FileResponse:
    """The Playwright trace of the generated page's evaluation (open it with `playwright show-trace`)."""
    attempt = get_object_or_404(Attempt.objects.select_related("submission"), id=attempt_id)
    viewable_or_404(request_access(request), attempt.submission)
    path = attempt_trace_path(attempt)
    if path is None:
        raise Http404("this attempt has no trace")
    return FileResponse(path.open("rb"), as_attachment=True, filename=f"attempt-{attempt.id}-trace.zip",
                        content_type="application/zip")
