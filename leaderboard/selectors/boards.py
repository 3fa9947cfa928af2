"""One board: its entries' stored numbers (or their attempts summarised), ranked, with ties marked."""
from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from catalogue.models import ReportedResult, Scenario
from catalogue.prompt_sets import prompt_set_current, prompt_set_get
from catalogue.selectors import default_suite
from evaluators.base import PROMPTS_PLATFORM, SUBSETS, PromptSet, get_plugin
from evaluators.settings import EvaluationSettings
from leaderboard.selectors.query import BoardFilter
from leaderboard.selectors.rows import Board, BoardRow, PromptGeneration
from scoring.stats import CurvePoint, EntrySummary, competition_ranks, summarise_entry
from submissions.models import Submission
from submissions.selectors import attempt_outcomes, visible_entries

SUITE_NAME = re.compile(r"[-a-zA-Z0-9_]{1,32}")
RANKED_STATUSES = (Submission.Status.COMPLETED, Submission.Status.INCOMPLETE)


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
    known: dict[str, EvaluationSettings] = {}
    evaluations = {}
    for entry in entries:
        settings = entry.values["settings"] or {}
        key = json.dumps(settings, sort_keys=True, default=str)
        if key not in known:
            known[key] = EvaluationSettings.from_mapping(settings, env, flow, subset=subset, platform=True)
        evaluations[entry.id] = known[key]
    return evaluations


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
    if flow not in plugin.flows or subset not in SUBSETS:
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
    ranked = [row for row in rows
              if (not row.is_baseline and not row.variant and row.mean is not None
                  and (rank_reported or not row.is_reported) and (rank_incomplete or row.complete))]
    _rank(ranked, f"{env}/{flow}/{subset}/{suite}/{shown_version}")
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
    """The published numbers of the board. The paper's rows say which of its tables each comes from
    and how many scenarios the paper measured it on (the official release's count of the subset)."""
    from catalogue.citations import PAPER_URL
    from catalogue.paper_results import IA_RA_TABLE, paper_table

    measured_on = get_plugin(env).official_scenarios.get(subset)
    table = paper_table(subset)
    rows = []
    for r in ReportedResult.objects.filter(environment_id=env, flow=flow, subset=subset):
        paper = r.source == PAPER_URL
        rows.append(BoardRow(
            submission_id=None, model=r.model_name, team=r.organisation or "reported", organisation=r.organisation,
            parameter_count=r.parameter_count, open_weights=r.open_weights, is_baseline=False, status="reported",
            mean=r.score, ia_pct=r.ia_pct, ra_pct=r.ra_pct, is_reported=True, source=r.source,
            reported_repeats=r.repeats, reported_uncertainty=r.uncertainty, note=r.note,
            n_scenarios=(measured_on or 0) if paper else 0,
            reported_table=table.label if paper and table else "",
            reported_ia_ra_table=IA_RA_TABLE if paper and (r.ia_pct is not None or r.ra_pct is not None) else ""))
    return rows


def _rank(ranked: list[BoardRow], board: str) -> None:
    """Competition ranks ("1, 1, 3": equal means share the best rank of their group, see
    ``scoring.stats.competition_ranks``) and each entry's bootstrap rank interval over scenarios
    (computed once for a set of entries and stored: ``leaderboard.stored.rank_intervals``)."""
    from leaderboard.stored import rank_intervals

    for row, rank in zip(ranked, competition_ranks([row.mean or 0.0 for row in ranked]), strict=True):
        row.rank = rank
    for row, interval in zip(ranked, rank_intervals(ranked, board), strict=True):
        row.rank_low, row.rank_high = interval if interval is not None else (None, None)


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


def board_organisations(*, env: str, flow: str, subset: str, suite: str) -> list[str]:
    """Organisations with a ranked entry on the board, for its filter (whatever filter is applied)."""
    names = (Submission.objects.filter(visible_entries(), environment_id=env, flow=flow, subset=subset, suite=suite,
                                       status__in=RANKED_STATUSES, is_baseline=False)
             .exclude(model__organisation="").values_list("model__organisation", flat=True).distinct())
    return sorted(set(names))
