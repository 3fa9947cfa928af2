"""Read-only analyses of one board: error breakdowns, best-of-N curves, per-tag scores, the
per-scenario matrix and model-vs-model comparisons.

Everything is computed from per-scenario means (a scenario's repeats averaged first), the same unit
the board's standard errors and paired tests use. One board costs the queries of ``board_get``, one
for its scenarios and one for its entries' stored aggregates (``leaderboard.stored``, computed when
each entry finishes); the per-scenario scores are read only for the matrix rows and the two entries
a page shows.
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from catalogue.models import Scenario
from evaluators.base import AnalysisPanel, BreakdownPart, get_plugin
from leaderboard.selectors import Board, BoardRow, board_get
from leaderboard.stored import (
    EntryAggregate,
    SuiteScenarios,
    board_median,
    entry_aggregates,
    stored_per_scenario,
    suite_scenarios_get,
)
from scoring.ordering import natural_key
from scoring.stats import CurvePoint, PairedTest, paired_test


@dataclass(frozen=True)
class ModelRef:
    submission_id: int
    label: str
    model: str
    team: str
    is_baseline: bool
    mean: float | None


@dataclass(frozen=True)
class ScenarioRef:
    id: int
    key: str
    tags: dict[str, Any]


@dataclass(frozen=True)
class ErrorRow:
    model: ModelRef
    ia_pct: float | None
    ra_pct: float | None
    n_scored: int


@dataclass(frozen=True)
class LostRow:
    """Where a model's score went, in % of the maximum score: the score plus the lost parts."""
    model: ModelRef
    aes: float | None
    parts: dict[str, float]


@dataclass(frozen=True)
class Curve:
    model: ModelRef
    points: list[CurvePoint]


@dataclass(frozen=True)
class TagRow:
    model: ModelRef
    means: list[float | None]
    counts: list[int]

    @property
    def cells(self) -> list[tuple[float | None, int]]:
        return list(zip(self.means, self.counts))


@dataclass(frozen=True)
class TagBreakdown:
    tag: str
    label: str
    values: list[str]
    rows: list[TagRow]


@dataclass(frozen=True)
class PanelRow:
    model: ModelRef
    #: The entry's aggregate for the panel; None for an entry of another page of the analysis, which
    #: the panel lists (its chart's model picker) while its chart reads every aggregate from the charts' data.
    data: dict[str, Any] | None


@dataclass(frozen=True)
class PanelView:
    """One of the environment's analysis panels (``EnvironmentPlugin.analysis_panels``) on a board:
    the entries it shows, each with its aggregate."""

    panel: AnalysisPanel
    rows: list[PanelRow]

    @property
    def key(self) -> str:
        return self.panel.key

    @property
    def title(self) -> str:
        return self.panel.title


@dataclass(frozen=True)
class MatrixCell:
    mean: float
    repeats: int
    attempt_id: int
    #: 0 (red, the board's lowest) to 120 (green, its highest): see ``score_hue``.
    hue: int

    @property
    def colour(self) -> str:
        return hue_colour(self.hue)


@dataclass(frozen=True)
class MatrixRow:
    model: ModelRef
    cells: list[MatrixCell | None]


@dataclass
class BoardAnalysis:
    board: Board
    models: list[ModelRef]
    scenarios: list[ScenarioRef]
    errors: list[ErrorRow] = field(default_factory=list)
    lost: list[LostRow] = field(default_factory=list)
    curves: list[Curve] = field(default_factory=list)
    tags: list[TagBreakdown] = field(default_factory=list)
    panels: list[PanelView] = field(default_factory=list)
    #: The lost-score components the environment declares (``breakdown_parts``), in its order.
    lost_parts: tuple[BreakdownPart, ...] = ()
    #: The rows of ``rows`` (every entry's unless a page was asked for).
    matrix: list[MatrixRow] = field(default_factory=list)
    rows: slice = field(default_factory=lambda: slice(None))
    page: int = 1
    pages: int = 1
    #: The board's published numbers (no attempts behind them here): shown as their publication
    #: reports them, beside the figures computed from the board's own entries.
    reported: list[BoardRow] = field(default_factory=list)

    @property
    def curve_ns(self) -> list[int]:
        return list(range(1, max((p.n for c in self.curves for p in c.points), default=0) + 1))

    @property
    def has_best_of_n(self) -> bool:
        """A curve needs two repeats of a scenario at least: with one, best of N is only the mean."""
        return len(self.curve_ns) >= 2

    def curve_table(self) -> list[tuple[ModelRef, list[float | None]]]:
        """Each curve's values aligned on ``curve_ns`` (None past a model's own repeats)."""
        ns = self.curve_ns
        table = []
        for curve in self.curves:
            by_n = {p.n: p.value for p in curve.points}
            table.append((curve.model, [by_n.get(n) for n in ns]))
        return table

    def chart_data(self) -> dict[str, Any]:
        """What static/js/analysis.js draws, as plain JSON."""
        return compact({
            "scoreLabel": self.board.score_label,
            "errors": [{"label": r.model.label, "ia": r.ia_pct, "ra": r.ra_pct} for r in self.errors],
            "lostKeys": list(self.board.breakdown_keys),
            # Their names and colours, as the environment declares them (the script names none).
            "lostParts": [{"key": part.key, "label": part.label, "colour": part.colour}
                          for part in self.lost_parts],
            "lost": [{"label": r.model.label, "aes": r.aes, "parts": r.parts} for r in self.lost],
            "curves": [{"label": c.model.label, "n": [p.n for p in c.points], "value": [p.value for p in c.points],
                        "scenarios": [p.scenarios for p in c.points]} for c in self.curves],
            "tags": [{"tag": t.tag, "label": t.label, "values": t.values,
                      "series": [{"label": r.model.label, "means": r.means, "counts": r.counts} for r in t.rows]}
                     for t in self.tags],
            "panels": {view.key: {**view.panel.chart, "models": [
                {"id": row.model.submission_id, "label": row.model.label, **(row.data or {})} for row in view.rows]}
                for view in self.panels},
        })


@dataclass(frozen=True)
class ScenarioDelta:
    scenario: ScenarioRef
    a: float
    b: float
    a_attempt_id: int | None
    b_attempt_id: int | None

    @property
    def delta(self) -> float:
        return self.a - self.b


@dataclass
class BoardComparison:
    board: Board
    models: list[ModelRef]
    a: ModelRef | None
    b: ModelRef | None
    #: The board's published rows, which have no per-scenario scores to compare.
    reported: int = 0
    test: PairedTest | None = None
    a_shared_mean: float | None = None
    b_shared_mean: float | None = None
    a_wins: list[ScenarioDelta] = field(default_factory=list)
    b_wins: list[ScenarioDelta] = field(default_factory=list)
    ties: list[ScenarioDelta] = field(default_factory=list)
    both_fail: list[ScenarioDelta] = field(default_factory=list)
    only_a: int = 0
    only_b: int = 0
    fail_threshold: float | None = None
    #: "fixed" (the plug-in's absolute ``fail_threshold``) or "median" (the board's median per-scenario mean).
    fail_rule: str = "median"

    @property
    def shared(self) -> list[ScenarioDelta]:
        return sorted(self.a_wins + self.b_wins + self.ties, key=lambda d: natural_key(d.scenario.key))

    def chart_data(self) -> dict[str, Any]:
        return compact({
            "scoreLabel": self.board.score_label,
            "a": self.a.label if self.a else None, "b": self.b.label if self.b else None,
            "points": [{"key": d.scenario.key, "a": d.a, "b": d.b} for d in self.shared],
            "threshold": self.fail_threshold,
        })


# --- pure computations (no database) ---------------------------------------------------------


#: Decimals of the numbers sent to the charts: the tables and tooltips show two; a mean's full
#: seventeen digits made half of a 200-entry page's chart data.
CHART_DECIMALS = 3


def compact(data: Any) -> Any:
    """``data`` with every float rounded to ``CHART_DECIMALS``."""
    if isinstance(data, float):
        return round(data, CHART_DECIMALS)
    if isinstance(data, dict):
        return {key: compact(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [compact(value) for value in data]
    return data


def tag_value(scenario: ScenarioRef, tag: str) -> str | None:
    if tag == "key":
        return scenario.key
    value = scenario.tags.get(tag)
    return None if value is None or value == "" else str(value)


def tag_breakdown(tag: str, label: str, scenarios: Sequence[ScenarioRef], models: Sequence[ModelRef],
                  means: Mapping[int, Mapping[int, float]]) -> TagBreakdown:
    """Each model's mean of per-scenario means over the scenarios carrying each value of ``tag``."""
    groups: dict[str, list[int]] = defaultdict(list)
    for scenario in scenarios:
        value = tag_value(scenario, tag)
        if value is not None:
            groups[value].append(scenario.id)
    values = sorted(groups, key=natural_key)
    rows = []
    for model in models:
        own = means.get(model.submission_id, {})
        row_means: list[float | None] = []
        counts: list[int] = []
        for value in values:
            hits = [own[sc] for sc in groups[value] if sc in own]
            row_means.append(sum(hits) / len(hits) if hits else None)
            counts.append(len(hits))
        rows.append(TagRow(model=model, means=row_means, counts=counts))
    return TagBreakdown(tag=tag, label=label, values=values, rows=rows)


def score_hue(value: float, low: float, high: float) -> int:
    """The hue of ``value`` on the board's own score range: 0 (red) → 60 (amber) → 120 (green)."""
    fraction = 0.5 if high <= low else min(1.0, max(0.0, (value - low) / (high - low)))
    return round(120 * fraction)


def hue_colour(hue: int) -> str:
    """The light background a matrix cell of that hue has (the ``heat-*`` classes of site.css)."""
    return f"hsl({hue}, 62%, 84%)"


def compare_scenarios(a: Mapping[int, float], b: Mapping[int, float], scenarios: Mapping[int, ScenarioRef],
                      threshold: float, a_attempts: Mapping[int, int] | None = None,
                      b_attempts: Mapping[int, int] | None = None,
                      ) -> tuple[list[ScenarioDelta], list[ScenarioDelta], list[ScenarioDelta], list[ScenarioDelta]]:
    """(A better, B better, equal, both below ``threshold``) on the scenarios both have means for.

    The two win lists run from the largest gap down; ties and failures follow the scenario keys.
    """
    a_attempts = a_attempts or {}
    b_attempts = b_attempts or {}
    a_wins: list[ScenarioDelta] = []
    b_wins: list[ScenarioDelta] = []
    ties: list[ScenarioDelta] = []
    both_fail: list[ScenarioDelta] = []
    for sc in set(a) & set(b):
        if sc not in scenarios:
            continue
        delta = ScenarioDelta(scenario=scenarios[sc], a=a[sc], b=b[sc],
                              a_attempt_id=a_attempts.get(sc), b_attempt_id=b_attempts.get(sc))
        # Per-scenario means are averages of floats: treat rounding noise as a tie.
        if abs(delta.delta) <= 1e-9:
            ties.append(delta)
        elif delta.delta > 0:
            a_wins.append(delta)
        else:
            b_wins.append(delta)
        if a[sc] < threshold and b[sc] < threshold:
            both_fail.append(delta)
    a_wins.sort(key=lambda d: (-d.delta, natural_key(d.scenario.key)))
    b_wins.sort(key=lambda d: (d.delta, natural_key(d.scenario.key)))
    ties.sort(key=lambda d: natural_key(d.scenario.key))
    both_fail.sort(key=lambda d: natural_key(d.scenario.key))
    return a_wins, b_wins, ties, both_fail


# --- database reads ---------------------------------------------------------------------------


def _model_refs(rows: Iterable[BoardRow]) -> list[ModelRef]:
    rows = list(rows)
    names: dict[str, int] = defaultdict(int)
    for row in rows:
        names[row.model] += 1
    # The same model may sit on a board twice (another prompt version, a re-run): the id tells them apart.
    # A reported row (official suites) has no submission: its lookups by id below find nothing.
    return [ModelRef(submission_id=row.submission_id,  # type: ignore[arg-type]
                     label=f"{row.model} #{row.submission_id}" if names[row.model] > 1 else row.model,
                     model=row.model, team=row.team, is_baseline=row.is_baseline, mean=row.mean) for row in rows]


def _scenario_refs(scenarios: SuiteScenarios, ids: Iterable[int]) -> list[ScenarioRef]:
    """``ids`` as references in natural order; ids of another suite (none, normally) are read too."""
    wanted = set(ids)
    unknown = wanted - set(scenarios.by_id)
    refs = [ScenarioRef(id=i, key=s.key, tags=s.tags) for i in wanted if (s := scenarios.by_id.get(i)) is not None]
    if unknown:
        refs += [ScenarioRef(id=i, key=k, tags=t if isinstance(t, dict) else {})
                 for i, k, t in Scenario.objects.filter(id__in=unknown).values_list("id", "key", "tags")]
    return sorted(refs, key=lambda s: (scenarios.position.get(s.id, -1), natural_key(s.key)))


def board_analysis_get(*, env: str, flow: str, subset: str, suite: str | None = None,
                       page: int | None = None, per_page: int = 25, matrix: bool = True) -> BoardAnalysis:
    """The board's analysis, from its entries' stored results and aggregates (``leaderboard.stored``).
    ``page`` (of ``per_page`` entries in the board's order, kept within the pages there are) picks
    the entries whose per-scenario matrix rows are built: only theirs are read of the stored
    per-scenario scores; None builds every row, and ``matrix`` False none. Unknown names raise
    KeyError / ValueError like ``board_get``."""
    board = board_get(env=env, flow=flow, subset=subset, suite=suite, curves=True)
    plugin = get_plugin(env)
    # A reported row has no attempts to analyse: it is shown as published, apart from the entries.
    models = _model_refs(row for row in board.rows if not row.is_reported)
    scenarios = suite_scenarios_get(env, board.suite)
    analysis = BoardAnalysis(board=board, models=models, scenarios=[],
                             reported=[row for row in board.rows if row.is_reported])
    if page is not None:
        analysis.pages = max(1, math.ceil(len(models) / per_page))
        analysis.page = min(max(page, 1), analysis.pages)
        analysis.rows = slice((analysis.page - 1) * per_page, analysis.page * per_page)
    # A page of the analysis reads the tag means and panels of its own entries only.
    paged = models[analysis.rows] if page is not None else models
    aggregates = entry_aggregates(board.rows, scenarios, plugin.tag_groups, subset, panels=plugin.analysis_panels,
                                  full=[m.submission_id for m in paged] if page is not None else None)
    # A scenario that left the subset after a submission ran still has its scores on the board.
    shown = _scenario_refs(scenarios, scenarios.subset_ids(subset).union(
        *(aggregate.extra for aggregate in aggregates.values())))
    rows = {row.submission_id: row for row in board.rows if not row.is_reported}
    analysis.scenarios = shown
    empty = EntryAggregate()

    def aggregate_of(model: ModelRef) -> EntryAggregate:
        return aggregates.get(model.submission_id, empty)

    if plugin.has_action_diagnostics:
        analysis.errors = [ErrorRow(model=m, ia_pct=rows[m.submission_id].ia_pct, ra_pct=rows[m.submission_id].ra_pct,
                                    n_scored=rows[m.submission_id].n_scored) for m in models]
    if plugin.breakdown_keys:
        analysis.lost_parts = tuple(plugin.breakdown_parts)
        analysis.lost = [LostRow(model=m, aes=rows[m.submission_id].mean,
                                 parts=dict(rows[m.submission_id].breakdown or {}))
                         for m in models if rows[m.submission_id].breakdown is not None]

    curves = {row.submission_id: row.best_of_n for row in board.rows}
    analysis.curves = [Curve(model=m, points=curves[m.submission_id]) for m in models if curves[m.submission_id]]
    for tag, label in plugin.tag_groups:
        values = sorted({value for s in shown if (value := tag_value(s, tag)) is not None}, key=natural_key)
        if not values:
            continue
        tag_rows = []
        for model in paged:
            by_value = aggregate_of(model).tag_means.get(tag, {})
            found = [by_value.get(value) for value in values]
            tag_rows.append(TagRow(model=model, means=[cell[0] if cell else None for cell in found],
                                   counts=[cell[1] if cell else 0 for cell in found]))
        analysis.tags.append(TagBreakdown(tag=tag, label=label, values=values, rows=tag_rows))
    on_page = {m.submission_id for m in paged}
    for panel in plugin.analysis_panels:
        panel_rows = [PanelRow(model=m, data=aggregate_of(m).panels.get(panel.key)) for m in models]
        if not any(row.data is not None for row in panel_rows):
            continue
        # On a page, the entries of other pages are listed with no aggregate (it was not read).
        analysis.panels.append(PanelView(panel=panel, rows=[
            row for row in panel_rows if row.data is not None or (
                page is not None and row.model.submission_id not in on_page
                and aggregate_of(row.model).low is not None)]))

    lows = [a.low for a in aggregates.values() if a.low is not None]
    highs = [a.high for a in aggregates.values() if a.high is not None]
    low, high = (min(lows), max(highs)) if lows else (0.0, 0.0)
    built = paged if matrix else []
    matrix_entries = [rows[m.submission_id] for m in built if m.submission_id is not None]
    stored = stored_per_scenario([row.submission_id for row in matrix_entries  # type: ignore[misc]
                                  if row.result_stamp is not None and not row.scenario_scores],
                                 "scenario_scores", "first_attempts")
    for model in built:
        row = rows[model.submission_id]
        own, first = stored.get(model.submission_id, (row.scenario_scores, row.first_attempts))
        cells: list[MatrixCell | None] = []
        for scenario in shown:
            repeats = own.get(scenario.id)
            if not repeats:
                cells.append(None)
                continue
            mean = sum(repeats) / len(repeats)
            cells.append(MatrixCell(mean=mean, repeats=len(repeats), attempt_id=first[scenario.id],
                                    hue=score_hue(mean, low, high)))
        analysis.matrix.append(MatrixRow(model=model, cells=cells))
    return analysis


def fail_threshold(env: str, means: Mapping[int, Mapping[int, float]]) -> tuple[float | None, str]:
    """The score below which a scenario counts as failed, and which rule set it."""
    threshold = get_plugin(env).fail_threshold
    if threshold is not None:
        return threshold, "fixed"
    values = [v for per in means.values() for v in per.values()]
    return (statistics.median(values) if values else None), "median"


def board_compare_get(*, env: str, flow: str, subset: str, suite: str | None = None,
                      a: int | None = None, b: int | None = None) -> BoardComparison:
    """A against B on the scenarios both ran. An ``a`` or ``b`` not on the board falls back to the
    board's first and second entries. Only A's and B's per-scenario results are read; the board's
    median is stored (``leaderboard.stored.board_median``)."""
    board = board_get(env=env, flow=flow, subset=subset, suite=suite)
    # A reported row has published totals only, no per-scenario scores to pair: it is not offered.
    models = _model_refs(row for row in board.rows if not row.is_reported)
    reported = sum(row.is_reported for row in board.rows)
    by_id = {m.submission_id: m for m in models}
    model_a = by_id.get(a) if a is not None else None
    model_a = model_a or (models[0] if models else None)
    model_b = by_id.get(b) if b is not None else None
    if model_b is None:
        model_b = next((m for m in models if model_a is None or m.submission_id != model_a.submission_id), None)
    comparison = BoardComparison(board=board, models=models, a=model_a, b=model_b, reported=reported)
    fixed = get_plugin(env).fail_threshold
    comparison.fail_threshold, comparison.fail_rule = (fixed, "fixed") if fixed is not None else (
        board_median(board), "median")
    if model_a is None or model_b is None:
        return comparison
    rows = {row.submission_id: row for row in board.rows if row.submission_id is not None}
    pair = [rows[m.submission_id] for m in (model_a, model_b) if m.submission_id in rows]
    stored = stored_per_scenario([row.submission_id for row in pair  # type: ignore[misc]
                                  if row.result_stamp is not None and not row.scenario_means],
                                 "scenario_means", "first_attempts")

    def means_of(model: ModelRef) -> tuple[dict[int, float], dict[int, int]]:
        row = rows.get(model.submission_id)
        if row is None:
            return {}, {}
        found = stored.get(model.submission_id)
        return (found[0], found[1]) if found is not None else (row.scenario_means, row.first_attempts)

    (a_means, a_first), (b_means, b_first) = means_of(model_a), means_of(model_b)
    comparison.test = paired_test(a_means, b_means)
    shared = set(a_means) & set(b_means)
    if shared:
        comparison.a_shared_mean = sum(a_means[s] for s in shared) / len(shared)
        comparison.b_shared_mean = sum(b_means[s] for s in shared) / len(shared)
    comparison.only_a = len(set(a_means) - shared)
    comparison.only_b = len(set(b_means) - shared)
    threshold = comparison.fail_threshold if comparison.fail_threshold is not None else float("-inf")
    scenarios = {s.id: s for s in _scenario_refs(suite_scenarios_get(env, board.suite), set(a_means) | set(b_means))}
    (comparison.a_wins, comparison.b_wins, comparison.ties,
     comparison.both_fail) = compare_scenarios(a_means, b_means, scenarios, threshold, a_first, b_first)
    return comparison
