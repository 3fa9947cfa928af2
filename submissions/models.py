"""Models, submissions and their attempts."""
from __future__ import annotations

from typing import Any

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from accounts.models import Team
from catalogue.models import Environment, Scenario
from evaluators.base import environment_flows
from evaluators.settings import EvaluationSettings

#: A price per million tokens, in USD: none is negative, and none is anywhere near a million.
PRICE_BOUNDS = [MinValueValidator(0), MaxValueValidator(1_000_000)]


class ModelEntry(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="models")
    name = models.CharField(max_length=120)
    organisation = models.CharField(max_length=120, blank=True)
    parameter_count = models.BigIntegerField(null=True, blank=True, help_text="Parameters, if known")
    open_weights = models.BooleanField(default=False)
    link = models.URLField(blank=True)
    licence = models.CharField(max_length=80, blank=True)
    is_baseline = models.BooleanField(default=False)
    #: What the model's provider bills per million tokens (USD), if the team gave it: with both, the
    #: boards show what an entry's runs cost; the platform measures the tokens, never the price.
    price_input_per_mtok = models.FloatField(null=True, blank=True, validators=PRICE_BOUNDS,
                                             help_text="USD per million prompt tokens")
    price_output_per_mtok = models.FloatField(null=True, blank=True, validators=PRICE_BOUNDS,
                                              help_text="USD per million completion tokens")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["team", "name"], name="model_unique_per_team")]

    def __str__(self) -> str:
        return self.name


def validate_flow(value: str) -> None:
    """Refuses a flow no loaded environment plays (the plug-ins declare them)."""
    flows = environment_flows()
    if value not in flows:
        raise ValidationError(f"unknown flow {value!r}; known: {', '.join(flows)}", code="invalid_choice")


class Submission(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        COMPLETED = "completed"
        INCOMPLETE = "incomplete"
        CANCELLED = "cancelled"
        #: Stopped by the platform: one failure ended tries of several attempts in a row (a spent
        #: quota, a wrong key, an endpoint that is down). No request goes out until it is resumed.
        PAUSED = "paused"

    class Source(models.TextChoices):
        ENDPOINT = "endpoint"
        UPLOAD = "upload"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="submissions")
    #: The user who started it (form, API token's creator, re-run or resume): a submission counts
    #: against its creator's own quota across all their teams too. None for the operators' commands.
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    model = models.ForeignKey(ModelEntry, on_delete=models.CASCADE, related_name="submissions")
    environment = models.ForeignKey(Environment, on_delete=models.PROTECT, related_name="submissions")
    #: One of the environments' flows (``validate_flow``); no ``choices`` here, so that the plug-ins,
    #: not a migration, say which flows exist.
    flow = models.CharField(max_length=16, validators=[validate_flow])
    subset = models.CharField(max_length=8, choices=Scenario.SUBSETS)
    suite = models.SlugField(max_length=32)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.ENDPOINT)
    #: The exact evaluation settings (resolution, max_image, memory, max_loop, repeats, sampling,
    #: prompt version, parse retries) frozen at submission time, in their stored form
    #: (``EvaluationSettings.to_dict``); runs read them as ``evaluation_settings``.
    settings = models.JSONField(default=dict)
    endpoint_url = models.URLField(max_length=500, blank=True)
    endpoint_model = models.CharField(max_length=200, blank=True)
    api_key_encrypted = models.TextField(blank=True)
    #: The model ids the endpoint listed at ``/models`` when the platform asked (it asks when no model
    #: id was given): the team's alone, kept so that what is shown to others can have them struck out.
    endpoint_listed_models = models.JSONField(default=list, blank=True)
    #: An operator vouched for the endpoint (``--allow-private-endpoint``): it may be on a private
    #: network the address policy would otherwise keep the workers from calling.
    endpoint_trusted = models.BooleanField(default=False)
    #: The team's own limit on the attempts calling its endpoint at once (None: the platform's,
    #: MAGEBENCH_ENDPOINT_CONCURRENCY); never above the platform's.
    endpoint_concurrency = models.PositiveSmallIntegerField(null=True, blank=True)
    #: An upload's file as received (under MEDIA_ROOT, named by its SHA-256), kept for audits and re-scoring.
    upload_path = models.CharField(max_length=300, blank=True)
    #: An upload's own record, kept beside the settings its runs are replayed with: how its runs are
    #: scored ("re-scored", or "re-simulated" on a stochastic engine), the file's SHA-256, and the
    #: subset's scenarios it has no run for (the submission then stays incomplete).
    rescoring = models.CharField(max_length=16, blank=True)
    upload_sha256 = models.CharField(max_length=64, blank=True)
    missing_scenarios = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    status_reason = models.TextField(blank=True)
    #: The failure that ended the latest tries in a row (``InfraError.cause_key``) and the attempts
    #: whose tries it ended since anything else happened: the breaker pauses the submission once
    #: these are MAGEBENCH_BREAKER_ATTEMPTS.
    breaker_cause = models.CharField(max_length=64, blank=True)
    breaker_attempts = models.JSONField(default=list, blank=True)
    #: No attempt starts before this: the endpoint asked (Retry-After) to be left alone until then.
    calls_resume_at = models.DateTimeField(null=True, blank=True)
    #: Set while the work a request queued waits for a worker to prepare it (a new run's attempts
    #: created, the turns of attempts queued again sent: ``services.submission_prepare``), so that
    #: the request answers at once; the watchdog prepares one still marked after a grace period.
    prepare_requested_at = models.DateTimeField(null=True, blank=True)
    is_baseline = models.BooleanField(default=False)
    #: Checked by the maintainers (set in the admin); boards can show verified entries only.
    verified = models.BooleanField(default=False, db_index=True)
    #: Private submissions are seen by their team only; the team's owner publishes them.
    is_public = models.BooleanField(default=False)
    #: Taken off the boards by the maintainers, with the reason shown on the submission's page.
    hidden = models.BooleanField(default=False)
    hidden_reason = models.TextField(blank=True)
    #: The submission this one re-runs with the same frozen settings; both stay on record.
    rerun_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reruns")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["environment", "flow", "subset", "suite", "status"])]

    def __str__(self) -> str:
        return f"#{self.pk} {self.model} {self.environment_id}/{self.flow}/{self.subset}"

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    def clean(self) -> None:
        if self.hidden and not self.hidden_reason.strip():
            raise ValidationError({"hidden_reason": "say why the submission is hidden; its page shows the reason"})

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key_encrypted)

    @property
    def evaluation_settings(self) -> EvaluationSettings:
        """The frozen settings as the typed value every run of this submission reads."""
        return EvaluationSettings.from_mapping(self.settings, self.environment_id, self.flow, subset=self.subset,
                                               platform=True)

    @property
    def shown_settings(self) -> dict[str, Any]:
        """The settings as the submission's page and the API show them: for an upload, its own
        record follows the evaluation settings under the names it has always been shown with."""
        if self.source != self.Source.UPLOAD:
            return dict(self.settings)
        return {**self.settings, "rescoring": self.rescoring, "upload_sha256": self.upload_sha256,
                "missing_scenarios": self.missing_scenarios}


class Attempt(models.Model):
    """One scenario × repeat of a submission.

    ``status`` separates what the model did (``scored``) from what the platform or the team's
    infrastructure failed to do (``retrying`` / ``infra_failed``): the latter never carry a score.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        RETRYING = "retrying"
        SCORED = "scored"
        INFRA_FAILED = "infra_failed"
        CANCELLED = "cancelled"

    ACTIVE = (Status.PENDING, Status.RUNNING, Status.RETRYING)

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="attempts")
    scenario = models.ForeignKey(Scenario, on_delete=models.PROTECT, related_name="attempts")
    repeat = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    score = models.FloatField(null=True, blank=True)
    outcome = models.CharField(max_length=32, blank=True)
    steps = models.PositiveIntegerField(default=0)
    model_calls = models.PositiveIntegerField(default=0)
    invalid_action = models.BooleanField(default=False)
    repeating_action = models.BooleanField(default=False)
    parse_errors = models.PositiveIntegerField(default=0)
    details = models.JSONField(default=dict, blank=True)
    error_kind = models.CharField(max_length=32, blank=True)
    error_message = models.TextField(blank=True)
    tries = models.PositiveSmallIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    trajectory_path = models.CharField(max_length=300, blank=True)
    #: An uploaded run: {"replies": [...], "self_score": float | None, "self_error": str, "source": "line 7"}.
    #: Its replies are played back to the environment in place of a live endpoint's.
    recorded = models.JSONField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    next_try_at = models.DateTimeField(null=True, blank=True)
    #: When its current message went to the broker; empty while none could be sent (the watchdog sends it).
    queued_at = models.DateTimeField(null=True, blank=True)
    duration_seconds = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["scenario__key", "repeat"]
        # A quota asks of each of a team's submissions whether any attempt scored: answered from the
        # index alone, it stays cheap however many attempts a team has run.
        indexes = [models.Index(fields=["submission", "status"], name="attempt_submission_status")]
        constraints = [
            models.UniqueConstraint(fields=["submission", "scenario", "repeat"], name="attempt_unique"),
            models.CheckConstraint(
                condition=models.Q(score__isnull=True) | models.Q(status="scored"),
                name="attempt_only_scored_has_score",
            ),
        ]

    def __str__(self) -> str:
        return f"attempt {self.pk} ({self.scenario.key} r{self.repeat})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    def touch(self) -> None:
        self.heartbeat_at = timezone.now()


class SubmissionResult(models.Model):
    """A finished submission's board numbers, computed from its attempts when it finishes.

    Boards, the home page and the analysis pages read one of these per entry instead of every
    attempt row (a full board is hundreds of thousands of attempts). The per-scenario fields are
    JSON objects keyed by scenario id.
    """

    submission = models.OneToOneField(Submission, primary_key=True, on_delete=models.CASCADE, related_name="result")
    mean = models.FloatField(null=True)
    se = models.FloatField(null=True)
    ci_low = models.FloatField(null=True)
    ci_high = models.FloatField(null=True)
    n_scenarios = models.PositiveIntegerField(default=0)
    n_scored = models.PositiveIntegerField(default=0)
    n_attempts = models.PositiveIntegerField(default=0)
    n_infra_failed = models.PositiveIntegerField(default=0)
    ia_pct = models.FloatField(null=True)
    ra_pct = models.FloatField(null=True)
    breakdown = models.JSONField(null=True)
    scenario_means = models.JSONField(default=dict)
    scenario_scores = models.JSONField(default=dict)
    first_attempts = models.JSONField(default=dict)
    mean_seconds = models.FloatField(null=True)
    #: [[N, expected best score, scenarios averaged], …]
    best_of_n = models.JSONField(default=list)
    #: The effort the platform measured (``scoring.stats.EntrySummary``): scored attempts run
    #: against the team's endpoint, those whose endpoint reported token counts, totals over them and
    #: each one's mean for one run of a scenario, averaged over scenarios. Uploads measure none.
    effort_attempts = models.PositiveIntegerField(default=0)
    token_attempts = models.PositiveIntegerField(default=0)
    model_calls_total = models.BigIntegerField(null=True)
    prompt_tokens_total = models.BigIntegerField(null=True)
    completion_tokens_total = models.BigIntegerField(null=True)
    seconds_total = models.FloatField(null=True)
    model_calls_per_scenario = models.FloatField(null=True)
    prompt_tokens_per_scenario = models.FloatField(null=True)
    completion_tokens_per_scenario = models.FloatField(null=True)
    seconds_per_scenario = models.FloatField(null=True)
    computed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"result of submission {self.submission_id}"


class LiveWorker(models.Model):
    """A Celery worker that is up: which queues it reads and how many attempts it runs at once.

    Written when the worker is ready, refreshed by it every MAGEBENCH_WORKER_BEAT_SECONDS and removed
    when it shuts down; a row not refreshed for MAGEBENCH_WORKER_STALE_AFTER_SECONDS is a worker that
    died. Time-left estimates count its slots, and the queue page warns about a queue none reads.
    """

    hostname = models.CharField(max_length=200, unique=True)
    queues = models.JSONField(default=list)
    concurrency = models.PositiveIntegerField(default=1)
    started_at = models.DateTimeField(default=timezone.now)
    last_seen = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["hostname"]

    def __str__(self) -> str:
        return f"{self.hostname} ({', '.join(self.queues)} × {self.concurrency})"


class EndpointCheck(models.Model):
    """One test call of an endpoint: the first request an attempt would send, made alone on a worker.

    Teams make one before queueing hundreds of paid attempts. The row holds what was asked and,
    once a worker has made the call, what came back (``result``); the API key is kept only until
    then, encrypted like a submission's.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        #: The call was made (or could not be): ``result`` says what happened, failures included.
        FINISHED = "finished"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="endpoint_checks")
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                                   blank=True, related_name="+")
    environment = models.ForeignKey(Environment, on_delete=models.PROTECT, related_name="+")
    flow = models.CharField(max_length=16, validators=[validate_flow])
    subset = models.CharField(max_length=8, choices=Scenario.SUBSETS)
    suite = models.SlugField(max_length=32)
    #: The scenario whose first request is sent: the board's first, as its first attempt plays it.
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="+")
    #: Frozen as a submission's are (``EvaluationSettings.to_dict``, with the suite's prompt version).
    settings = models.JSONField(default=dict)
    endpoint_url = models.URLField(max_length=500)
    endpoint_model = models.CharField(max_length=200, blank=True)
    #: Wiped once the check finishes: a test call needs the key for one request only.
    api_key_encrypted = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    result = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["team", "created_at"])]

    def __str__(self) -> str:
        return f"check #{self.pk} {self.environment_id}/{self.flow} {self.status}"


class UploadFileCheck(models.Model):
    """A check of a file too large to read within a web request: a worker reads it as an upload would be
    read and records what it found. The file is kept only until then; the row stores nothing of it."""

    class Status(models.TextChoices):
        PENDING = "pending"
        VALID = "valid"
        INVALID = "invalid"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="upload_checks")
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                                   blank=True, related_name="+")
    environment = models.ForeignKey(Environment, on_delete=models.PROTECT, related_name="+")
    flow = models.CharField(max_length=16, validators=[validate_flow])
    subset = models.CharField(max_length=8, choices=Scenario.SUBSETS)
    suite = models.SlugField(max_length=32)
    #: Relative to MEDIA_ROOT while the check waits; emptied once the worker has read the file.
    file_path = models.CharField(max_length=200, blank=True)
    file_bytes = models.BigIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    #: "where: message" of each problem found, in file order (an invalid file).
    problems = models.JSONField(default=list, blank=True)
    #: What a valid file holds: runs, scenarios, repeats and the subset's scenarios it lacks.
    result = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"upload check #{self.pk} {self.environment_id}/{self.flow} {self.status}"
