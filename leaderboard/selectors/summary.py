"""The summary across environments: each model's score on each environment's board of one flow (its
only flow where it has not that one) and subset, normalised between each scenario's floor and ceiling
(``scoring.normalised``), and their mean.

Boards are read as the home page reads them (``boards_ranked_get``: the default view of the default
suite, no filter, anonymous visitors), and the entries' per-scenario means from their stored results
(``SubmissionResult.scenario_means``, one query for every board): no attempt is read. A model's
entry on a board is its best complete one there (the highest raw mean): a mean over some of the
board's scenarios is not comparable with one over all of them.

Floors and ceilings are fixed: the environment's closed forms (``idle_score``, ``best_score``), else
the published floor and ceiling its plug-in declares for the board (``summary_references``, e.g. a
paper's Idle baseline and best result); a floor with neither is the board's Idle baseline entry's
mean (else 0). No ceiling ever comes from the board's entries: an environment with none declared is
not normalised, and says so.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from catalogue.models import Scenario
from catalogue.selectors import default_suite
from evaluators.base import FLOWS, SUBSETS, EnvironmentPlugin, ScenarioSpec, SummaryReference, all_plugins, get_plugin
from leaderboard.selectors.overview import OverviewEntry
from leaderboard.selectors.ranked import RankedBoard, boards_ranked_get
from scoring.normalised import combined, normalised_score

#: Where a scenario's floor came from, and its ceiling.
FLOOR_PLUGIN, FLOOR_REFERENCE, FLOOR_IDLE_ENTRY, FLOOR_ZERO = "plugin", "reference", "idle entry", "zero"
CEILING_PLUGIN, CEILING_REFERENCE = "plugin", "reference"
#: The name the platform's Idle baseline runs under (``submit_baselines``).
IDLE_BASELINE = "Idle agent"
#: The method, as every metric card states it (each plug-in's card says what its floor and ceiling are).
METHOD = (
    "The home page's and each model page's summary across environments places each scenario's mean x "
    "between a floor f and a fixed ceiling c: n = 100 · (x − f) / (c − f), so 0 is doing nothing and 100 the "
    "ceiling; nothing is clipped (an entry below the floor scores below 0, one above a published ceiling above "
    "100). The ceiling is the best score possible where the metric has one (an optimal solution, a perfect "
    "page), otherwise a published reference the environment declares with its source (the best model result "
    "the paper reports on that set and flow); it never comes from the entries on the board, so a new entry "
    "changes no other entry's score. The floor is what doing nothing scores, in closed form where there is one, "
    "otherwise a published Idle baseline the environment declares (else the board's Idle baseline entry's "
    "mean, 0 without one). A scenario whose ceiling is not above its floor is left out, and counted. An "
    "entry's score is the mean of n over its board's scenarios, ± its standard error over scenarios "
    "(per-scenario means first, ddof = 1, over √k), as the boards take it; where floor and ceiling are the "
    "same on every scenario this is the linear map 100 · (mean − f) / (c − f) of the board's mean, ± the "
    "board's SE × 100 / (c − f). The summary combines each environment's board of one flow (an environment "
    "without that flow takes part with its own) and one subset; a model's entry on a board is its best "
    "complete one (the default suite, as the board shows it to everyone); its mean across environments is the "
    "plain mean of its environments' scores, with the standard error √(Σ se²) / k, and only a model with a "
    "complete entry on every environment has one.")


@dataclass(frozen=True)
class Scale:
    """How one environment's board was normalised: where its floors and ceilings came from."""

    env: str
    title: str
    flow: str
    subset: str
    suite: str
    scenarios: int
    #: How many scenarios took their floor, their ceiling, from each source.
    floors: dict[str, int] = field(default_factory=dict)
    ceilings: dict[str, int] = field(default_factory=dict)
    #: Scenarios whose ceiling is not above their floor (left out of every entry's score).
    skipped: int = 0
    #: The environment's words for its floor and ceiling, and the published ones the board reads.
    floor_meaning: str = ""
    ceiling_meaning: str = ""
    reference: SummaryReference | None = None
    #: Whether the environment's ceiling has a closed form (its ``best_score``).
    closed_form_ceiling: bool = False

    @property
    def normalised(self) -> bool:
        """Whether the board has a fixed ceiling: without one its entries get no normalised score."""
        return bool(self.ceilings)

    @property
    def floor_text(self) -> str:
        floor = self.reference.floor if self.reference else None
        return _sources(self.floors, {
            FLOOR_PLUGIN: self.floor_meaning or "the score of doing nothing (closed form)",
            FLOOR_REFERENCE: f"{floor.value:g}, {floor.source}" if floor else "",
            FLOOR_IDLE_ENTRY: "the Idle baseline entry's mean",
            FLOOR_ZERO: "0 (no closed form and no Idle baseline mean)"})

    @property
    def ceiling_text(self) -> str:
        ceiling = self.reference.ceiling if self.reference else None
        words = {CEILING_PLUGIN: self.ceiling_meaning or "the best score possible",
                 CEILING_REFERENCE: f"{ceiling.value:g}, {ceiling.source}" if ceiling else ""}
        if self.ceilings:
            return _sources(self.ceilings, words)
        # A board without scenarios yet still says what its ceiling will be.
        if self.closed_form_ceiling:
            return words[CEILING_PLUGIN]
        if ceiling is not None:
            return words[CEILING_REFERENCE]
        return "none declared: not normalised (a ceiling is never taken from the entries on the board)"


def _sources(counts: dict[str, int], words: dict[str, str]) -> str:
    shown = [(words[source], count) for source, count in counts.items() if count]
    if len(shown) == 1:
        return shown[0][0]
    return "; ".join(f"{text} on {count} scenario{'s' if count != 1 else ''}" for text, count in shown) or "—"


@dataclass(frozen=True)
class SummaryCell:
    mean: float | None
    se: float | None
    n_scenarios: int
    #: The entry's own raw mean on its board, and its submission.
    raw_mean: float
    submission_id: int | None


@dataclass
class SummaryRow:
    model: str
    team: str
    model_id: int | None
    is_baseline: bool
    #: One per environment of the summary, in its order (None: no complete entry there).
    cells: list[SummaryCell | None]
    mean: float | None = None
    se: float | None = None
    #: Why there is no mean (the environments it has no entry on); "" when it has one.
    why_no_mean: str = ""


@dataclass
class Summary:
    flow: str
    subset: str
    scales: list[Scale]
    rows: list[SummaryRow]

    def row_of(self, model_id: int) -> SummaryRow | None:
        return next((row for row in self.rows if row.model_id == model_id), None)


def summary_boards(flow: str, subset: str) -> list[tuple[str, str, str]]:
    """The boards a summary combines: each environment's of this flow and subset, or of its first flow
    where it has not this one (Football plays Online only), so that every environment takes part."""
    return [(plugin.slug, flow if flow in plugin.flows else plugin.flows[0], subset) for plugin in all_plugins()]


def summary_get(*, flow: str = "global", subset: str = "mini",
                ranked: dict[tuple[str, str, str], RankedBoard] | None = None) -> Summary:
    """The summary of each environment's ``flow`` board on ``subset``, cached with the home page;
    ``ranked``: the boards already read by the caller (the home page reads them all)."""
    from leaderboard.cache import HOME, cached

    wanted = summary_boards(flow, subset)

    def compute() -> Summary:
        boards = [ranked[board] for board in wanted] if ranked and all(b in ranked for b in wanted) else \
            boards_ranked_get(wanted, head=0)
        return summary_of(flow, subset, boards)

    return cached("summary", (flow, subset), compute, scope=HOME)


def model_summaries(model_id: int) -> list[tuple[Summary, SummaryRow]]:
    """The model's row in every summary (each flow and subset) it has an entry in."""
    found = []
    for subset in SUBSETS:
        for flow in FLOWS:
            summary = summary_get(flow=flow, subset=subset)
            row = summary.row_of(model_id)
            if row is not None:
                found.append((summary, row))
    return found


def summary_of(flow: str, subset: str, ranked: list[RankedBoard]) -> Summary:
    from leaderboard.stored import stored_per_scenario

    ids = [entry.submission_id for board in ranked for entry in board.overview if entry.submission_id is not None]
    means = {submission_id: stored[0] for submission_id, stored in stored_per_scenario(ids, "scenario_means").items()}
    scenarios = _scenarios(ranked)
    scales: list[Scale] = []
    by_model: dict[tuple[str, str], SummaryRow] = {}
    for index, board in enumerate(ranked):
        scale, floors, ceilings = _scale(board, means, scenarios.get(board.board.env, []))
        scales.append(scale)
        for entry in _best_complete(board.overview):
            row = by_model.setdefault((entry.team, entry.model), SummaryRow(
                entry.model, entry.team, entry.model_id, entry.is_baseline, [None] * len(ranked)))
            own = means.get(entry.submission_id or 0, {})
            score = normalised_score(own, floors, ceilings)
            row.cells[index] = SummaryCell(score.mean, score.se, score.n_scenarios, entry.mean, entry.submission_id)
    titles = [get_plugin(scale.env).title for scale in scales]
    for row in by_model.values():
        _combine(row, titles)
    rows = sorted(by_model.values(), key=lambda r: (r.mean is None, -(r.mean or 0.0), r.model.casefold()))
    return Summary(flow=flow, subset=subset, scales=scales, rows=rows)


def _best_complete(entries: list[OverviewEntry]) -> list[OverviewEntry]:
    best: dict[tuple[str, str], OverviewEntry] = {}
    for entry in entries:
        key = (entry.team, entry.model)
        if not entry.incomplete and (key not in best or entry.mean > best[key].mean):
            best[key] = entry
    return list(best.values())


def _combine(row: SummaryRow, titles: list[str]) -> None:
    missing = [title for title, cell in zip(titles, row.cells, strict=True) if cell is None or cell.mean is None]
    if missing:
        row.why_no_mean = "No complete entry on " + ", ".join(missing) + ": a mean needs every environment."
        return
    row.mean, row.se = combined([(cell.mean, cell.se) for cell in row.cells
                                 if cell is not None and cell.mean is not None])


def _suite(board: RankedBoard) -> str:
    return board.board.suite or default_suite(board.board.env)


def _scenarios(ranked: list[RankedBoard]) -> dict[str, list[tuple[int, str, Any]]]:
    """Each board's scenarios (id, key, data), by environment: one query for every board."""
    wanted = Q(pk__in=[])
    for board in ranked:
        wanted |= Q(environment_id=board.board.env, suite=_suite(board), **{f"in_{board.board.subset}": True})
    found: dict[str, list[tuple[int, str, Any]]] = {}
    for scenario_id, env, key, data in Scenario.objects.filter(wanted).values_list("id", "environment_id", "key",
                                                                                     "data"):
        found.setdefault(env, []).append((scenario_id, key, data))
    return found


def _scale(board: RankedBoard, means: dict[int, dict[int, float]],
           scenarios: list[tuple[int, str, Any]]) -> tuple[Scale, dict[int, float], dict[int, float]]:
    """The board's scale and each of its scenarios' floor and ceiling: constants, whatever its entries."""
    env, flow, subset, suite = board.board.env, board.board.flow, board.board.subset, _suite(board)
    plugin = get_plugin(env)
    reference = plugin.summary_reference(flow, subset)
    idle = next((means.get(entry.submission_id or 0, {}) for entry in board.overview
                 if entry.is_baseline and entry.model == IDLE_BASELINE), {})
    floors: dict[int, float] = {}
    ceilings: dict[int, float] = {}
    floor_sources: Counter[str] = Counter()
    ceiling_sources: Counter[str] = Counter()
    for scenario_id, key, data in scenarios:
        spec = ScenarioSpec(env=env, key=key, data=data if isinstance(data, dict) else {})
        floor, floors_from = _floor(plugin, spec, reference, idle.get(scenario_id))
        ceiling, ceilings_from = _ceiling(plugin, spec, reference)
        if ceiling is None:
            continue  # nothing fixed to normalise by
        floor_sources[floors_from] += 1
        ceiling_sources[ceilings_from] += 1
        floors[scenario_id], ceilings[scenario_id] = floor, ceiling
    skipped = sum(1 for scenario_id in ceilings if not ceilings[scenario_id] > floors[scenario_id])
    return (Scale(env=env, title=plugin.title, flow=flow, subset=subset, suite=suite,
                  scenarios=len(scenarios), floors=dict(floor_sources), ceilings=dict(ceiling_sources),
                  skipped=skipped, floor_meaning=plugin.floor_meaning, ceiling_meaning=plugin.ceiling_meaning,
                  reference=reference,
                  closed_form_ceiling=plugin.best_score(ScenarioSpec(env=env, key="", data={})) is not None),
            floors, ceilings)


def _floor(plugin: EnvironmentPlugin, spec: ScenarioSpec, reference: SummaryReference | None,
           idle: float | None) -> tuple[float, str]:
    value = plugin.idle_score(spec)
    if value is not None:
        return float(value), FLOOR_PLUGIN
    if reference is not None and reference.floor is not None:
        return reference.floor.value, FLOOR_REFERENCE
    if idle is not None:
        return idle, FLOOR_IDLE_ENTRY
    return 0.0, FLOOR_ZERO


def _ceiling(plugin: EnvironmentPlugin, spec: ScenarioSpec,
             reference: SummaryReference | None) -> tuple[float | None, str]:
    value = plugin.best_score(spec)
    if value is not None:
        return float(value), CEILING_PLUGIN
    if reference is not None:
        return reference.ceiling.value, CEILING_REFERENCE
    return None, ""


@dataclass(frozen=True)
class ScaleNote:
    """One environment's floor and ceiling as a page names them once: the boards they hold for."""

    env: str
    title: str
    floor_text: str
    ceiling_text: str
    skipped: int
    boards: str


def scale_notes(scales: list[Scale]) -> list[ScaleNote]:
    """Each environment's distinct floor and ceiling once, in the order first met, with the boards
    (flow · set) each holds for: a model's page has several boards of one environment, mostly alike."""
    groups: dict[tuple[str, str, str, int], list[Scale]] = {}
    for scale in scales:
        groups.setdefault((scale.env, scale.floor_text, scale.ceiling_text, scale.skipped), []).append(scale)
    notes = []
    for (env, floor, ceiling, skipped), alike in groups.items():
        boards = ", ".join(dict.fromkeys(f"{s.flow.title()} · {s.subset}" for s in alike))
        notes.append(ScaleNote(env=env, title=alike[0].title, floor_text=floor, ceiling_text=ceiling,
                               skipped=skipped, boards=boards))
    # An environment's notes stay together (its mini and full references differ), in the order first met.
    first = {scale.env: index for index, scale in reversed(list(enumerate(scales)))}
    return sorted(notes, key=lambda note: first[note.env])
