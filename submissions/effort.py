"""What a submission's runs took, as its page and the API show it: model calls, tokens, seconds and
cost, and the endpoint's own account of the replies (cut at the token limit, refused) beside the
platform's waits."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import FloatField, IntegerField, Q, Sum
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast

from scoring.cost import token_cost
from scoring.stats import AttemptOutcome, summarise_effort
from submissions.models import Attempt, Submission


@dataclass(frozen=True)
class Effort:
    """What a submission's scored attempts took, as its page shows it (``scoring.stats.summarise_effort``),
    and what that cost at its model's prices."""

    #: False for an upload: the platform made no model calls of its own, so nothing was measured.
    measured: bool
    scored: int
    numbers: dict[str, Any]
    price_input_per_mtok: float | None
    price_output_per_mtok: float | None
    #: The endpoint's own account of the scored attempts' replies, and the platform's time around
    #: them: replies stopped at the token limit, replies refused, seconds lost to retries and waits.
    replies: int = 0
    replies_cut: int = 0
    refusals: int = 0
    platform_wait_seconds: float = 0.0

    @property
    def has_prices(self) -> bool:
        return self.price_input_per_mtok is not None and self.price_output_per_mtok is not None

    @property
    def tokens_per_scenario(self) -> float | None:
        prompt, completion = self.numbers["prompt_tokens_per_scenario"], self.numbers["completion_tokens_per_scenario"]
        return None if prompt is None or completion is None else prompt + completion

    @property
    def cost_total(self) -> float | None:
        return token_cost(self.numbers["prompt_tokens_total"], self.numbers["completion_tokens_total"],
                          self.price_input_per_mtok, self.price_output_per_mtok)

    @property
    def cost_per_scenario(self) -> float | None:
        return token_cost(self.numbers["prompt_tokens_per_scenario"], self.numbers["completion_tokens_per_scenario"],
                          self.price_input_per_mtok, self.price_output_per_mtok)


def submission_effort(submission: Submission, attempts: Iterable[Attempt]) -> Effort:
    """The effort of these (already loaded) attempts of ``submission``, counted as a board counts it,
    while it runs too."""
    measured = submission.source != Submission.Source.UPLOAD
    scored = [AttemptOutcome(attempt_id=a.id, scenario_id=a.scenario_id, repeat=a.repeat, scored=True,
                             infra_failed=False, score=a.score, seconds=a.duration_seconds, measured=measured,
                             model_calls=a.model_calls, prompt_tokens=a.prompt_tokens,
                             completion_tokens=a.completion_tokens)
              for a in attempts if a.status == Attempt.Status.SCORED]
    return Effort(measured=measured, scored=len(scored), numbers=summarise_effort(scored),
                  price_input_per_mtok=submission.model.price_input_per_mtok,
                  price_output_per_mtok=submission.model.price_output_per_mtok,
                  **submission_reply_counts(submission))


def _detail_sum(key: str, kind: type[IntegerField] | type[FloatField]) -> Sum:
    return Sum(Cast(KeyTextTransform(key, "details"), kind()), filter=Q(status=Attempt.Status.SCORED))


def submission_reply_counts(submission: Submission) -> dict[str, Any]:
    """What the endpoint said of the scored attempts' replies: how many there were, how many it cut at
    the token limit and how many it refused; and the seconds the platform lost to retries and waits."""
    counts = submission.attempts.aggregate(
        replies=Sum("model_calls", filter=Q(status=Attempt.Status.SCORED)),
        replies_cut=_detail_sum("replies_cut", IntegerField), refusals=_detail_sum("refusals", IntegerField),
        platform_wait_seconds=_detail_sum("platform_wait_seconds", FloatField))
    return {name: value or 0 for name, value in counts.items()}
