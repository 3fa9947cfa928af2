"""Writes for teams, models, submissions and attempts."""
from __future__ import annotations

import hashlib
import logging
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction
from django.db.models import Count, F, Q
from django.utils import timezone
from django.utils.text import slugify

from config.env import parse_bool
from evaluators.agents.flows import Cancelled, ChatModel
from evaluators.base import FLOWS, ScenarioSpec, get_plugin
from evaluators.endpoints.errors import InfraError
from evaluators.runner import EnvironmentFailure, effective_settings, run_attempt
from leaderboard.models import Environment, Scenario
from leaderboard.selectors import default_suite
from submissions.crypto import encrypt_secret
from submissions.endpoints import endpoint_client, endpoint_url_validate
from leaderboard.stats import summarise_entry
from submissions.models import Attempt, ModelEntry, Submission, SubmissionResult, Team
from submissions.selectors import attempt_outcomes, queue_for
from submissions.rescoring import recorded_run, replay_recorded, self_report, upload_settings
from submissions.uploads import UploadError, UploadLimits, parse_upload

logger = logging.getLogger(__name__)
T = TypeVar("T")

#: Errors that retrying cannot fix: fail the attempt at once with the reason.
NON_RETRYABLE = {"auth_error", "invalid_request"}


class SubmissionError(ValueError):
    """A submission that cannot be accepted, with a message meant for the submitter."""


def team_get_or_create(*, name: str) -> Team:
    name = name.strip()
    if not name:
        raise SubmissionError("a team name is required")
    team, _ = Team.objects.get_or_create(name=name, defaults={"slug": _unique_team_slug(name)})
    return team


def _unique_team_slug(name: str) -> str:
    base = slugify(name) or "team"
    slug, n = base, 1
    while Team.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


MODEL_FIELDS = ("organisation", "parameter_count", "open_weights", "link", "licence")


def model_entry_upsert(*, team: Team, name: str, is_baseline: bool | None = None, **metadata: Any) -> ModelEntry:
    """The team's model called ``name``, registered on first use.

    Only the metadata fields passed change: one left out keeps its stored value, an empty one
    passed clears it. Nothing is written unless every value is valid.
    """
    changes = _model_changes(team=team, name=name, metadata=metadata, is_baseline=is_baseline)
    entry, _ = ModelEntry.objects.update_or_create(team=team, name=name.strip(), defaults=changes)
    return entry


def _model_changes(*, team: Team, name: str, metadata: Mapping[str, Any],
                   is_baseline: bool | None) -> dict[str, Any]:
    """The validated values to store for the fields given (``team`` may be unsaved: a new team)."""
    name = name.strip()
    if not name:
        raise SubmissionError("a model name is required")
    unknown = sorted(set(metadata) - set(MODEL_FIELDS))
    if unknown:
        raise SubmissionError(f"unknown model field(s): {', '.join(unknown)}")
    given = dict(metadata) | ({} if is_baseline is None else {"is_baseline": is_baseline})
    stored = ModelEntry.objects.filter(team=team, name=name).first() if team.pk else None
    # Validate the model as it would be stored, so a long name or a bad link is refused before any write.
    entry = stored or ModelEntry(team=team, name=name)
    for key, value in given.items():
        setattr(entry, key, value)
    try:
        entry.full_clean(exclude=["team"], validate_unique=False)
    except ValidationError as exc:
        raise SubmissionError("; ".join(f"{key}: {' '.join(messages)}" for key, messages
                                        in exc.message_dict.items())) from None
    return {key: getattr(entry, key) for key in given}


@dataclass(frozen=True)
class ModelSpec:
    """A model as a request names it: the team's model ``name``, registered with the request's
    submission. Of its metadata only the fields in ``metadata`` change. ``team`` may be a team's
    name (the operators' commands): the team is then registered with the submission too."""

    team: Team | str
    name: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    is_baseline: bool | None = None


def model_spec_from(*, team: Team, data: Mapping[str, Any], blanks_unchanged: bool = False) -> ModelSpec:
    """The model a submission form or API body names (``model_name``), with the metadata it sends.

    An API body carries only what the caller sent. A page's form carries every field, so there
    (``blanks_unchanged``) a blank field or an unticked box leaves the stored value alone.
    """
    metadata = {key: data[key] for key in MODEL_FIELDS if key in data}
    if blanks_unchanged:
        metadata = {key: value for key, value in metadata.items() if value not in ("", None, False)}
    return ModelSpec(team=team, name=data["model_name"], metadata=metadata)


def _model_check(model: ModelEntry | ModelSpec) -> None:
    """Refuse a model that could not be stored, before anything is written."""
    if isinstance(model, ModelEntry):
        return
    team = model.team
    if isinstance(team, str):
        if not team.strip():
            raise SubmissionError("a team name is required")
        team = Team.objects.filter(name=team.strip()).first() or Team(name=team.strip())
        try:
            team.clean_fields(exclude=["slug"])
        except ValidationError as exc:
            raise SubmissionError(f"team: {' '.join(exc.message_dict.get('name', ['invalid']))}") from None
    _model_changes(team=team, name=model.name, metadata=model.metadata, is_baseline=model.is_baseline)


def _model_write(model: ModelEntry | ModelSpec, *, enforce_quota: bool) -> ModelEntry:
    """The model a new submission belongs to, registered or updated now: call it inside the
    transaction that writes the submission, after every check."""
    if isinstance(model, ModelEntry):
        if enforce_quota:
            _quota_hold(model.team)
        return model
    team = model.team if isinstance(model.team, Team) else team_get_or_create(name=model.team)
    if enforce_quota:
        _quota_hold(team)
    return model_entry_upsert(team=team, name=model.name, is_baseline=model.is_baseline, **model.metadata)


def _quota_check(team: Team, *, reviving: Submission | None = None) -> None:
    from accounts.services import quota_check  # accounts.services imports this module

    quota_check(team=team, reviving=reviving)


def _quota_hold(team: Team, *, reviving: Submission | None = None) -> None:
    """Refuse new work once the team's quota is used up. Called in the transaction that writes the
    work, with the team's row locked: two requests at once cannot both take the last slot."""
    _quota_check(Team.objects.select_for_update().get(id=team.id), reviving=reviving)


def submission_create_endpoint(*, model: ModelEntry | ModelSpec, env: str, flow: str, subset: str,
                               endpoint_url: str, endpoint_model: str = "", api_key: str = "",
                               suite: str | None = None, settings: dict[str, Any] | None = None,
                               is_baseline: bool = False, is_public: bool = True,
                               enforce_quota: bool = False, endpoint_trusted: bool = False) -> Submission:
    """Register an endpoint submission, create its attempts and queue them.

    Public by default for the operators' commands; the site and the API ask the team (private by
    default) and enforce its quota. Everything is checked first; a refusal writes nothing.
    """
    _board_check(env, flow, subset)
    try:
        url = endpoint_url_validate(endpoint_url, trusted=endpoint_trusted)
    except ValueError as exc:
        raise SubmissionError(str(exc)) from None
    environment, suite, scenarios = _board_scenarios(env, subset, suite)
    frozen = effective_settings(env, flow, _validated_settings(settings or {}), subset=subset)
    repeats = int(frozen.get("repeats", 1))
    _model_check(model)
    with transaction.atomic():
        entry = _model_write(model, enforce_quota=enforce_quota and not is_baseline)
        submission = Submission.objects.create(
            team=entry.team, model=entry, environment=environment, flow=flow, subset=subset, suite=suite,
            source=Submission.Source.ENDPOINT, settings=frozen, endpoint_url=url,
            endpoint_model=endpoint_model or entry.name, api_key_encrypted=encrypt_secret(api_key),
            is_baseline=is_baseline, is_public=is_public or is_baseline, endpoint_trusted=endpoint_trusted,
        )
        _attempts_create(submission, scenarios, repeats)
    return submission


def _board_check(env: str, flow: str, subset: str) -> None:
    plugin = _plugin_or_error(env)
    if flow not in FLOWS or flow not in plugin.flows:
        raise SubmissionError(f"{plugin.title} has no flow {flow!r}; choose one of {', '.join(plugin.flows)}")
    if subset not in ("mini", "full"):
        raise SubmissionError("subset must be mini or full")


def _board_scenarios(env: str, subset: str, suite: str | None):  # type: ignore[no-untyped-def]
    # A read only: importing scenarios registers their environment, so a board with scenarios has one.
    environment = Environment.objects.filter(slug=env).first()
    suite = suite or default_suite(env)
    scenarios = list(Scenario.objects.filter(environment_id=env, suite=suite, **Scenario.subset_filter(subset)))
    if environment is None or not scenarios:
        raise SubmissionError(f"no {subset} scenarios of {get_plugin(env).title} in the '{suite}' suite; "
                              "import them first")
    return environment, suite, scenarios


class UploadRejected(SubmissionError):
    """An upload with problems; ``problems`` lists every one of them ("where: message")."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("the upload was refused:\n" + "\n".join(problems))
        self.problems = problems


MAX_UPLOAD_REPEATS = 20


def submission_create_upload(*, model: ModelEntry | ModelSpec, env: str, flow: str, subset: str, data: bytes,
                             suite: str | None = None, is_public: bool = True,
                             enforce_quota: bool = False) -> Submission:
    """Validate an upload completely, then store it and queue its re-scoring in one go.

    Nothing is stored for an upload with any problem, nor for a team without quota left (checked
    before the file is parsed, and again as it is stored). Scenarios of the subset the upload
    leaves out are listed on the submission, which stays ``incomplete`` until a full upload
    replaces it.
    """
    _board_check(env, flow, subset)
    environment, suite, scenarios = _board_scenarios(env, subset, suite)
    _model_check(model)
    if enforce_quota and isinstance(model.team, Team):
        _quota_check(model.team)  # parsing a large archive is the expensive part: refuse before it
    by_key = {scenario.key: scenario for scenario in scenarios}
    try:
        runs = parse_upload(data, env=env, flow=flow, scenarios=set(by_key), max_repeats=MAX_UPLOAD_REPEATS,
                            limits=upload_limits())
    except UploadError as exc:
        raise UploadRejected([f"{p.where}: {p.message}" for p in exc.problems]) from None
    digest = hashlib.sha256(data).hexdigest()
    frozen = upload_settings(env, flow, subset=subset)
    frozen.update(repeats=max(run.repeat for run in runs) + 1, upload_sha256=digest,
                  missing_scenarios=sorted(set(by_key) - {run.scenario for run in runs}))
    relative = Path("uploads") / f"{digest}.{'zip' if data[:2] == b'PK' else 'jsonl'}"
    with transaction.atomic():
        entry = _model_write(model, enforce_quota=enforce_quota)
        submission = Submission.objects.create(
            team=entry.team, model=entry, environment=environment, flow=flow, subset=subset, suite=suite,
            source=Submission.Source.UPLOAD, settings=frozen, upload_path=str(relative), is_public=is_public)
        Attempt.objects.bulk_create(
            Attempt(submission=submission, scenario=by_key[run.scenario], repeat=run.repeat,
                    recorded=recorded_run(run, env=env, flow=flow))
            for run in runs)
        # Last, so that a refusal above leaves no file behind; a failed write undoes the rows.
        _upload_store(data, relative)
        _enqueue_on_commit(list(submission.attempts.values_list("id", flat=True)))
    return submission


def _upload_store(data: bytes, relative: Path) -> None:
    stored = django_settings.MEDIA_ROOT / relative
    if stored.exists():
        return  # content-addressed: a second identical upload reuses the file
    stored.parent.mkdir(parents=True, exist_ok=True)
    partial = stored.with_suffix(".partial")
    partial.write_bytes(data)
    os.replace(partial, stored)


def upload_read(file: Any) -> bytes:
    """An uploaded file's bytes, refused before reading when it is over the size limit."""
    limit = django_settings.MAGEBENCH_UPLOAD_MAX_BYTES
    if file.size > limit:
        raise SubmissionError(f"the file is {file.size} bytes; the limit is {limit}")
    return file.read()


def upload_limits() -> UploadLimits:
    return UploadLimits(max_upload_bytes=django_settings.MAGEBENCH_UPLOAD_MAX_BYTES)


_INT_SETTINGS = {"resolution": (64, 4096), "max_image": (0, 64), "max_memory": (0, 100), "max_loop": (1, 1000),
                 "repeats": (1, 20), "max_tokens": (1, 65536), "parse_retries": (0, 5)}
_FLOAT_SETTINGS = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0), "frequency_penalty": (-2.0, 2.0)}
#: observation_images = false declares an endpoint that reads no images: nothing is rendered for it.
#: auto_render = false turns Football's auto-rendering off (one engine step per decision), for ablations.
#: webui_exclude_unchanged = true is WebUI's labelled variant that leaves out elements an action left
#: unchanged (the official metric scores every element in every state).
#: football_shot_held_until_received = true is Football's labelled reward variant (a keeper's save
#: after a shot is not a stolen ball).
_BOOL_SETTINGS = ("no_system_role", "observation_images", "auto_render", "webui_exclude_unchanged",
                  "football_shot_held_until_received")


def _number(key: str, value: Any, kind: type) -> Any:
    if isinstance(value, bool):
        raise SubmissionError(f"{key} must be a number")
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise SubmissionError(f"{key} must be {'a whole number' if kind is int else 'a number'}, not {value!r}") from None


def _boolean(key: str, value: Any) -> bool:
    parsed = parse_bool(value)
    if parsed is None:
        raise SubmissionError(f"{key} must be true or false")
    return parsed


def _validated_settings(raw: dict[str, Any]) -> dict[str, Any]:
    clean: dict[str, Any] = {}
    for key, value in raw.items():
        if value in (None, ""):
            continue
        if key in _INT_SETTINGS:
            low, high = _INT_SETTINGS[key]
            cast: Any = _number(key, value, int)
        elif key in _FLOAT_SETTINGS:
            low, high = _FLOAT_SETTINGS[key]
            cast = _number(key, value, float)
        elif key in _BOOL_SETTINGS:
            clean[key] = _boolean(key, value)
            continue
        else:
            raise SubmissionError(f"unknown setting {key!r}")
        if not low <= cast <= high:
            raise SubmissionError(f"{key} must be between {low} and {high}")
        clean[key] = cast
    return clean


def _attempts_create(submission: Submission, scenarios: list[Scenario], repeats: int) -> None:
    """Every scenario × repeat of a new submission, queued once the transaction commits."""
    Attempt.objects.bulk_create(Attempt(submission=submission, scenario=scenario, repeat=r)
                                for scenario in scenarios for r in range(repeats))
    _enqueue_on_commit(list(submission.attempts.values_list("id", flat=True)))


def _plugin_or_error(env: str):
    try:
        return get_plugin(env)
    except KeyError as exc:
        raise SubmissionError(str(exc)) from None


def attempts_enqueue(attempt_ids: list[int], *, countdown: float | None = None) -> None:
    """Send each attempt to its environment's queue (now, or after ``countdown`` seconds).

    A broker that cannot be reached loses nothing: the attempts stay waiting with no ``queued_at``
    and the watchdog sends them again once the broker is back. The caller (a web request, a retry)
    carries on either way.
    """
    from kombu.exceptions import KombuError, OperationalError as BrokerError

    from submissions.tasks import run_attempt_task

    envs = dict(Attempt.objects.filter(id__in=attempt_ids).values_list("id", "submission__environment_id"))
    sent: list[int] = []
    try:
        for attempt_id in attempt_ids:
            run_attempt_task.apply_async((attempt_id,), queue=queue_for(envs.get(attempt_id, "")), countdown=countdown)
            sent.append(attempt_id)
    except (BrokerError, KombuError, OSError) as exc:
        logger.warning("could not queue %d attempt(s), the watchdog will send them again: %s",
                       len(attempt_ids) - len(sent), exc)
        Attempt.objects.filter(id__in=attempt_ids[len(sent):]).update(queued_at=None)
    Attempt.objects.filter(id__in=sent).update(queued_at=timezone.now())


def _enqueue_on_commit(attempt_ids: list[int]) -> None:
    transaction.on_commit(lambda: attempts_enqueue(attempt_ids))


# --- running attempts --------------------------------------------------------------------------


class Superseded(Cancelled):
    """This worker no longer owns the attempt: the watchdog gave it to another worker (this one was
    paused or cut off for too long). Its result must not be written."""


def _owned(attempt: Attempt):  # type: ignore[no-untyped-def]
    """The attempt's row while this try still owns it: every write of a running try goes through it,
    so a try that was given up on and handed to another worker can never write over the new one."""
    return Attempt.objects.filter(id=attempt.id, status=Attempt.Status.RUNNING, tries=attempt.tries)


@dataclass
class _Heartbeat:
    attempt: Attempt
    last: float = field(default_factory=time.monotonic)  # the claim itself was the first beat

    def __call__(self, progress: dict[str, Any]) -> None:
        now = time.monotonic()
        if now - self.last < django_settings.MAGEBENCH_HEARTBEAT_EVERY_SECONDS:
            return
        self.last = now
        try:
            beat = _owned(self.attempt).update(heartbeat_at=timezone.now(), steps=progress.get("steps", 0),
                                               model_calls=progress.get("model_calls", 0))
            cancelled = Submission.objects.filter(id=self.attempt.submission_id,
                                                  status=Submission.Status.CANCELLED).exists()
        except (OperationalError, InterfaceError) as exc:
            # The database is restarting: keep playing, the next beat or the final write reconnects.
            logger.warning("attempt %s: heartbeat skipped, database unavailable: %s", self.attempt.id, exc)
            _reconnect()
            return
        if cancelled:
            raise Cancelled()
        if beat == 0:
            raise Superseded()


def _reconnect() -> None:
    try:
        connection.close()
    except DatabaseError:
        pass


def _with_database(write: Callable[[], T], *, what: str) -> T:
    """Run ``write`` (autocommit ORM calls), waiting out a database restart of up to
    MAGEBENCH_DB_OUTAGE_SECONDS instead of losing a finished episode's result."""
    deadline = time.monotonic() + django_settings.MAGEBENCH_DB_OUTAGE_SECONDS
    pause = 0.5
    while True:
        try:
            return write()
        except (OperationalError, InterfaceError) as exc:
            if time.monotonic() + pause > deadline:
                raise
            logger.warning("%s: database unavailable, trying again in %.1fs: %s", what, pause, exc)
            _reconnect()
            time.sleep(pause)
            pause = min(pause * 2, 5.0)


class EndpointBusy(Exception):
    """The attempt's endpoint already serves as many attempts as the platform allows at once."""


def _endpoint_has_room(attempt_id: int) -> bool:
    """Whether one more attempt may call this attempt's endpoint now (uploads call none).

    The endpoint's submissions are locked for the check and the claim, so two workers cannot both
    take the last free place (on SQLite, writes are serialised anyway).
    """
    url = (Submission.objects.filter(attempts__id=attempt_id).values_list("endpoint_url", flat=True).first() or "")
    limit = django_settings.MAGEBENCH_ENDPOINT_CONCURRENCY
    if not url or limit <= 0:
        return True
    list(Submission.objects.select_for_update().filter(endpoint_url=url).values_list("id", flat=True))
    fresh = timezone.now() - timezone.timedelta(seconds=django_settings.MAGEBENCH_STALLED_AFTER_SECONDS)
    running = Attempt.objects.filter(submission__endpoint_url=url, status=Attempt.Status.RUNNING,
                                     heartbeat_at__gte=fresh).count()
    return running < limit


def attempt_claim(*, attempt_id: int, worker: str = "") -> Attempt | None:
    """Atomically move a waiting attempt to running; None when another worker has it or it is done.

    Raises EndpointBusy when its endpoint is at its concurrency limit: the attempt stays waiting.
    """
    with transaction.atomic():
        if not _endpoint_has_room(attempt_id):
            raise EndpointBusy()
        return _claim(attempt_id, worker or socket.gethostname())


def _claim(attempt_id: int, worker: str) -> Attempt | None:
    now = timezone.now()
    claimed = Attempt.objects.filter(
        id=attempt_id,
        status__in=[Attempt.Status.PENDING, Attempt.Status.RETRYING],
        submission__status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING],
    ).update(status=Attempt.Status.RUNNING, started_at=now, heartbeat_at=now, tries=F("tries") + 1,
             worker=worker[:200], next_try_at=None)
    if claimed != 1:
        return None
    attempt = Attempt.objects.select_related("submission", "scenario").get(id=attempt_id)
    Submission.objects.filter(id=attempt.submission_id, status=Submission.Status.QUEUED).update(
        status=Submission.Status.RUNNING, started_at=now)
    return attempt


def scenario_spec(scenario: Scenario) -> ScenarioSpec:
    resource = Path(scenario.resource_path) if scenario.resource_path else None
    if resource is not None and not resource.is_absolute():
        resource = django_settings.SCENARIO_ROOT / resource
    return ScenarioSpec(env=scenario.environment_id, key=scenario.key, data=scenario.data, resource_path=resource)


def attempt_run(*, attempt_id: int, worker: str = "") -> float | None:
    """Run one attempt. Returns a delay in seconds when it must be tried again later.

    Safe to call for any attempt at any time, as often as a broker delivers it: only a waiting
    attempt is claimed, and only the try that claimed it may write its result.
    """
    try:
        attempt = attempt_claim(attempt_id=attempt_id, worker=worker)
    except EndpointBusy:
        # Not a failure and not a try: the team's server is busy with our other attempts.
        return django_settings.MAGEBENCH_ENDPOINT_BUSY_RETRY_SECONDS
    if attempt is None:
        return None
    submission = attempt.submission
    relative = Path("trajectories") / str(submission.id) / str(attempt.id) / f"try-{attempt.tries}"
    started = time.monotonic()
    try:
        if attempt.recorded is not None:
            result = replay_recorded(
                scenario=scenario_spec(attempt.scenario), flow=submission.flow, settings=submission.settings,
                recorded=attempt.recorded, out_dir=django_settings.MEDIA_ROOT / relative,
                progress=_Heartbeat(attempt))
        else:
            client: ChatModel = endpoint_client(submission)
            result = run_attempt(
                scenario=scenario_spec(attempt.scenario), flow=submission.flow, settings=submission.settings,
                model=client, out_dir=django_settings.MEDIA_ROOT / relative, progress=_Heartbeat(attempt),
            )
    except Superseded:
        logger.warning("attempt %s try %s: another worker has taken it over; dropping this try's result",
                       attempt.id, attempt.tries)
        return None
    except Cancelled:
        _write_then_refresh(attempt, lambda: _owned(attempt).update(
            status=Attempt.Status.CANCELLED, finished_at=timezone.now(), trajectory_path=str(relative)))
        return None
    except (InfraError, EnvironmentFailure, ValueError) as exc:
        elapsed = time.monotonic() - started
        return _with_database(lambda: _attempt_infra_failure(attempt, exc, relative, elapsed),
                              what=f"attempt {attempt.id}")
    diagnostics = result.diagnostics
    elapsed = time.monotonic() - started

    def record() -> None:
        written = _owned(attempt).update(
            status=Attempt.Status.SCORED, score=result.score, outcome=result.outcome[:32], steps=result.steps,
            model_calls=result.model_calls, invalid_action=diagnostics.invalid_action,
            repeating_action=diagnostics.repeating_action, parse_errors=diagnostics.parse_errors,
            details={**result.details, "diagnostics": diagnostics.as_dict(), **result.extra,
                     **self_report(submission.environment_id, attempt.recorded or {}, result.score)},
            error_kind="", error_message="", prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens, trajectory_path=str(relative),
            finished_at=timezone.now(), heartbeat_at=timezone.now(), duration_seconds=elapsed,
        )
        # Zero rows is also what a second go sees when the first one's commit landed but its answer
        # was lost to the outage: only a row in another try's hands means the result was dropped.
        if written == 0 and not _landed(attempt, Attempt.Status.SCORED):
            logger.warning("attempt %s try %s finished after another worker took it over; not recorded",
                           attempt.id, attempt.tries)

    _write_then_refresh(attempt, record)
    return None


def _write_then_refresh(attempt: Attempt, write: Callable[[], object]) -> None:
    """A try's last write, then its submission's status; each waits out a database restart."""
    _with_database(write, what=f"attempt {attempt.id}")
    _with_database(lambda: submission_refresh_status(submission_id=attempt.submission_id),
                   what=f"submission {attempt.submission_id}")


def _landed(attempt: Attempt, status: str) -> bool:
    return Attempt.objects.filter(id=attempt.id, tries=attempt.tries, status=status).exists()


def _attempt_infra_failure(attempt: Attempt, exc: Exception, relative: Path, elapsed: float) -> float | None:
    kind = getattr(exc, "kind", "configuration_error")
    message = str(exc)[:2000]
    give_up = kind in NON_RETRYABLE or attempt.tries >= django_settings.MAGEBENCH_INFRA_MAX_TRIES
    delay = django_settings.MAGEBENCH_INFRA_RETRY_BASE_SECONDS * (2 ** (attempt.tries - 1))
    fields: dict[str, Any] = {
        "error_kind": kind, "error_message": message, "trajectory_path": str(relative),
        "duration_seconds": elapsed, "heartbeat_at": timezone.now(),
    }
    if give_up:
        fields.update(status=Attempt.Status.INFRA_FAILED, finished_at=timezone.now())
    else:
        fields.update(status=Attempt.Status.RETRYING, next_try_at=timezone.now() + timezone.timedelta(seconds=delay))
    if _owned(attempt).update(**fields) == 0 and not _landed(attempt, fields["status"]):
        return None  # another worker has this attempt now; its outcome is that worker's to record
    logger.warning("attempt %s: %s (%s), try %s%s", attempt.id, kind, message, attempt.tries,
                   "; giving up" if give_up else f"; retrying in {delay:.1f}s")
    submission_refresh_status(submission_id=attempt.submission_id)
    return None if give_up else delay


def submission_refresh_status(*, submission_id: int) -> Submission:
    """Derive the submission's status from its attempts (the single place that decides it)."""
    counts = Attempt.objects.filter(submission_id=submission_id).aggregate(
        active=Count("id", filter=Q(status__in=Attempt.ACTIVE)),
        failed=Count("id", filter=Q(status=Attempt.Status.INFRA_FAILED)),
        cancelled=Count("id", filter=Q(status=Attempt.Status.CANCELLED)),
    )
    live = Submission.objects.exclude(status=Submission.Status.CANCELLED).filter(id=submission_id)
    missing = Submission.objects.filter(id=submission_id).values_list("settings__missing_scenarios", flat=True).first()
    if counts["active"] == 0:
        if missing:
            shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
            finished = live.update(status=Submission.Status.INCOMPLETE, finished_at=timezone.now(),
                                   status_reason=f"the upload has no run for {len(missing)} scenario(s): {shown}")
        elif counts["failed"] or counts["cancelled"]:
            kinds = (Attempt.objects.filter(submission_id=submission_id, status=Attempt.Status.INFRA_FAILED)
                     .values("error_kind").annotate(n=Count("id")).order_by("-n"))
            reason = "; ".join(f"{row['n']} attempt(s) failed: {row['error_kind']}" for row in kinds)
            finished = live.update(status=Submission.Status.INCOMPLETE, status_reason=reason or "attempts were cancelled",
                                   finished_at=timezone.now())
        else:
            finished = live.update(status=Submission.Status.COMPLETED, status_reason="", finished_at=timezone.now())
        if finished:
            submission_result_rebuild(submission_id=submission_id)
    return Submission.objects.get(id=submission_id)


def submission_result_rebuild(*, submission_id: int) -> SubmissionResult:
    """Recompute a submission's board numbers from its attempts and store them (an idempotent upsert).

    Two workers finishing a submission's last attempts at once both land here; the upsert makes
    the later write win instead of failing on the primary key.
    """
    env = Submission.objects.values_list("environment_id", flat=True).get(id=submission_id)
    keys = get_plugin(env).breakdown_keys
    summary = summarise_entry(attempt_outcomes([submission_id], with_breakdown=bool(keys))[submission_id], keys)
    numbers = summary.numbers()
    result = SubmissionResult(submission_id=submission_id, computed_at=timezone.now(), **numbers)
    SubmissionResult.objects.bulk_create([result], update_conflicts=True, unique_fields=["submission"],
                                         update_fields=[*numbers, "computed_at"])
    return result


def submission_publish(*, submission: Submission) -> Submission:
    Submission.objects.filter(id=submission.id).update(is_public=True)
    submission.is_public = True
    return submission


def submission_cancel(*, submission: Submission) -> Submission:
    with transaction.atomic():
        Submission.objects.filter(id=submission.id, status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING]
                                  ).update(status=Submission.Status.CANCELLED, status_reason="cancelled by the submitter",
                                           finished_at=timezone.now())
        # Running attempts notice at their next heartbeat and stop themselves.
        submission.attempts.filter(status__in=[Attempt.Status.PENDING, Attempt.Status.RETRYING]).update(
            status=Attempt.Status.CANCELLED, finished_at=timezone.now())
    submission.refresh_from_db()
    return submission


def submission_rerun(*, submission: Submission, enforce_quota: bool = False) -> Submission:
    """A new submission with the same model, endpoint, board and frozen settings; the old one is kept."""
    if submission.source != Submission.Source.ENDPOINT:
        raise SubmissionError("only endpoint submissions can be re-run by the platform")
    try:
        # The URL was checked under the rules of its day; a re-run is a new submission.
        endpoint_url_validate(submission.endpoint_url, trusted=submission.endpoint_trusted)
    except ValueError as exc:
        raise SubmissionError(f"this endpoint cannot be re-run: {exc}") from None
    scenarios = list(Scenario.objects.filter(environment_id=submission.environment_id, suite=submission.suite,
                                             **Scenario.subset_filter(submission.subset)))
    if not scenarios:
        raise SubmissionError("the board's scenarios are no longer imported")
    repeats = int(submission.settings.get("repeats", 1))
    with transaction.atomic():
        if enforce_quota and not submission.is_baseline:
            _quota_hold(submission.team)
        rerun = Submission.objects.create(
            team=submission.team, model=submission.model, environment=submission.environment, flow=submission.flow,
            subset=submission.subset, suite=submission.suite, source=submission.source,
            settings=dict(submission.settings), endpoint_url=submission.endpoint_url,
            endpoint_model=submission.endpoint_model, api_key_encrypted=submission.api_key_encrypted,
            is_baseline=submission.is_baseline, is_public=submission.is_public, rerun_of=submission,
            endpoint_trusted=submission.endpoint_trusted,
        )
        _attempts_create(rerun, scenarios, repeats)
    return rerun


def submission_resume(*, submission: Submission, enforce_quota: bool = False) -> Submission:
    """Queue again every attempt that did not produce a score (failed, cancelled or stuck waiting).

    A finished submission queued again is new work for its team: with ``enforce_quota`` it needs
    a free slot. One still waiting or running only has its stuck attempts sent again.
    """
    with transaction.atomic():
        retry = submission.attempts.filter(status__in=[Attempt.Status.INFRA_FAILED, Attempt.Status.CANCELLED,
                                                       Attempt.Status.PENDING, Attempt.Status.RETRYING])
        ids = list(retry.values_list("id", flat=True))
        finished = Submission.objects.filter(id=submission.id).exclude(
            status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING]).exists()
        if ids and finished and enforce_quota and not submission.is_baseline:
            _quota_hold(submission.team, reviving=submission)
        retry.update(status=Attempt.Status.PENDING, tries=0, error_kind="", error_message="", next_try_at=None)
        if ids:
            Submission.objects.filter(id=submission.id).update(status=Submission.Status.QUEUED, status_reason="",
                                                               finished_at=None)
            _enqueue_on_commit(ids)
    submission.refresh_from_db()
    return submission


def attempts_requeue_stalled(*, stalled_after_seconds: float, include_waiting: bool = True) -> dict[str, int]:
    """Queue again what no worker is doing: running attempts whose heartbeat stopped, waiting ones
    whose message could not be sent, and (with ``include_waiting``) every waiting one, for when the
    broker lost its messages.

    A stalled attempt that has used all its tries is failed with the reason instead: a scenario that
    kills its worker every time must not be retried for ever. Safe to call at any time: claiming is
    atomic, so a message for an attempt that is already being run or has finished does nothing.
    """
    now = timezone.now()
    cutoff = now - timezone.timedelta(seconds=stalled_after_seconds)
    active = Attempt.objects.filter(submission__status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING])
    stalled = active.filter(status=Attempt.Status.RUNNING, heartbeat_at__lt=cutoff)
    max_tries = django_settings.MAGEBENCH_INFRA_MAX_TRIES
    given_up = list(stalled.filter(tries__gte=max_tries).values_list("id", "submission_id"))
    Attempt.objects.filter(id__in=[a for a, _ in given_up], status=Attempt.Status.RUNNING).update(
        status=Attempt.Status.INFRA_FAILED, error_kind="worker_lost", finished_at=now,
        error_message=f"the worker running this attempt stopped on each of its {max_tries} tries")
    stalled_ids = list(stalled.exclude(id__in=[a for a, _ in given_up]).values_list("id", flat=True))
    Attempt.objects.filter(id__in=stalled_ids, status=Attempt.Status.RUNNING).update(
        status=Attempt.Status.RETRYING, error_kind="worker_lost",
        error_message="the worker running this attempt stopped; queued again")
    for submission_id in {s for _, s in given_up}:
        submission_refresh_status(submission_id=submission_id)
    waiting = active.filter(status__in=[Attempt.Status.PENDING, Attempt.Status.RETRYING])
    if include_waiting:
        unsent: list[int] = list(waiting.values_list("id", flat=True))
    else:
        # A send that failed left queued_at empty; a moment's grace lets a commit's own send finish.
        grace = now - timezone.timedelta(seconds=UNSENT_GRACE_SECONDS)
        unsent = list(waiting.filter(queued_at__isnull=True, created_at__lt=grace).values_list("id", flat=True))
    queued = sorted(set(stalled_ids) | set(unsent))
    _enqueue_on_commit(queued)
    return {"stalled": len(stalled_ids), "failed": len(given_up), "queued": len(queued)}


#: How long a new attempt may wait for its first message before the watchdog sends one itself.
UNSENT_GRACE_SECONDS = 30.0

#: A key the watchdog keeps in a Redis broker. Redis without persistence comes back from a restart
#: empty: the key's absence is how the watchdog learns that every queued message was lost.
BROKER_MARKER_KEY = "magebench:broker-marker"


def broker_lost_messages() -> bool:
    """Whether the broker has been emptied since the last call (the first call ever also says yes,
    which only re-sends the waiting attempts once). Brokers other than Redis keep their messages."""
    url = django_settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://")):
        return False
    import redis

    client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
    try:
        return bool(client.set(BROKER_MARKER_KEY, timezone.now().isoformat(), nx=True))
    finally:
        client.close()


def watchdog_run() -> dict[str, int]:
    """One round of the watchdog (Celery beat runs it every MAGEBENCH_WATCHDOG_EVERY_SECONDS)."""
    lost = broker_lost_messages()
    if lost:
        logger.warning("the broker holds none of our messages (restarted empty?): sending every waiting attempt again")
    with transaction.atomic():
        counts = attempts_requeue_stalled(stalled_after_seconds=django_settings.MAGEBENCH_STALLED_AFTER_SECONDS,
                                          include_waiting=lost)
    return {**counts, "broker_emptied": int(lost)}
