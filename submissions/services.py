"""Writes for teams, models and submissions: create, cancel, re-run, resume, and derive their status.

Running attempts is ``submissions.engine``; queueing again what no worker does is
``submissions.watchdog``. Uploads (``submissions.upload_services``) and test calls of an endpoint
(``submissions.endpoint_checks``) go through the same board, model and quota checks as here.
"""
from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, overload

from celery import current_app
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from accounts.models import Team
from accounts.services import team_get_or_create
from catalogue.changes import results_changed
from catalogue.models import Environment, Scenario
from catalogue.prompt_sets import prompt_set_current
from catalogue.selectors import default_suite, scenario_spec
from evaluators.base import FLOWS, SUBSETS, ScenarioSpec, get_plugin
from evaluators.settings import EvaluationSettings, SettingsError
from scoring.stats import summarise_entry
from submissions.crypto import encrypt_secret
from submissions.endpoints import endpoint_url_validate
from submissions.models import Attempt, ModelEntry, Submission, SubmissionResult
from submissions.quotas import quota_status
from submissions.selectors import ACTIVE_SUBMISSIONS, attempt_outcomes, queue_for
from submissions.user_quota import user_quota_refusal

logger = logging.getLogger(__name__)

#: The task that runs attempts (``submissions.tasks``), sent by name: the task runs them through the
#: engine, which records results through these services, so importing it here would close a circle.
RUN_ATTEMPT_TASK = "submissions.run_attempt"
#: The task that prepares a queued submission's work (``submission_prepare``), sent by name likewise.
PREPARE_SUBMISSION_TASK = "submissions.prepare_submission"


class SubmissionError(ValueError):
    """A submission that cannot be accepted, with a message meant for the submitter."""


MODEL_FIELDS = ("organisation", "parameter_count", "open_weights", "link", "licence", "price_input_per_mtok",
                "price_output_per_mtok")


def model_entry_upsert(*, team: Team, name: str, is_baseline: bool | None = None, **metadata: Any) -> ModelEntry:
    """The team's model called ``name``, registered on first use.

    Only the metadata fields passed change: one left out keeps its stored value, an empty one
    passed clears it. Nothing is written unless every value is valid.
    """
    changes = _model_changes(team=team, name=name, metadata=metadata, is_baseline=is_baseline)
    before = ModelEntry.objects.filter(team=team, name=name.strip()).values(*changes).first() if team.pk else None
    entry, created = ModelEntry.objects.update_or_create(team=team, name=name.strip(), defaults=changes)
    if not created and before != changes:
        results_changed()  # boards show the model's metadata beside its entries
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
        # A price of 0 (a free model) is a value given, not a blank: only False itself is an unticked box.
        metadata = {key: value for key, value in metadata.items() if value not in ("", None) and value is not False}
    return ModelSpec(team=team, name=data["model_name"], metadata=metadata)


def model_check(model: ModelEntry | ModelSpec) -> None:
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


def model_write(model: ModelEntry | ModelSpec, *, enforce_quota: bool, user_id: int | None = None) -> ModelEntry:
    """The model a new submission belongs to, registered or updated now: call it inside the
    transaction that writes the submission, after every check."""
    if isinstance(model, ModelEntry):
        if enforce_quota:
            _quota_hold(model.team, user_id=user_id)
        return model
    team = model.team if isinstance(model.team, Team) else team_get_or_create(name=model.team)
    if enforce_quota:
        _quota_hold(team, user_id=user_id)
    return model_entry_upsert(team=team, name=model.name, is_baseline=model.is_baseline, **model.metadata)


class QuotaExceeded(SubmissionError):
    """The team has no submission left right now; the message says which limit and until when."""


def quota_check(*, team: Team, reviving: Submission | None = None, user_id: int | None = None) -> None:
    """Refuse new work once the team's quota, or that of the user starting it (across all their
    teams), is used up: the one check every way of submitting, re-running or resuming goes through.
    ``reviving`` is a finished submission about to be queued again: it needs room as if it were
    new, without counting twice if it counts already."""
    status = quota_status(team, excluding=reviving)
    refusal = status.refusal()
    if not refusal and user_id is not None:
        limits = (status.total_limit, status.per_day_limit, status.concurrent_limit)
        refusal = user_quota_refusal(user_id, team_limits=limits, excluding=reviving)
    if refusal:
        raise QuotaExceeded(f"quota reached: {refusal}")


def _quota_hold(team: Team, *, reviving: Submission | None = None, user_id: int | None = None) -> None:
    """Refuse new work once the team's or the user's quota is used up. Called in the transaction
    that writes the work, with the team's row locked, then the user's (always in that order): two
    requests at once, for one team or for two teams of one user, cannot both take the last slot."""
    locked = Team.objects.select_for_update().get(id=team.id)
    if user_id is not None:
        list(get_user_model().objects.select_for_update().filter(id=user_id).values_list("id", flat=True))
    quota_check(team=locked, reviving=reviving, user_id=user_id)


def submission_create_endpoint(*, model: ModelEntry | ModelSpec, env: str, flow: str, subset: str,
                               endpoint_url: str, endpoint_model: str = "", api_key: str = "",
                               suite: str | None = None, settings: Mapping[str, Any] | None = None,
                               is_baseline: bool = False, is_public: bool = True,
                               enforce_quota: bool = False, endpoint_trusted: bool = False,
                               endpoint_concurrency: int | None = None, created_by: int | None = None,
                               prepare_in_worker: bool = False) -> Submission:
    """Register an endpoint submission, create its attempts and queue them.

    Public by default for the operators' commands; the site and the API ask the team (private by
    default) and enforce its quota. Everything is checked first; a refusal writes nothing.
    ``settings`` are the submitter's values by name, as every way in receives them: they are
    checked and frozen here, over the plug-in's defaults (``EvaluationSettings``).
    ``prepare_in_worker`` (a web request) leaves creating and sending the attempts to a worker.
    """
    url, environment, suite, scenarios, frozen = endpoint_run_checked(
        env=env, flow=flow, subset=subset, suite=suite, endpoint_url=endpoint_url, settings=settings,
        trusted=endpoint_trusted)
    _endpoint_concurrency_check(endpoint_concurrency)
    model_check(model)
    with transaction.atomic():
        entry = model_write(model, enforce_quota=enforce_quota and not is_baseline, user_id=created_by)
        submission = Submission.objects.create(
            team=entry.team, model=entry, environment=environment, flow=flow, subset=subset, suite=suite,
            created_by_id=created_by, source=Submission.Source.ENDPOINT, settings=frozen.to_dict(), endpoint_url=url,
            endpoint_model=endpoint_model, api_key_encrypted=encrypt_secret(api_key),
            is_baseline=is_baseline, is_public=is_public or is_baseline, endpoint_trusted=endpoint_trusted,
            endpoint_concurrency=endpoint_concurrency, prepare_requested_at=timezone.now(),
        )
        submission_prepare_start(submission, in_worker=prepare_in_worker)
    return submission


def endpoint_run_checked(*, env: str, flow: str, subset: str, suite: str | None, endpoint_url: str,
                         settings: Mapping[str, Any] | None, trusted: bool = False,
                         ) -> tuple[str, Environment, str, QuerySet[Scenario], EvaluationSettings]:
    """What a run against an endpoint needs, checked: the URL, the board's scenarios and the frozen
    settings. A submission and a test call of its endpoint are checked alike, with the same messages."""
    board_check(env, flow, subset)
    try:
        url = endpoint_url_validate(endpoint_url, trusted=trusted)
    except ValueError as exc:
        raise SubmissionError(str(exc)) from None
    environment, suite, scenarios = board_of(env, subset, suite)
    try:
        frozen = EvaluationSettings.from_mapping(settings or {}, env, flow, subset=subset)
    except SettingsError as exc:
        raise SubmissionError(str(exc)) from None
    refusal = get_plugin(env).settings_refusal(flow, frozen, _LazySpecs(scenarios))
    if refusal:
        raise SubmissionError(refusal)
    # The suite's prompts of today, frozen: a later import of other texts starts a new board generation.
    return url, environment, suite, scenarios, frozen.with_prompt_version(prompt_set_current(env, suite, flow).version)


def _endpoint_concurrency_check(value: int | None) -> None:
    limit = django_settings.MAGEBENCH_ENDPOINT_CONCURRENCY
    if value is not None and (value < 1 or (limit > 0 and value > limit)):
        raise SubmissionError(f"endpoint_concurrency must be between 1 and {limit}, the platform's limit"
                              if limit > 0 else "endpoint_concurrency must be at least 1")


def board_check(env: str, flow: str, subset: str) -> None:
    """Refuse an environment, flow or subset that names no board, saying which ones do."""
    plugin = _plugin_or_error(env)
    if flow not in FLOWS or flow not in plugin.flows:
        raise SubmissionError(f"{plugin.title} has no flow {flow!r}; choose one of {', '.join(plugin.flows)}")
    if subset not in SUBSETS:
        raise SubmissionError("subset must be mini or full")


def board_of(env: str, subset: str, suite: str | None) -> tuple[Environment, str, QuerySet[Scenario]]:
    """The board's environment, suite and scenarios (not read yet), or why there is no such board."""
    # A read only: importing scenarios registers their environment, so a board with scenarios has one.
    environment = Environment.objects.filter(slug=env).first()
    suite = suite or default_suite(env)
    scenarios = Scenario.objects.filter(environment_id=env, suite=suite, **Scenario.subset_filter(subset))
    if environment is None or not scenarios.exists():
        raise SubmissionError(f"no {subset} scenarios of {get_plugin(env).title} in the '{suite}' suite; "
                              "import them first")
    return environment, suite, scenarios


class _LazySpecs(Sequence[ScenarioSpec]):
    """A board's scenarios as a plug-in's check sees them, read only if the check looks at them: most
    never do, and a full set is hundreds of rows of JSON that a request would decode for nothing."""

    def __init__(self, scenarios: QuerySet[Scenario]) -> None:
        self._scenarios = scenarios
        self._specs: list[ScenarioSpec] | None = None

    def _all(self) -> list[ScenarioSpec]:
        if self._specs is None:
            self._specs = [scenario_spec(scenario) for scenario in self._scenarios]
        return self._specs

    def __len__(self) -> int:
        return len(self._all())

    @overload
    def __getitem__(self, index: int) -> ScenarioSpec: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ScenarioSpec]: ...

    def __getitem__(self, index: int | slice) -> ScenarioSpec | Sequence[ScenarioSpec]:
        return self._all()[index]


def submission_prepare_start(submission: Submission, *, in_worker: bool) -> None:
    """Prepare a submission just marked (``prepare_requested_at``) in this transaction: at once (an
    operator's command, which has time), or in a worker once the transaction commits (a web
    request, which answers within a second: a full set is over a thousand attempts, each a row and a
    broker message)."""
    if not in_worker:
        submission_prepare(submission_id=submission.id)
        return
    submission_id, env = submission.id, submission.environment_id
    transaction.on_commit(lambda: submission_prepare_enqueue(submission_id=submission_id, env=env))


def submission_prepare_enqueue(*, submission_id: int, env: str) -> None:
    """Send a submission's preparation to its environment's queue. A broker that cannot be reached
    loses nothing: the submission stays marked, and the next worker free on that queue or the
    watchdog prepares it."""
    from kombu.exceptions import KombuError
    from kombu.exceptions import OperationalError as BrokerError

    try:
        current_app.signature(PREPARE_SUBMISSION_TASK).apply_async((submission_id,), queue=queue_for(env))
    except (BrokerError, KombuError, OSError) as exc:
        logger.warning("could not queue the preparation of submission %s, a worker will do it later: %s",
                       submission_id, exc)


def submission_prepare(*, submission_id: int) -> int:
    """Do the work queuing a submission leaves for later: create a new endpoint run's attempts
    (every scenario of its board × repeats), then send a turn for each of its waiting attempts not
    sent yet. Returns how many turns it sends.

    Safe to run twice, at once, or after a worker died midway: the submission's row is locked
    (another run busy with it is left to finish the job), attempts are only created for a run that
    has none, and the mark is cleared in the same transaction, so the job is done whole or not at
    all. A turn that is then lost is sent again by the watchdog, as any unsent attempt's.
    """
    with transaction.atomic():
        submission = (Submission.objects.select_for_update(skip_locked=True)
                      .filter(id=submission_id, prepare_requested_at__isnull=False).first())
        if submission is None:
            return 0
        Submission.objects.filter(id=submission_id).update(prepare_requested_at=None)
        if submission.status not in ACTIVE_SUBMISSIONS:
            return 0  # cancelled before a worker came to it: nothing to run
        if submission.source == Submission.Source.ENDPOINT and not submission.attempts.exists():
            _attempts_create(submission)
        unsent = list(submission.attempts.filter(status__in=[Attempt.Status.PENDING, Attempt.Status.RETRYING],
                                                 queued_at__isnull=True).values_list("id", flat=True))
        attempts_enqueue_on_commit(unsent)
    return len(unsent)


def submissions_prepare_marked(*, queues: Collection[str] | None = None,
                               requested_before: datetime | None = None) -> int:
    """Prepare the active submissions still marked (of environments served on ``queues``; marked
    before ``requested_before``): how many turns that sent."""
    marked = Submission.objects.filter(status__in=ACTIVE_SUBMISSIONS, prepare_requested_at__isnull=False)
    if requested_before is not None:
        marked = marked.filter(prepare_requested_at__lt=requested_before)
    sent = 0
    for submission_id, env in marked.values_list("id", "environment_id"):
        if queues is not None and queue_for(env) not in queues:
            continue
        try:
            sent += submission_prepare(submission_id=submission_id)
        except Exception:
            # One submission that cannot be prepared must not cost the others their turns (nor the
            # turn this worker is about to take): it stays marked, and is tried again later.
            logger.exception("could not prepare submission %s", submission_id)
    return sent


def _attempts_create(submission: Submission) -> None:
    """Every scenario × repeat of a new endpoint run (its board's scenarios of now)."""
    scenarios = Scenario.objects.filter(environment_id=submission.environment_id, suite=submission.suite,
                                        **Scenario.subset_filter(submission.subset)).values_list("id", flat=True)
    repeats = submission.evaluation_settings.repeats
    Attempt.objects.bulk_create((Attempt(submission=submission, scenario_id=scenario_id, repeat=r)
                                 for scenario_id in scenarios for r in range(repeats)), ignore_conflicts=True)


def _plugin_or_error(env: str):
    try:
        return get_plugin(env)
    except KeyError as exc:
        raise SubmissionError(str(exc)) from None


def attempts_enqueue(attempt_ids: list[int], *, countdown: float | None = None) -> None:
    """Send one message per attempt to its environment's queue (now, or after ``countdown`` seconds).

    A message is a turn on that queue, not an order for this attempt: the worker that takes it runs
    whichever attempt is fairest then (engine.attempt_run_next), so each waiting attempt needs one
    and an extra one is harmless.

    A broker that cannot be reached loses nothing: the attempts stay waiting with no ``queued_at``
    and the watchdog sends them again once the broker is back. The caller (a web request, a retry)
    carries on either way.
    """
    from kombu.exceptions import KombuError
    from kombu.exceptions import OperationalError as BrokerError

    envs = dict(Attempt.objects.filter(id__in=attempt_ids).values_list("id", "submission__environment_id"))
    sent: list[int] = []
    try:
        for attempt_id in attempt_ids:
            # Celery takes countdown=None as no delay; the stubs ask for a number.
            current_app.signature(RUN_ATTEMPT_TASK).apply_async(
                (attempt_id,), queue=queue_for(envs.get(attempt_id, "")),
                countdown=countdown)  # type: ignore[arg-type]
            sent.append(attempt_id)
    except (BrokerError, KombuError, OSError) as exc:
        logger.warning("could not queue %d attempt(s), the watchdog will send them again: %s",
                       len(attempt_ids) - len(sent), exc)
        Attempt.objects.filter(id__in=attempt_ids[len(sent):]).update(queued_at=None)
    Attempt.objects.filter(id__in=sent).update(queued_at=timezone.now())


def attempts_enqueue_on_commit(attempt_ids: list[int]) -> None:
    transaction.on_commit(lambda: attempts_enqueue(attempt_ids))


def submission_refresh_status(*, submission_id: int) -> Submission:
    """Derive the submission's status from its attempts (the single place that decides it)."""
    counts = Attempt.objects.filter(submission_id=submission_id).aggregate(
        active=Count("id", filter=Q(status__in=Attempt.ACTIVE)),
        failed=Count("id", filter=Q(status=Attempt.Status.INFRA_FAILED)),
        cancelled=Count("id", filter=Q(status=Attempt.Status.CANCELLED)),
    )
    # A paused submission waits for its team to resume it, even with nothing left running: it is not finished.
    # Nor is one whose attempts a worker has yet to create or send.
    live = Submission.objects.exclude(status__in=[Submission.Status.CANCELLED, Submission.Status.PAUSED]).filter(
        id=submission_id, prepare_requested_at__isnull=True)
    missing = Submission.objects.filter(id=submission_id).values_list("missing_scenarios", flat=True).first()
    if counts["active"] == 0:
        # The finished status and the stored board numbers land together: a reader that sees the
        # submission finished also finds its result, and a failed summary leaves it unfinished.
        with transaction.atomic():
            if missing:
                shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
                finished = live.update(status=Submission.Status.INCOMPLETE, finished_at=timezone.now(),
                                       status_reason=f"the upload has no run for {len(missing)} scenario(s): {shown}")
            elif counts["failed"] or counts["cancelled"]:
                reason = _failure_reason(submission_id)
                finished = live.update(status=Submission.Status.INCOMPLETE,
                                       status_reason=reason or "attempts were cancelled", finished_at=timezone.now())
            else:
                finished = live.update(status=Submission.Status.COMPLETED, status_reason="", finished_at=timezone.now())
            if finished:
                submission_result_rebuild(submission_id=submission_id)
    return Submission.objects.get(id=submission_id)


def _failure_reason(submission_id: int) -> str:
    """Why attempts failed, a line per kind with the cause of one of them in its own words
    ("2 attempt(s) failed: quota_exhausted — Too Many Requests: OpenAI: insufficient_quota — …")."""
    failed = Attempt.objects.filter(submission_id=submission_id, status=Attempt.Status.INFRA_FAILED)
    kinds = failed.values("error_kind").annotate(n=Count("id"), example=Max("error_message")).order_by("-n")
    return "; ".join(f"{row['n']} attempt(s) failed: {row['error_kind']}"
                     + (f" — {row['example'][:300]}" if row["example"] else "") for row in kinds)


def submission_result_rebuild(*, submission_id: int) -> SubmissionResult:
    """Recompute a submission's board numbers from its attempts and store them (an idempotent upsert).

    Two workers finishing a submission's last attempts at once both land here; the upsert makes
    the later write win instead of failing on the primary key.
    """
    env, flow, subset = Submission.objects.values_list("environment_id", "flow", "subset").get(id=submission_id)
    keys = get_plugin(env).breakdown_keys
    summary = summarise_entry(attempt_outcomes([submission_id], with_breakdown=bool(keys))[submission_id], keys)
    numbers = summary.numbers()
    result = SubmissionResult(submission_id=submission_id, computed_at=timezone.now(), **numbers)
    SubmissionResult.objects.bulk_create([result], update_conflicts=True, unique_fields=["submission"],
                                         update_fields=[*numbers, "computed_at"])
    # Finishing (``submission_refresh_status``) and re-scoring both end here.
    results_changed((env, flow, subset))
    return result


#: The most model ids kept of an endpoint's /models list: a gateway lists hundreds of public models.
LISTED_MODELS_KEPT = 100


def submission_listed_models_record(*, submission_id: int, listed: list[str]) -> None:
    """Keep the ids the endpoint listed at /models, so that what others are shown has them struck out."""
    kept = [str(model_id) for model_id in listed[:LISTED_MODELS_KEPT]]
    Submission.objects.filter(id=submission_id).exclude(endpoint_listed_models=kept).update(
        endpoint_listed_models=kept)


def submission_publish(*, submission: Submission) -> Submission:
    Submission.objects.filter(id=submission.id).update(is_public=True)
    submission.is_public = True
    results_changed((submission.environment_id, submission.flow, submission.subset))
    return submission


def submission_cancel(*, submission: Submission) -> Submission:
    with transaction.atomic():
        Submission.objects.filter(
            id=submission.id, status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING],
        ).update(status=Submission.Status.CANCELLED, status_reason="cancelled by the submitter",
                 finished_at=timezone.now(), prepare_requested_at=None)
        # Running attempts notice at their next heartbeat and stop themselves.
        submission.attempts.filter(status__in=[Attempt.Status.PENDING, Attempt.Status.RETRYING]).update(
            status=Attempt.Status.CANCELLED, finished_at=timezone.now())
    submission.refresh_from_db()
    return submission


def submission_rerun(*, submission: Submission, enforce_quota: bool = False, created_by: int | None = None,
                     prepare_in_worker: bool = False) -> Submission:
    """A new submission with the same model, endpoint, board and frozen settings; the old one is kept.
    ``prepare_in_worker`` (a web request) leaves creating and sending its attempts to a worker."""
    if submission.source != Submission.Source.ENDPOINT:
        raise SubmissionError("only endpoint submissions can be re-run by the platform")
    try:
        # The URL was checked under the rules of its day; a re-run is a new submission.
        endpoint_url_validate(submission.endpoint_url, trusted=submission.endpoint_trusted)
    except ValueError as exc:
        raise SubmissionError(f"this endpoint cannot be re-run: {exc}") from None
    if not Scenario.objects.filter(environment_id=submission.environment_id, suite=submission.suite,
                                   **Scenario.subset_filter(submission.subset)).exists():
        raise SubmissionError("the board's scenarios are no longer imported")
    with transaction.atomic():
        if enforce_quota and not submission.is_baseline:
            _quota_hold(submission.team, user_id=created_by)
        rerun = Submission.objects.create(
            team=submission.team, created_by_id=created_by, model=submission.model,
            environment=submission.environment, flow=submission.flow,
            subset=submission.subset, suite=submission.suite, source=submission.source,
            settings=dict(submission.settings), endpoint_url=submission.endpoint_url,
            endpoint_model=submission.endpoint_model, api_key_encrypted=submission.api_key_encrypted,
            endpoint_listed_models=list(submission.endpoint_listed_models),
            is_baseline=submission.is_baseline, is_public=submission.is_public, rerun_of=submission,
            endpoint_trusted=submission.endpoint_trusted, endpoint_concurrency=submission.endpoint_concurrency,
            prepare_requested_at=timezone.now(),
        )
        submission_prepare_start(rerun, in_worker=prepare_in_worker)
    return rerun


def submission_resume(*, submission: Submission, enforce_quota: bool = False,
                      actor_id: int | None = None, prepare_in_worker: bool = False) -> Submission:
    """Queue again every attempt that did not produce a score (failed, cancelled or stuck waiting).

    A finished submission queued again is new work for its team and for ``actor_id``, the user
    resuming it: with ``enforce_quota`` it needs a free slot in both. One still waiting or running
    only has its stuck attempts sent again. ``prepare_in_worker`` (a web request) leaves sending
    them to a worker.
    """
    with transaction.atomic():
        retry = submission.attempts.filter(status__in=[Attempt.Status.INFRA_FAILED, Attempt.Status.CANCELLED,
                                                       Attempt.Status.PENDING, Attempt.Status.RETRYING])
        any_retried = retry.exists()
        finished = Submission.objects.filter(id=submission.id).exclude(
            status__in=[Submission.Status.QUEUED, Submission.Status.RUNNING]).exists()
        if any_retried and finished and enforce_quota and not submission.is_baseline:
            _quota_hold(submission.team, reviving=submission, user_id=actor_id)
        # Each is sent again (queued_at empty: not sent), stuck ones included.
        retry.update(status=Attempt.Status.PENDING, tries=0, error_kind="", error_message="", next_try_at=None,
                     queued_at=None)
        if any_retried:
            # A paused submission's breaker starts counting again: the team says the cause is fixed.
            Submission.objects.filter(id=submission.id).update(status=Submission.Status.QUEUED, status_reason="",
                                                               finished_at=None, breaker_cause="",
                                                               breaker_attempts=[], calls_resume_at=None,
                                                               prepare_requested_at=timezone.now())
            submission.refresh_from_db(fields=["status", "prepare_requested_at"])
            submission_prepare_start(submission, in_worker=prepare_in_worker)
            if finished:
                # It leaves its board until it finishes again.
                results_changed((submission.environment_id, submission.flow, submission.subset))
    submission.refresh_from_db()
    return submission
