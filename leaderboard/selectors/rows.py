"""What a board is made of: its rows, and the prompt-set generations it shows one at a time."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from evaluators.base import PromptSet
from scoring.cost import token_cost
from scoring.stats import RANK_RESAMPLES, EntrySummary
from submissions.models import Submission


@dataclass(kw_only=True)
class BoardRow(EntrySummary):
    """One entry of a board: who it is, its numbers (an ``EntrySummary``) and where it stands."""

    submission_id: int | None
    model: str
    #: The model's entry (its page); None for reported numbers.
    model_id: int | None = None
    team: str
    organisation: str
    parameter_count: int | None
    open_weights: bool
    is_baseline: bool
    status: str
    prompt_version: str = ""
    verified: bool = False
    #: Seen only by its own team (who is looking at the board) until the team's owner publishes it.
    is_private: bool = False
    #: For uploads: "re-scored" (replayed exactly) or "re-simulated" (played again on a stochastic engine).
    rescoring: str = ""
    rank: int | None = None
    #: The 95 % range of the entry's rank over bootstrap resamples of the board's scenarios (ranked
    #: entries only; ``scoring.stats.bootstrap_rank_intervals``).
    rank_low: int | None = None
    rank_high: int | None = None
    #: "leader", "tied" (not separable from the leader by a paired test on shared scenarios) or "".
    standing: str = ""
    tie_p_value: float | None = None
    #: A published number the platform did not run (ReportedResult); ``submission_id`` is then None.
    is_reported: bool = False
    source: str = ""
    #: A reported number's own protocol and caveat, as its publication states them: repeats per
    #: scenario, the ± it gives for the score (e.g. the paper's δ between repeats), and a note.
    reported_repeats: int | None = None
    reported_uncertainty: float | None = None
    note: str = ""
    #: The publication's table the score comes from, and the one its IA/RA come from ("" where not known);
    #: a reported row's ``n_scenarios`` is the count the publication measured it on (0: not stated).
    reported_table: str = ""
    reported_ia_ra_table: str = ""
    #: Settings that make the entry a labelled variant of the official protocol (e.g. parse retries):
    #: shown, never ranked.
    variant: tuple[str, ...] = ()
    #: The model's prices per million tokens (USD), when its team gave them.
    price_input_per_mtok: float | None = None
    price_output_per_mtok: float | None = None
    #: When the entry was submitted (reported numbers have no date on the platform).
    submitted_at: datetime | None = None
    #: How many scenarios the board has: an entry scoring fewer of them is not complete.
    board_scenarios: int = 0
    #: When its stored result was computed (None: summarised from its attempts for this board): what
    #: the board's stored paired tests and analysis aggregates of the entry were computed from.
    result_stamp: datetime | None = field(default=None, repr=False, compare=False)

    @property
    def incomplete(self) -> bool:
        return self.status == Submission.Status.INCOMPLETE or self.n_scored < self.n_attempts

    @property
    def cost_per_scenario(self) -> float | None:
        """USD for one run of a scenario, averaged over scenarios: the measured tokens at the model's
        prices (the tokens are stored with the result, the prices read now, so a price set later counts)."""
        return token_cost(self.prompt_tokens_per_scenario, self.completion_tokens_per_scenario,
                          self.price_input_per_mtok, self.price_output_per_mtok)

    @property
    def complete(self) -> bool:
        """Whether the entry's scored scenarios cover the board's: only complete entries are ranked
        by default, since a mean over 2 of 10 scenarios is not comparable with one over all 10."""
        return self.is_reported or self.n_scenarios >= self.board_scenarios

    @property
    def search_text(self) -> str:
        """What the board's search box matches (here and in the page's script): model and team."""
        return f"{self.model} {self.team}".casefold()

    def as_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank, "rank95_low": self.rank_low, "rank95_high": self.rank_high,
            "submission": self.submission_id, "model": self.model, "team": self.team,
            "organisation": self.organisation, "parameter_count": self.parameter_count,
            "open_weights": self.open_weights, "baseline": self.is_baseline, "status": self.status,
            "mean": self.mean, "se": self.se, "ci95_low": self.ci_low, "ci95_high": self.ci_high,
            "standing": self.standing, "tie_p_value": self.tie_p_value, "scenarios": self.n_scenarios,
            "scored_attempts": self.n_scored,
            "attempts": self.n_attempts, "infra_failed_attempts": self.n_infra_failed,
            "ia_pct": self.ia_pct, "ra_pct": self.ra_pct, "incomplete": self.incomplete,
            "prompt_version": self.prompt_version, "verified": self.verified, "private": self.is_private,
            "rescoring": self.rescoring, "reported": self.is_reported, "source": self.source,
            "reported_repeats": self.reported_repeats, "reported_uncertainty": self.reported_uncertainty,
            "note": self.note,
            "variant": list(self.variant), "complete": self.complete,
            "submitted_at": self.submitted_at.isoformat() if self.submitted_at else None,
            **{f"lost_{k}_pct": v for k, v in (self.breakdown or {}).items()},
            "measured_attempts": self.effort_attempts, "token_attempts": self.token_attempts,
            "model_calls_per_scenario": self.model_calls_per_scenario,
            "prompt_tokens_per_scenario": self.prompt_tokens_per_scenario,
            "completion_tokens_per_scenario": self.completion_tokens_per_scenario,
            "tokens_per_scenario": self.tokens_per_scenario, "seconds_per_scenario": self.seconds_per_scenario,
            "prompt_tokens_total": self.prompt_tokens_total, "completion_tokens_total": self.completion_tokens_total,
            "price_input_per_mtok": self.price_input_per_mtok, "price_output_per_mtok": self.price_output_per_mtok,
            "cost_per_scenario_usd": self.cost_per_scenario,
        }


@dataclass
class Board:
    env: str
    title: str
    score_label: str
    flow: str
    subset: str
    suite: str
    scenario_count: int
    has_action_diagnostics: bool = True
    breakdown_keys: tuple[str, ...] = ()
    rows: list[BoardRow] = field(default_factory=list)
    #: Scenarios of the board run by the plug-in's import-time check (``scenario_check``), and the
    #: keys of those the check flagged as not evaluable as intended.
    checked_scenarios: int = 0
    flagged_scenarios: list[str] = field(default_factory=list)
    #: The plug-in's note on the board's scenarios (``scenario_note``), e.g. Sokoban's score floor.
    note: str = ""
    #: The prompt set the rows ran with (the suite's current one unless the visitor picked another).
    prompts: PromptSet | None = None
    #: Every prompt set the board has entries of, or that is current: one board generation each.
    generations: list[PromptGeneration] = field(default_factory=list)
    #: How many entries the board has, where ``rows`` holds some of them only (the home page's cards).
    entries: int | None = None

    @property
    def reported_scenarios(self) -> list[int]:
        """The scenario counts the board's reported rows were measured on (by their publication), each once."""
        return sorted({row.n_scenarios for row in self.rows if row.is_reported and row.n_scenarios})

    @property
    def has_status(self) -> bool:
        """Whether any row says why it is not ranked or where it comes from (the Status column's text)."""
        return any((row.is_reported and row.note) or not row.complete or row.incomplete for row in self.rows)

    @property
    def has_reported(self) -> bool:
        return any(row.is_reported for row in self.rows)

    @property
    def rank_resamples(self) -> int:
        """How many bootstrap resamples of the scenarios each rank interval is read from."""
        return RANK_RESAMPLES

    @property
    def interval_points(self) -> list[dict[str, Any]]:
        """The rows the board's interval chart draws (those with a bootstrap interval), in the
        rows' order: a label, the mean, its 95 % interval and rank interval, and what kind of row."""
        points = []
        for row in self.rows:
            if row.mean is None or row.ci_low is None or row.ci_high is None:
                continue
            kind = "baseline" if row.is_baseline else "ranked" if row.rank else "unranked"
            # An unranked row (a baseline, an incomplete entry) has no rank to show: its name stands alone.
            name = f"{row.rank} · {row.model}" if row.rank else row.model
            points.append({"label": f"{name} ({row.team})", "name": name, "mean": row.mean,
                           "low": row.ci_low, "high": row.ci_high, "kind": kind, "rank_low": row.rank_low,
                           "rank_high": row.rank_high})
        return points


@dataclass(frozen=True)
class PromptGeneration:
    """The entries of a board that ran with one prompt set: never ranked with another's."""

    version: str
    source: str
    entries: int
    current: bool
    #: Its texts, where the catalogue still holds them.
    prompts: PromptSet | None = None
