"""Reads for boards, metric cards and scenarios."""
from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.db.models import Q

from config.env import parse_bool
from evaluators.agents.diagnostics import DEFINITIONS as DIAGNOSTIC_DEFINITIONS
from evaluators.base import all_plugins, get_plugin
from evaluators.settings import declared_defaults
from leaderboard.catalogue import default_suite
from leaderboard.models import ReportedResult, Scenario
from leaderboard.stats import CurvePoint, EntrySummary, paired_test, summarise_entry
from submissions.models import Submission, SubmissionResult
from submissions.selectors import attempt_outcomes

SUITE_NAME = re.compile(r"[-a-zA-Z0-9_]{1,32}")
RANKED_STATUSES = (Submission.Status.COMPLETED, Submission.Status.INCOMPLETE)


@dataclass(kw_only=True)
class BoardRow(EntrySummary):
    """One entry of a board: who it is, its numbers (an ``EntrySummary``) and where it stands."""

    submission_id: int | None
    model: str
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

    @property
    def incomplete(self) -> bool:
        return self.status == Submission.Status.INCOMPLETE or self.n_scored < self.n_attempts

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
            "variant": list(self.variant), **{f"lost_{k}_pct": v for k, v in (self.breakdown or {}).items()},
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

    @classmethod
    def from_query(cls, query: Any) -> BoardFilter:
        def flag(name: str) -> bool:
            return parse_bool(query.get(name, "")) is True

        size = str(query.get("size", ""))
        known_sizes = {b[0] for b in SIZE_BUCKETS} | {UNKNOWN_SIZE}
        return cls(open_weights=flag("open"), size=size if size in known_sizes else "",
                   organisation=str(query.get("org", "")).strip(), best_per_team=flag("best"),
                   rank_reported=flag("reported"), verified_only=flag("verified"))

    @property
    def active(self) -> bool:
        return self != BoardFilter()

    def query(self, *, suite: str) -> str:
        """The query string that selects this filter on ``suite``'s board (``from_query`` reads it back)."""
        params = {"suite": suite, "open": "1" if self.open_weights else "", "size": self.size, "org": self.organisation,
                  "best": "1" if self.best_per_team else "", "reported": "1" if self.rank_reported else "",
                  "verified": "1" if self.verified_only else ""}
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


def _stored_summary(submission: Submission, detail: bool) -> EntrySummary | None:
    try:
        result = submission.result
    except SubmissionResult.DoesNotExist:
        return None
    numbers = {name: getattr(result, name) for name in EntrySummary().numbers()
               if name not in EntrySummary.PER_SCENARIO and name != "best_of_n"}
    numbers["best_of_n"] = [CurvePoint(*point) for point in result.best_of_n or []]
    # Only the means come with every board; reading a deferred field would cost a query per entry.
    loaded = EntrySummary.PER_SCENARIO if detail else ("scenario_means",)
    per_scenario: dict[str, Any] = {name: _by_scenario(getattr(result, name)) for name in loaded}
    return EntrySummary(**numbers, **per_scenario)


def visible_entries(viewer_team_ids: Collection[int] = ()) -> Q:
    """Entries a board shows: public ones and baselines, plus the viewer's own teams' private ones;
    never what the maintainers hid."""
    return (Q(is_public=True) | Q(is_baseline=True) | Q(team_id__in=list(viewer_team_ids))) & Q(hidden=False)


def board_get(*, env: str, flow: str, subset: str, suite: str | None = None,
              filters: BoardFilter | None = None, detail: bool = False,
              viewer_team_ids: Collection[int] = ()) -> Board:
    """One board; ``suite`` None is the environment's default suite. Unknown names raise
    KeyError (environment) or ValueError (flow, subset). ``detail`` also loads every entry's
    per-scenario repeats and replay links (the analysis pages need them; the board does not)."""
    plugin = get_plugin(env)
    if suite and not SUITE_NAME.fullmatch(suite):
        raise ValueError("a suite is named by a slug")  # and a NUL byte would reach PostgreSQL
    suite = suite or default_suite(env)
    if flow not in plugin.flows or subset not in ("mini", "full"):
        raise ValueError("unknown flow or subset")
    queryset = (Submission.objects
                .filter(visible_entries(viewer_team_ids), environment_id=env, flow=flow, subset=subset, suite=suite,
                        status__in=RANKED_STATUSES)
                .select_related("model", "team", "result"))
    if not detail:
        queryset = queryset.defer("result__scenario_scores", "result__first_attempts")
    submissions = list(queryset)
    summaries = {s.id: _stored_summary(s, detail) for s in submissions}
    # A finished submission gets its stored result when it finishes; one from before that existed
    # (or whose result was deleted) is summarised from its attempts here, the same way.
    missing = [submission_id for submission_id, summary in summaries.items() if summary is None]
    if missing:
        for submission_id, outcomes in attempt_outcomes(missing, with_breakdown=bool(plugin.breakdown_keys)).items():
            summaries[submission_id] = summarise_entry(outcomes, plugin.breakdown_keys)
    rows = []
    for submission in submissions:
        summary = summaries[submission.id]
        assert summary is not None
        evaluation = submission.evaluation_settings
        rows.append(BoardRow(
            submission_id=submission.id, model=submission.model.name, team=submission.team.name,
            organisation=submission.model.organisation, parameter_count=submission.model.parameter_count,
            open_weights=submission.model.open_weights, is_baseline=submission.is_baseline, status=submission.status,
            verified=submission.verified, is_private=not (submission.is_public or submission.is_baseline),
            rescoring=submission.rescoring if submission.source == Submission.Source.UPLOAD else "",
            prompt_version=evaluation.prompt_version, variant=tuple(evaluation.variant_names()),
            **summary.numbers()))
    if suite == "official":
        # Published numbers belong to the official scenarios only.
        rows.extend(_reported_rows(env, flow, subset))
    if filters is not None:
        rows = filters.apply(rows)
    rows.sort(key=lambda r: (r.mean is None, -(r.mean or 0.0), r.submission_id or 0))
    rank_reported = filters is not None and filters.rank_reported
    rank = 0
    for row in rows:
        if not row.is_baseline and not row.variant and row.mean is not None and (rank_reported or not row.is_reported):
            rank += 1
            row.rank = rank
    _mark_ties(rows)
    shown = list(Scenario.objects.filter(environment_id=env, suite=suite, **Scenario.subset_filter(subset))
                 .order_by("key").values_list("key", "tags"))
    check = plugin.scenario_check
    checks = {key: tags.get(check) for key, tags in shown if check and isinstance(tags, dict) and tags.get(check)}
    return Board(env=env, title=plugin.title, score_label=plugin.score_label, flow=flow, subset=subset, suite=suite,
                 scenario_count=len(shown), has_action_diagnostics=plugin.has_action_diagnostics,
                 breakdown_keys=plugin.breakdown_keys, rows=rows, checked_scenarios=len(checks),
                 flagged_scenarios=[key for key, status in checks.items() if status == "flagged"])


def _reported_rows(env: str, flow: str, subset: str) -> list[BoardRow]:
    return [
        BoardRow(submission_id=None, model=r.model_name, team=r.organisation or "reported", organisation=r.organisation,
                 parameter_count=r.parameter_count, open_weights=r.open_weights, is_baseline=False, status="reported",
                 mean=r.score, ia_pct=r.ia_pct, ra_pct=r.ra_pct, is_reported=True, source=r.source)
        for r in ReportedResult.objects.filter(environment_id=env, flow=flow, subset=subset)
    ]


def _mark_ties(rows: list[BoardRow]) -> None:
    """Mark the leader and every entry a paired test on shared scenarios cannot separate from it."""
    leader = next((row for row in rows if row.rank == 1), None)
    if leader is None:
        return
    leader.standing = "leader"
    for row in rows:
        if row is leader or row.mean is None:
            continue
        test = paired_test(leader.scenario_means, row.scenario_means)
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


@dataclass
class Overview:
    """One column per environment × flow, like the paper's Table 1; each model's best entry per cell."""

    subset: str
    columns: list[Board]
    rows: list[OverviewRow]


def overview_get(*, subset: str = "mini", boards: list[Board] | None = None) -> Overview:
    """``boards`` already built by the caller (default suites) are reused instead of read again."""
    known = {(b.env, b.flow, b.subset): b for b in boards or []}
    columns = [known.get((plugin.slug, flow, subset)) or board_get(env=plugin.slug, flow=flow, subset=subset)
               for plugin in all_plugins() for flow in plugin.flows]
    by_model: dict[tuple[str, str], OverviewRow] = {}
    for index, board in enumerate(columns):
        for row in board.rows:
            if row.mean is None or row.is_reported:
                continue
            key = (row.team, row.model)
            entry = by_model.setdefault(key, OverviewRow(row.model, row.team, row.is_baseline, [None] * len(columns)))
            current = entry.cells[index]
            if current is None or (current.mean is not None and row.mean > current.mean):
                entry.cells[index] = OverviewCell(row.mean, row.se, row.submission_id, row.incomplete)
    rows = sorted(by_model.values(), key=lambda r: (r.is_baseline, r.model.casefold()))
    return Overview(subset=subset, columns=columns, rows=rows)


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
        "defaults": {flow: declared_defaults(plugin, flow) for flow in plugin.flows},
        "diagnostics": DIAGNOSTIC_DEFINITIONS,
        "action_diagnostics": plugin.has_action_diagnostics,
    }
