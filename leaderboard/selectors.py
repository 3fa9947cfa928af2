"""Reads for boards, metric cards and scenarios."""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.db.models import Q

from config.env import parse_bool
from evaluators.agents.diagnostics import DEFINITIONS as DIAGNOSTIC_DEFINITIONS
from evaluators.agents.requests import REQUEST_NOTES
from evaluators.base import PROMPTS_PLATFORM, PromptSet, all_plugins, get_plugin
from evaluators.settings import EvaluationSettings, declared_defaults
from leaderboard.catalogue import default_suite, suites_for
from leaderboard.cost import CostPoint, pareto_frontier, token_cost
from leaderboard.models import ReportedResult, Scenario, StoredBoardRanking
from leaderboard.prompt_sets import prompt_set_current, prompt_set_get
from leaderboard.stats import CurvePoint, EntrySummary, summarise_entry
from submissions.models import Submission
from submissions.selectors import attempt_outcomes

SUITE_NAME = re.compile(r"[-a-zA-Z0-9_]{1,32}")
PROMPT_VERSION = re.compile(r"[-a-zA-Z0-9_.]{1,64}")
RANKED_STATUSES = (Submission.Status.COMPLETED, Submission.Status.INCOMPLETE)
logger = logging.getLogger(__name__)


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
    #: "leader", "tied" (not separable from the leader by a paired test on shared scenarios) or "".
    standing: str = ""
    tie_p_value: float | None = None
    #: A published number the platform did not run (ReportedResult); ``submission_id`` is then None.
    is_reported: bool = False
    source: str = ""
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
            "rank": self.rank, "submission": self.submission_id, "model": self.model, "team": self.team,
            "organisation": self.organisation, "parameter_count": self.parameter_count,
            "open_weights": self.open_weights, "baseline": self.is_baseline, "status": self.status,
            "mean": self.mean, "se": self.se, "ci95_low": self.ci_low, "ci95_high": self.ci_high,
            "standing": self.standing, "tie_p_value": self.tie_p_value, "scenarios": self.n_scenarios,
            "scored_attempts": self.n_scored,
            "attempts": self.n_attempts, "infra_failed_attempts": self.n_infra_failed,
            "ia_pct": self.ia_pct, "ra_pct": self.ra_pct, "incomplete": self.incomplete,
            "prompt_version": self.prompt_version, "verified": self.verified, "private": self.is_private,
            "rescoring": self.rescoring, "reported": self.is_reported, "source": self.source,
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


@dataclass(frozen=True)
class PromptGeneration:
    """The entries of a board that ran with one prompt set: never ranked with another's."""

    version: str
    source: str
    entries: int
    current: bool
    #: Its texts, where the catalogue still holds them.
    prompts: PromptSet | None = None


#: Parameter-size buckets for filtering (label, lower bound inclusive, upper bound exclusive).
SIZE_BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("<10B", 0, 10e9), ("10-40B", 10e9, 40e9), ("40-100B", 40e9, 100e9), (">100B", 100e9, float("inf")),
)
UNKNOWN_SIZE = "unknown"


def size_bucket(parameter_count: int | None) -> str:
    if parameter_count is None:
        return UNKNOWN_SIZE
    return next(label for label, low, high in SIZE_BUCKETS if low <= parameter_count < high)


@dataclass(frozen=True)
class BoardFilter:
    """What a visitor narrowed the board to. Baseline rows are always kept: they are the reference."""

    open_weights: bool = False
    size: str = ""
    organisation: str = ""
    best_per_team: bool = False
    #: Rank published (reported) numbers among the platform's own runs; off by default.
    rank_reported: bool = False
    #: Only entries the maintainers checked (reported numbers are not runs, so they go too).
    verified_only: bool = False
    #: Rank entries whose scored scenarios do not cover the board's among complete ones; off by default.
    rank_incomplete: bool = False
    #: Search over model and team names (case-insensitive substring). Unlike the other filters it
    #: keeps the board's ranks, and baselines too only when they match: it finds rows, it does not
    #: redefine the competition.
    search: str = ""
    #: Another prompt set's generation of the board than the current one (its version).
    prompts: str = ""

    @classmethod
    def from_query(cls, query: Any) -> BoardFilter:
        def flag(name: str) -> bool:
            return parse_bool(query.get(name, "")) is True

        size = str(query.get("size", ""))
        known_sizes = {b[0] for b in SIZE_BUCKETS} | {UNKNOWN_SIZE}
        return cls(open_weights=flag("open"), size=size if size in known_sizes else "",
                   organisation=str(query.get("org", "")).strip(), best_per_team=flag("best"),
                   rank_reported=flag("reported"), verified_only=flag("verified"),
                   rank_incomplete=flag("incomplete"), search=" ".join(str(query.get("q", "")).split())[:100],
                   prompts=prompts if PROMPT_VERSION.fullmatch(prompts := str(query.get("prompts", ""))) else "")

    @property
    def active(self) -> bool:
        return self != BoardFilter()

    def query(self, *, suite: str) -> str:
        """The query string that selects this filter on ``suite``'s board (``from_query`` reads it back)."""
        params = {"suite": suite, "open": "1" if self.open_weights else "", "size": self.size, "org": self.organisation,
                  "best": "1" if self.best_per_team else "", "reported": "1" if self.rank_reported else "",
                  "verified": "1" if self.verified_only else "", "incomplete": "1" if self.rank_incomplete else "",
                  "q": self.search, "prompts": self.prompts}
        return urlencode({name: value for name, value in params.items() if value})

    def keeps(self, row: BoardRow) -> bool:
        if row.is_baseline:
            return True
        if self.open_weights and not row.open_weights:
            return False
        if self.verified_only and not row.verified:
            return False
        if self.size and size_bucket(row.parameter_count) != self.size:
            return False
        return not self.organisation or row.organisation.casefold() == self.organisation.casefold()

    def found(self, rows: list[BoardRow]) -> list[BoardRow]:
        """The rows the search matches (all of them without a search)."""
        needle = self.search.casefold()
        return [row for row in rows if needle in row.search_text] if needle else rows

    def apply(self, rows: list[BoardRow]) -> list[BoardRow]:
        kept = [row for row in rows if self.keeps(row)]
        if not self.best_per_team:
            return kept
        best: dict[str, BoardRow] = {}
        for row in kept:
            if row.is_baseline or row.is_reported or row.mean is None:
                continue
            if row.team not in best or row.mean > (best[row.team].mean or 0.0):
                best[row.team] = row
        return [row for row in kept if row.is_baseline or row.is_reported or best.get(row.team) is row]


def _by_scenario(mapping: Any) -> dict[int, Any]:
    return {int(key): value for key, value in (mapping or {}).items()}


#: The numbers of an entry's stored result a board reads (its per-scenario fields only when detailed).
_RESULT_NUMBERS = tuple(name for name in EntrySummary().numbers()
                        if name not in EntrySummary.PER_SCENARIO and name != "best_of_n")
_ENTRY_FIELDS = ("id", "model_id", "model__name", "team__name", "model__organisation", "model__parameter_count",
                 "model__open_weights", "model__price_input_per_mtok", "model__price_output_per_mtok", "is_baseline",
                 "status", "verified", "is_public", "source", "rescoring", "settings", "created_at",
                 "result__computed_at", *(f"result__{name}" for name in _RESULT_NUMBERS))
_DETAIL_FIELDS = tuple(f"result__{name}" for name in EntrySummary.PER_SCENARIO)


@dataclass
class _Entry:
    """One submission of a board as its query returns it: plain values, no model instances (a full
    board is hundreds of entries, and the home page builds ten boards)."""

    values: dict[str, Any]

    @property
    def id(self) -> int:
        return self.values["id"]

    @property
    def created_at(self) -> datetime:
        return self.values["created_at"]

    def summary(self, detail: bool) -> tuple[EntrySummary, datetime] | None:
        """Its stored result's numbers and when they were computed; None without a stored result."""
        stamp = self.values["result__computed_at"]
        if stamp is None:
            return None
        numbers = {name: self.values[f"result__{name}"] for name in _RESULT_NUMBERS}
        # Best-of-N curves come with the boards that draw them only.
        numbers["best_of_n"] = [CurvePoint(*point) for point in self.values.get("result__best_of_n") or []]
        # The per-scenario fields come with a detailed board only; a board's ties and its analysis
        # read what they need of them from their own stored aggregates (``leaderboard.stored``).
        per_scenario: dict[str, Any] = {name: _by_scenario(self.values[f"result__{name}"])
                        for name in (EntrySummary.PER_SCENARIO if detail else ())}
        return EntrySummary(**numbers, **per_scenario), stamp


def _evaluations(entries: list[_Entry], env: str, flow: str, subset: str) -> dict[int, EvaluationSettings]:
    """Each entry's evaluation settings, read once per distinct stored form: a full board's entries
    mostly share theirs."""
    import json

    known: dict[str, EvaluationSettings] = {}
    evaluations = {}
    for entry in entries:
        settings = entry.values["settings"] or {}
        key = json.dumps(settings, sort_keys=True, default=str)
        if key not in known:
            known[key] = EvaluationSettings.from_mapping(settings, env, flow, subset=subset, platform=True)
        evaluations[entry.id] = known[key]
    return evaluations


def visible_entries(viewer_team_ids: Collection[int] = ()) -> Q:
    """Entries a board shows: public ones and baselines, plus the viewer's own teams' private ones;
    never what the maintainers hid."""
    return (Q(is_public=True) | Q(is_baseline=True) | Q(team_id__in=list(viewer_team_ids))) & Q(hidden=False)


def board_get(*, env: str, flow: str, subset: str, suite: str | None = None,
              filters: BoardFilter | None = None, detail: bool = False, curves: bool = False,
              viewer_team_ids: Collection[int] = ()) -> Board:
    """One board; ``suite`` None is the environment's default suite. Unknown names raise
    KeyError (environment) or ValueError (flow, subset). ``detail`` also loads every entry's
    per-scenario means, repeats and replay links, ``curves`` its best-of-N curve (the analysis
    page draws them; the board does not)."""
    plugin = get_plugin(env)
    if suite and not SUITE_NAME.fullmatch(suite):
        raise ValueError("a suite is named by a slug")  # and a NUL byte would reach PostgreSQL
    suite = suite or default_suite(env)
    if flow not in plugin.flows or subset not in ("mini", "full"):
        raise ValueError("unknown flow or subset")
    queryset = (Submission.objects
                .filter(visible_entries(viewer_team_ids), environment_id=env, flow=flow, subset=subset, suite=suite,
                        status__in=RANKED_STATUSES)
                .order_by("-created_at", "-id")
                .values(*_ENTRY_FIELDS, *(_DETAIL_FIELDS if detail else ()),
                        *(("result__best_of_n",) if curves or detail else ())))
    current = prompt_set_current(env, suite, flow)
    shown_version = filters.prompts if filters is not None and filters.prompts else current.version
    every = [_Entry(values) for values in queryset]
    evaluations = _evaluations(every, env, flow, subset)
    generations = _generations(every, evaluations, current, shown_version, (env, suite, flow))
    entries = [entry for entry in every if evaluations[entry.id].prompt_version == shown_version]
    stored = {entry.id: entry.summary(detail) for entry in entries}
    summaries: dict[int, EntrySummary] = {}
    stamps: dict[int, datetime] = {}
    for submission_id, found in stored.items():
        if found is not None:
            summaries[submission_id], stamps[submission_id] = found
    # A finished submission gets its stored result when it finishes; one from before that existed
    # (or whose result was deleted) is summarised from its attempts here, the same way.
    missing = [submission_id for submission_id, found in stored.items() if found is None]
    if missing:
        for submission_id, outcomes in attempt_outcomes(missing, with_breakdown=bool(plugin.breakdown_keys)).items():
            summaries[submission_id] = summarise_entry(outcomes, plugin.breakdown_keys)
    rows = []
    for entry in entries:
        values = entry.values
        summary = summaries[entry.id]
        evaluation = evaluations[entry.id]
        rows.append(BoardRow(
            submission_id=entry.id, model=values["model__name"], model_id=values["model_id"],
            team=values["team__name"], organisation=values["model__organisation"],
            parameter_count=values["model__parameter_count"], open_weights=values["model__open_weights"],
            is_baseline=values["is_baseline"], status=values["status"], verified=values["verified"],
            is_private=not (values["is_public"] or values["is_baseline"]),
            rescoring=values["rescoring"] if values["source"] == Submission.Source.UPLOAD else "",
            prompt_version=evaluation.prompt_version, variant=tuple(evaluation.variant_names()),
            price_input_per_mtok=values["model__price_input_per_mtok"],
            price_output_per_mtok=values["model__price_output_per_mtok"], submitted_at=entry.created_at,
            result_stamp=stamps.get(entry.id), **summary.numbers()))
    if suite == "official":
        # Published numbers belong to the official scenarios only.
        rows.extend(_reported_rows(env, flow, subset))
    if filters is not None:
        rows = filters.apply(rows)
    # The plug-in's note (e.g. Sokoban's score floor) reads one field of each scenario, in the same query.
    # So does the import-time check's status (one key of the tags, not all of them).
    note_field = f"data__{plugin.scenario_note_field}" if plugin.scenario_note_field else "key"
    check = plugin.scenario_check
    shown = list(Scenario.objects.filter(environment_id=env, suite=suite, **Scenario.subset_filter(subset))
                 .order_by("key").values_list("key", f"tags__{check}" if check else "key", note_field))
    for row in rows:
        row.board_scenarios = len(shown)
    rank_reported = filters is not None and filters.rank_reported
    rank_incomplete = filters is not None and filters.rank_incomplete
    # Entries left out of the ranking for covering too few scenarios come after the ranked ones.
    rows.sort(key=lambda r: (not (r.complete or rank_incomplete), r.mean is None, -(r.mean or 0.0),
                             r.submission_id or 0))
    rank = 0
    for row in rows:
        if (not row.is_baseline and not row.variant and row.mean is not None and (rank_reported or not row.is_reported)
                and (rank_incomplete or row.complete)):
            rank += 1
            row.rank = rank
    _mark_ties(rows)
    if filters is not None:
        rows = filters.found(rows)
    checks = {key: status for key, status, _ in shown if check and status}
    return Board(env=env, title=plugin.title, score_label=plugin.score_label, flow=flow, subset=subset, suite=suite,
                 scenario_count=len(shown), has_action_diagnostics=plugin.has_action_diagnostics,
                 breakdown_keys=plugin.breakdown_keys, rows=rows, checked_scenarios=len(checks),
                 flagged_scenarios=[key for key, status in checks.items() if status == "flagged"],
                 note=plugin.scenario_note([value for _, _, value in shown]) if plugin.scenario_note_field else "",
                 prompts=next((g.prompts for g in generations if g.version == shown_version), None),
                 generations=generations)


def _generations(submissions: list[_Entry], evaluations: dict[int, EvaluationSettings], current: PromptSet, shown: str,
                 board: tuple[str, str, str]) -> list[PromptGeneration]:
    """The board's generations: the current prompt set's first, then the others newest entry first."""
    counts: dict[str, int] = {}
    for submission in sorted(submissions, key=lambda s: s.created_at, reverse=True):
        version = evaluations[submission.id].prompt_version
        counts[version] = counts.get(version, 0) + 1
    versions = [current.version] + [v for v in counts if v != current.version]
    if shown not in versions:
        versions.append(shown)
    generations = []
    for version in versions:
        # A version the catalogue no longer holds is an earlier platform wording.
        prompts = current if version == current.version else prompt_set_get(*board, version)
        generations.append(PromptGeneration(
            version=version, source=prompts.source if prompts else PROMPTS_PLATFORM, entries=counts.get(version, 0),
            current=version == current.version, prompts=prompts))
    return generations


def _reported_rows(env: str, flow: str, subset: str) -> list[BoardRow]:
    return [
        BoardRow(submission_id=None, model=r.model_name, team=r.organisation or "reported", organisation=r.organisation,
                 parameter_count=r.parameter_count, open_weights=r.open_weights, is_baseline=False, status="reported",
                 mean=r.score, ia_pct=r.ia_pct, ra_pct=r.ra_pct, is_reported=True, source=r.source)
        for r in ReportedResult.objects.filter(environment_id=env, flow=flow, subset=subset)
    ]


def _mark_ties(rows: list[BoardRow]) -> None:
    """Mark the leader and every entry a paired test on shared scenarios cannot separate from it
    (tests computed once and stored: ``leaderboard.stored.paired_tests``)."""
    from leaderboard.stored import paired_tests

    leader = next((row for row in rows if row.rank == 1), None)
    if leader is None:
        return
    leader.standing = "leader"
    others = [row for row in rows if row is not leader and row.mean is not None]
    for row, test in zip(others, paired_tests(leader, others), strict=True):
        row.tie_p_value = test.p_value
        if test.n_shared and test.tied:
            row.standing = "tied"


@dataclass
class OverviewCell:
    mean: float | None
    se: float | None
    submission_id: int | None
    incomplete: bool


@dataclass
class OverviewRow:
    model: str
    team: str
    is_baseline: bool
    cells: list[OverviewCell | None]
    model_id: int | None = None


@dataclass
class Overview:
    """One column per environment × flow, like the paper's Table 1; each model's best entry per cell."""

    subset: str
    columns: list[Board]
    rows: list[OverviewRow]


@dataclass(frozen=True)
class OverviewEntry:
    """What the overview reads of a board's row: a row with a score, run here (no reported number)."""

    team: str
    model: str
    model_id: int | None
    is_baseline: bool
    mean: float
    se: float | None
    submission_id: int | None
    incomplete: bool

    @classmethod
    def of_rows(cls, rows: list[BoardRow]) -> list[OverviewEntry]:
        from leaderboard.stored import ranking_cells

        return [cls(*cell) for cell in ranking_cells(rows)]


def overview_get(*, subset: str = "mini", boards: list[Board] | None = None) -> Overview:
    """``boards`` already built by the caller (default suites) are reused instead of read again."""
    known = {(b.env, b.flow, b.subset): b for b in boards or []}
    columns = [known.get((plugin.slug, flow, subset)) or board_get(env=plugin.slug, flow=flow, subset=subset)
               for plugin in all_plugins() for flow in plugin.flows]
    return _overview(subset, columns, [OverviewEntry.of_rows(board.rows) for board in columns])


def overview_of(subset: str, ranked: list[RankedBoard]) -> Overview:
    """The overview of boards read by ``boards_ranked_get`` (one per column, in the columns' order):
    the same as ``overview_get``'s of the same boards, from what they stored of every row."""
    return _overview(subset, [board.board for board in ranked], [board.overview for board in ranked])


def _overview(subset: str, columns: list[Board], entries: list[list[OverviewEntry]]) -> Overview:
    by_model: dict[tuple[str, str], OverviewRow] = {}
    for index, column in enumerate(entries):
        for row in column:
            key = (row.team, row.model)
            entry = by_model.setdefault(key, OverviewRow(row.model, row.team, row.is_baseline, [None] * len(columns),
                                                            row.model_id))
            current = entry.cells[index]
            if current is None or (current.mean is not None and row.mean > current.mean):
                entry.cells[index] = OverviewCell(row.mean, row.se, row.submission_id, row.incomplete)
    rows = sorted(by_model.values(), key=lambda r: (r.is_baseline, r.model.casefold()))
    return Overview(subset=subset, columns=columns, rows=rows)


@dataclass
class RankedBoard:
    """A board's default view (anonymous visitors, its default suite and current prompt set, no
    filter) as the home page reads it: the board with its first rows only (``entries`` counts them
    all), and what the overview reads of every row. Read from a stored ranking, the board carries
    neither its prompt set nor its generations (the home page shows neither)."""

    board: Board
    overview: list[OverviewEntry]


def _ranked_from(ranking: StoredBoardRanking, head: int) -> RankedBoard | None:
    """A stored ranking as the board it holds, with its first ``head`` rows (parsed: the others are
    left as text); None when it cannot be read as this code writes it (ranked again instead)."""
    from leaderboard.stored import ranking_row_load

    plugin = get_plugin(ranking.env)
    try:
        rows = [ranking_row_load(line) for line in ranking.rows.split("\n", head)[:head] if line]
        overview = [OverviewEntry(*cell) for cell in json.loads(ranking.cells)]
        return RankedBoard(
            board=Board(env=ranking.env, title=plugin.title, score_label=plugin.score_label, flow=ranking.flow,
                        subset=ranking.subset, suite=ranking.suite, scenario_count=ranking.board["scenario_count"],
                        has_action_diagnostics=plugin.has_action_diagnostics, breakdown_keys=plugin.breakdown_keys,
                        rows=rows, checked_scenarios=ranking.board["checked_scenarios"],
                        flagged_scenarios=list(ranking.board["flagged_scenarios"]), note=ranking.board["note"],
                        entries=ranking.entries),
            overview=overview)
    except (ValueError, TypeError, KeyError):
        logger.warning("could not read the stored ranking of %s/%s/%s", ranking.env, ranking.flow, ranking.subset,
                       exc_info=True)
        return None


def boards_ranked_get(boards: list[tuple[str, str, str]], *, head: int) -> list[RankedBoard]:
    """Each board's default view with its first ``head`` rows, in the order asked, read from its
    stored ranking (``StoredBoardRanking``) where that is current: one query for the boards'
    generations, one for every ranking. A board whose ranking is absent or stale is ranked now, as
    its page ranks it, and stored (``leaderboard.stored.board_rankings_store``); its rows are
    ``board_get``'s either way, field for field."""
    from datetime import timedelta

    from django.conf import settings
    from django.utils import timezone

    from leaderboard.stored import board_rankings_store, ranking_fingerprint, ranking_generations, rankings_uncommitted

    if not boards:
        return []
    # The generations first: a ranking stored before a write that moved them on is never read.
    generations = ranking_generations(boards)
    wanted = Q()
    for env, flow, subset in boards:
        wanted |= Q(env=env, flow=flow, subset=subset)
    # A ranking is kept no longer than a cached page, so that a change no write announced (a renamed
    # team) shows within the same time; with the board cache off (0), every build ranks the boards.
    age = settings.MAGEBENCH_BOARD_CACHE_SECONDS
    oldest = timezone.now() - timedelta(seconds=age) if age > 0 else None
    # Inside a write's transaction the generations have not moved yet: what it changed is ranked again.
    uncommitted = rankings_uncommitted(boards)
    stored = {(ranking.env, ranking.flow, ranking.subset): ranking
              for ranking in StoredBoardRanking.objects.filter(wanted)}
    ranked = []
    ranked_now: list[tuple[Board, tuple[int, int]]] = []
    for env, flow, subset in boards:
        ranking = stored.get((env, flow, subset))
        current = (ranking is not None and oldest is not None and ranking.computed_at >= oldest
                   and (ranking.everything_generation, ranking.board_generation) == generations[(env, flow, subset)]
                   and ranking.fingerprint == ranking_fingerprint(env, flow)
                   and (env, flow, subset) not in uncommitted)
        found = _ranked_from(ranking, head) if ranking is not None and current else None
        if found is None:
            board = board_get(env=env, flow=flow, subset=subset)
            # Stored as of the generations read above, before it was ranked.
            ranked_now.append((board, generations[(env, flow, subset)]))
            found = RankedBoard(board=replace(board, rows=board.rows[:head], entries=len(board.rows)),
                                overview=OverviewEntry.of_rows(board.rows))
        ranked.append(found)
    # Every row of them: the boards returned are copies holding the head only.
    board_rankings_store(ranked_now)
    return ranked


def board_organisations(*, env: str, flow: str, subset: str, suite: str) -> list[str]:
    """Organisations with a ranked entry on the board, for its filter (whatever filter is applied)."""
    names = (Submission.objects.filter(visible_entries(), environment_id=env, flow=flow, subset=subset, suite=suite,
                                       status__in=RANKED_STATUSES, is_baseline=False)
             .exclude(model__organisation="").values_list("model__organisation", flat=True).distinct())
    return sorted(set(names))


def metric_card(env: str) -> dict[str, Any]:
    plugin = get_plugin(env)
    return {
        "env": env,
        "title": plugin.title,
        "card": getattr(plugin, "metric_card", {}),
        "prompts": {flow: plugin.prompts(flow) for flow in plugin.flows},
        "suite_prompts": [(suite, flow, prompt_set_current(env, suite, flow))
                          for suite in suites_for(env) for flow in plugin.flows],
        "request_notes": REQUEST_NOTES,
        "defaults": {flow: declared_defaults(plugin, flow) for flow in plugin.flows},
        "diagnostics": DIAGNOSTIC_DEFINITIONS,
        "action_diagnostics": plugin.has_action_diagnostics,
        "scenario_notes": scenario_notes(env),
    }


#: The cost page's x axes: USD per scenario at the models' prices, or the tokens measured.
COST_AXES = {"usd": "Cost per scenario (USD)", "tokens": "Tokens per scenario"}


@dataclass
class CostEntry:
    row: BoardRow
    cost: float | None
    on_frontier: bool
    #: Why the entry has no place on the chart ("" when it has one).
    excluded: str = ""


@dataclass
class BoardCost:
    """A board's entries placed by score against what one run of a scenario cost them, with the
    Pareto frontier: the entries no other beats on both (``leaderboard.cost.pareto_frontier``)."""

    board: Board
    axis: str
    #: Entries with a cost in USD (the page offers USD only when there are any).
    priced: int
    entries: list[CostEntry]

    @property
    def axis_label(self) -> str:
        return COST_AXES[self.axis]

    @property
    def placed(self) -> list[CostEntry]:
        return [entry for entry in self.entries if not entry.excluded]

    @property
    def frontier(self) -> list[CostEntry]:
        return sorted((e for e in self.entries if e.on_frontier), key=lambda e: (e.cost, -(e.row.mean or 0.0)))

    def chart_data(self) -> dict[str, Any]:
        def point(entry: CostEntry) -> dict[str, Any]:
            row = entry.row
            return {"label": row.model, "team": row.team, "x": entry.cost, "y": row.mean,
                    "low": row.ci_low, "high": row.ci_high, "frontier": entry.on_frontier,
                    "baseline": row.is_baseline, "submission": row.submission_id}

        return {"axis": self.axis, "x_label": self.axis_label, "y_label": self.board.score_label,
                "points": [point(e) for e in self.placed], "frontier": [[e.cost, e.row.mean] for e in self.frontier]}


def board_cost_get(*, env: str, flow: str, subset: str, suite: str | None = None, axis: str = "") -> BoardCost:
    """The cost view of a board's public entries and baselines (the platform's own runs: published
    numbers carry no measured effort). ``axis`` "" is USD when any entry has a price, else tokens."""
    board = board_get(env=env, flow=flow, subset=subset, suite=suite)
    rows = [row for row in board.rows if row.submission_id is not None]
    priced = sum(1 for row in rows if row.cost_per_scenario is not None)
    if axis not in COST_AXES:
        axis = "usd" if priced else "tokens"

    def cost_of(row: BoardRow) -> float | None:
        return row.cost_per_scenario if axis == "usd" else row.tokens_per_scenario

    def why_not(row: BoardRow) -> str:
        if row.mean is None:
            return "no scored attempt"
        if not row.effort_attempts:
            return "not measured (uploaded outputs)"
        if row.tokens_per_scenario is None:
            return "the endpoint reported no token counts"
        return "the model has no prices" if axis == "usd" else ""

    frontier = pareto_frontier([CostPoint(key=row.submission_id, score=row.mean, cost=cost_of(row)) for row in rows])
    entries = [CostEntry(row=row, cost=cost_of(row), on_frontier=row.submission_id in frontier.keys,
                         excluded="" if cost_of(row) is not None and row.mean is not None else why_not(row))
               for row in rows]
    entries.sort(key=lambda e: (bool(e.excluded), e.cost if e.cost is not None else 0.0, -(e.row.mean or 0.0)))
    return BoardCost(board=board, axis=axis, priced=priced, entries=entries)
def scenario_notes(env: str) -> list[tuple[str, str]]:
    """The plug-in's note on each suite's scenarios (every subset), for the metric card."""
    plugin = get_plugin(env)
    if not plugin.scenario_note_field:
        return []
    values: dict[str, list[Any]] = {}
    for suite, value in (Scenario.objects.filter(environment_id=env).order_by("suite", "key")
                         .values_list("suite", f"data__{plugin.scenario_note_field}")):
        values.setdefault(suite, []).append(value)
    notes = [(suite, plugin.scenario_note(found)) for suite, found in values.items()]
    return [(suite, note) for suite, note in notes if note]


def _rank_key(row: BoardRow) -> int | None:
    return row.rank


#: The board's columns a visitor can sort by (the ``sort`` query parameter, named as the table's
#: ``data-col`` headers are), each with its value for a row; a missing value (None) sorts last.
SORT_COLUMNS: dict[str, Callable[[BoardRow], Any]] = {
    "rank": _rank_key,
    "model": lambda row: row.model.casefold(),
    "team": lambda row: row.team.casefold(),
    "date": lambda row: row.submitted_at,
    "score": lambda row: row.mean,
    "se": lambda row: row.se,
    "ci": lambda row: row.ci_low,
    "ia": lambda row: row.ia_pct,
    "ra": lambda row: row.ra_pct,
    "tokens": lambda row: row.tokens_per_scenario,
    "cost": lambda row: row.cost_per_scenario,
    "attempts": lambda row: None if row.is_reported else row.n_scored,
}
#: Columns whose first click sorts low to high (names, ranks, what a run costs); every other starts
#: high to low.
ASCENDING_FIRST = frozenset({"rank", "model", "team", "tokens", "cost"})


@dataclass(frozen=True)
class BoardSort:
    """The column a visitor sorted the board by, and the direction; the default is the ranking's order."""

    column: str = ""
    descending: bool = False

    @classmethod
    def from_query(cls, query: Any) -> BoardSort:
        column = str(query.get("sort", ""))
        if column not in SORT_COLUMNS:
            return cls()
        direction = str(query.get("dir", ""))
        descending = direction == "desc" if direction in ("asc", "desc") else column not in ASCENDING_FIRST
        return cls(column=column, descending=descending)

    @property
    def direction(self) -> str:
        return "desc" if self.descending else "asc"

    @property
    def shown_column(self) -> str:
        """The column the rows are in the order of: the score's, best first, unless another was asked for."""
        return self.column or "score"

    @property
    def shown_direction(self) -> str:
        return self.direction if self.column else "desc"

    def apply(self, rows: list[BoardRow]) -> list[BoardRow]:
        if not self.column:
            return rows
        value = SORT_COLUMNS[self.column]
        present = [row for row in rows if value(row) is not None]
        missing = [row for row in rows if value(row) is None]
        # Stable: rows with equal values keep the ranking's order.
        return sorted(present, key=value, reverse=self.descending) + missing


def parameters_label(parameter_count: int | None) -> str:
    """A parameter count as people write it: 7B, 1.5B, 400M, 1.2T ("" when unknown)."""
    if parameter_count is None:
        return ""
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if parameter_count >= size:
            return f"{parameter_count / size:.3g}{unit}"
    return str(parameter_count)


@dataclass
class ModelBoardEntry:
    """One visible entry of a model: the board it is on and its row there (numbers, rank, standing)."""

    env: str
    env_title: str
    score_label: str
    flow: str
    subset: str
    suite: str
    row: BoardRow


@dataclass
class ModelEnvironmentBest:
    """A model's best entry on one environment (complete entries first), for the page's chart."""

    env: str
    title: str
    score_label: str
    entry: ModelBoardEntry


@dataclass
class ModelPage:
    id: int
    name: str
    team: str
    organisation: str
    parameter_count: int | None
    open_weights: bool
    licence: str
    link: str
    is_baseline: bool
    entries: list[ModelBoardEntry]
    best: list[ModelEnvironmentBest]

    @property
    def parameters(self) -> str:
        return parameters_label(self.parameter_count)


def model_page_get(*, model_id: int, viewer_team_ids: Collection[int] = ()) -> ModelPage | None:
    """A model's page as a visitor may see it: its metadata and every entry it has on a board that the
    board would show the visitor (``visible_entries``), each with its row there, so that numbers, rank
    and the incomplete mark are the board's own. None when the visitor may not see the model at all:
    neither a baseline, nor theirs, nor with any entry they can see."""
    from submissions.models import ModelEntry

    model = ModelEntry.objects.select_related("team").filter(id=model_id).first()
    if model is None:
        return None
    boards = list(Submission.objects
                  .filter(visible_entries(viewer_team_ids), model_id=model_id, status__in=RANKED_STATUSES)
                  .values_list("environment_id", "flow", "subset", "suite").distinct()
                  .order_by("environment_id", "flow", "subset", "suite"))
    if not (boards or model.is_baseline or model.team_id in viewer_team_ids):
        return None
    order = {plugin.slug: index for index, plugin in enumerate(all_plugins())}
    entries: list[ModelBoardEntry] = []
    # One board per (environment, flow, subset, suite) it is on: a few queries each, none per entry.
    for env, flow, subset, suite in sorted(boards, key=lambda b: (order.get(b[0], len(order)), *b[1:])):
        try:
            board = board_get(env=env, flow=flow, subset=subset, suite=suite, viewer_team_ids=viewer_team_ids)
        except (KeyError, ValueError):
            continue  # an environment no longer installed, or a suite renamed out of the slug pattern
        entries += [ModelBoardEntry(env=env, env_title=board.title, score_label=board.score_label, flow=flow,
                                    subset=subset, suite=suite, row=row)
                    for row in board.rows if row.model_id == model_id]
    best: dict[str, ModelBoardEntry] = {}
    for entry in entries:
        if entry.row.mean is None:
            continue
        current = best.get(entry.env)
        if current is None or (entry.row.complete, entry.row.mean) > (current.row.complete, current.row.mean or 0.0):
            best[entry.env] = entry
    return ModelPage(
        id=model.id, name=model.name, team=model.team.name, organisation=model.organisation,
        parameter_count=model.parameter_count, open_weights=model.open_weights, licence=model.licence,
        link=model.link, is_baseline=model.is_baseline, entries=entries,
        best=[ModelEnvironmentBest(env=env, title=entry.env_title, score_label=entry.score_label, entry=entry)
              for env, entry in best.items()])


# --- a submission's headline: its numbers and place on its board ---------------------------------

@dataclass(frozen=True)
class BoardPlace:
    """One entry of a board as the board itself computed it."""

    mean: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    rank: int | None
    standing: str
    tie_p_value: float | None
    incomplete: bool
    n_scenarios: int
    n_scored: int
    n_attempts: int
    variant: tuple[str, ...]
    #: Whether its scored scenarios cover the board's (a board ranks only complete entries by default).
    complete: bool = True
    board_scenarios: int = 0


@dataclass(frozen=True)
class Headline:
    """What a submission's page leads with: its numbers and rank, or why there are none."""

    env: str
    flow: str
    subset: str
    suite: str
    board_title: str
    #: The entry on its board, as the board shows it to this visitor; None when it is not there.
    place: BoardPlace | None
    #: Entries ranked on that board.
    ranked: int
    #: Why there is no rank (or why the rank is not the public one); empty when it is.
    reason: str
    #: "running", "cancelled", "failed", "hidden", "private", "baseline", "variant" or "" (ranked).
    kind: str

    @property
    def board_label(self) -> str:
        return f"{self.board_title} · {self.flow.title()} · {self.subset}"


def _board_places(env: str, flow: str, subset: str, suite: str,
                  viewer_team_ids: tuple[int, ...]) -> tuple[dict[int, BoardPlace], int]:
    """Every platform entry of the board with the numbers and rank the board page shows the same
    visitor (its default filters), and how many entries it ranks."""
    board = board_get(env=env, flow=flow, subset=subset, suite=suite, filters=BoardFilter(),
                      viewer_team_ids=viewer_team_ids)
    places = {
        row.submission_id: BoardPlace(
            mean=row.mean, se=row.se, ci_low=row.ci_low, ci_high=row.ci_high, rank=row.rank, standing=row.standing,
            tie_p_value=row.tie_p_value, incomplete=row.incomplete, n_scenarios=row.n_scenarios,
            n_scored=row.n_scored, n_attempts=row.n_attempts, variant=row.variant, complete=row.complete,
            board_scenarios=row.board_scenarios)
        for row in board.rows if row.submission_id is not None}
    return places, sum(1 for row in board.rows if row.rank is not None)


def submission_headline(submission: Submission, viewer_team_ids: Collection[int] = ()) -> Headline:
    """The submission's place on its board, taken from the board's own ranking (cached with the
    board, so it changes exactly when the board does)."""
    from leaderboard.cache import board_scope, cached

    env, flow, subset, suite = submission.environment_id, submission.flow, submission.subset, submission.suite
    try:
        title = get_plugin(env).title
    except KeyError:  # an environment no longer configured: it has no board
        title = env
    base = dict(env=env, flow=flow, subset=subset, suite=suite, board_title=title)
    if submission.hidden:
        return Headline(**base, place=None, ranked=0, kind="hidden",
                        reason="It is hidden from the boards by the maintainers, so it has no rank.")
    if submission.is_active:
        return Headline(**base, place=None, ranked=0, kind="running",
                        reason="No score yet: it is still running, and enters its board when it finishes.")
    if submission.status == Submission.Status.CANCELLED:
        return Headline(**base, place=None, ranked=0, kind="cancelled",
                        reason="No rank: it was cancelled before it finished. Resuming it queues its unscored "
                               "attempts again.")
    teams = tuple(sorted(viewer_team_ids))
    try:
        places, ranked = cached("submission-places", (env, flow, subset, suite, teams),
                                lambda: _board_places(env, flow, subset, suite, teams),
                                scope=board_scope(env, flow, subset))
    except (KeyError, ValueError):  # the board no longer exists (environment or flow removed)
        places, ranked = {}, 0
    place = places.get(submission.id)
    if place is None:
        private = not (submission.is_public or submission.is_baseline)
        return Headline(**base, place=None, ranked=ranked, kind="private" if private else "failed",
                        reason="No rank: it is private, and only its team sees it on the board." if private
                        else "It is not on its board.")
    if place.mean is None:
        return Headline(**base, place=place, ranked=ranked, kind="failed",
                        reason="No score: none of its attempts was scored (infrastructure failures never are).")
    if submission.is_baseline:
        return Headline(**base, place=place, ranked=ranked, kind="baseline",
                        reason="A baseline: shown on the board as a reference, never ranked.")
    if place.variant:
        return Headline(**base, place=place, ranked=ranked, kind="variant",
                        reason=f"Run with non-default settings ({', '.join(place.variant)}): a labelled variant of "
                               "the official protocol, shown on the board but not ranked.")
    if not submission.is_public:
        return Headline(**base, place=place, ranked=ranked, kind="private",
                        reason="Private: this is its place on the board as its team sees it; the public board "
                               "does not show it until the team's owner publishes it.")
    return Headline(**base, place=place, ranked=ranked, kind="", reason="")
