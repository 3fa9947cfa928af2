"""What a board's pages compute over all of its entries, stored in the database as each entry
finishes instead of recomputed on every build of a page.

An entry's own numbers are its ``SubmissionResult`` (stored when it finishes). On top of it:

* ``StoredPairedTest``: the paired t-test of an entry against the entry leading its board (the
  board's "tied" shading and p-values). A new entry adds one test (itself against the leader); a new
  leader adds one per entry.
* ``EntryAnalysis``: an entry's mean per scenario tag value, its environment's analysis panels and the range of its
  per-scenario means (the analysis page's tables, charts and matrix colours).
* ``BoardAggregate``: the median of every per-scenario mean of a board's generation (the
  comparison's fail threshold), over the entries it names.
* ``StoredRankIntervals``: the bootstrap rank intervals of a board's ranked entries, for one set of
  entries (a filter that ranks other entries has its own).
* ``StoredBoardRanking``: a board's ranked rows as anonymous visitors see it by default, what the
  home page's cards and its overview read of every board at once (``board_rankings_store``).

Each stored value names what it was computed from (the results' ``computed_at``, a digest of the
suite's scenarios, the entries; a ranking, the boards' generations), so a value that no longer
matches is never read: it is computed again where it is needed and stored again. Nothing here
changes a number: every value is computed by the same functions, over the same values in the same
order, as the pages computed it before.

``leaderboard.changes.boards_store`` fills in what is missing for the boards a write changed
(``boards_changed`` calls it once the write commits), so that the first page built after a submission
finishes, or after one is hidden, published or deleted, reads stored values only.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.db import DatabaseError, transaction
from django.utils import timezone

from catalogue.models import Scenario
from leaderboard.models import (
    BoardAggregate,
    BoardsGeneration,
    EntryAnalysis,
    StoredBoardRanking,
    StoredPairedTest,
    StoredRankIntervals,
)
from scoring.ordering import natural_key
from scoring.stats import (
    BOOTSTRAP_SEED,
    RANK_RESAMPLES,
    RANK_TIE_TOLERANCE,
    CurvePoint,
    EntrySummary,
    PairedTest,
    bootstrap_rank_intervals,
    paired_test,
)

if TYPE_CHECKING:
    from evaluators.base import AnalysisPanel
    from leaderboard.cache import BoardRef
    from leaderboard.selectors.rows import Board, BoardRow

logger = logging.getLogger(__name__)


def _by_scenario(mapping: Any) -> dict[int, Any]:
    return {int(key): value for key, value in (mapping or {}).items()}


def stored_per_scenario(submission_ids: Iterable[int], *names: str) -> dict[int, tuple[dict[int, Any], ...]]:
    """The named per-scenario fields (``scenario_means``, ``scenario_scores``, ``first_attempts``) of
    the submissions' stored results, keyed by scenario id: one query, for the entries asked for only."""
    from submissions.models import SubmissionResult

    ids = sorted(set(submission_ids))
    if not ids:
        return {}
    rows = SubmissionResult.objects.filter(submission_id__in=ids).values_list("submission_id", *names)
    return {row[0]: tuple(_by_scenario(value) for value in row[1:]) for row in rows}


def _row_means(rows: Sequence[BoardRow]) -> dict[int, dict[int, float]]:
    """Each row's per-scenario means: the row's own where it carries them (summarised from its
    attempts, or a detailed board), else its stored result's."""
    means: dict[int, dict[int, float]] = {}
    wanted = []
    for row in rows:
        if row.submission_id is None:
            continue
        if row.scenario_means or row.result_stamp is None:
            means[row.submission_id] = row.scenario_means
        else:
            wanted.append(row.submission_id)
    for submission_id, (stored,) in stored_per_scenario(wanted, "scenario_means").items():
        means[submission_id] = stored
    return means


def _store(write: Any, what: str) -> bool:
    """Run a write of stored values, and say whether it was stored; one that fails (a row deleted
    meanwhile) is logged and skipped: the values are computed again where they are next needed."""
    try:
        with transaction.atomic():
            write()
    except DatabaseError:
        logger.warning("could not store %s", what, exc_info=True)
        return False
    return True


# --- paired tests against the leader -----------------------------------------------------------


def paired_tests(leader: BoardRow, others: Sequence[BoardRow]) -> list[PairedTest]:
    """``paired_test(leader, other)`` on per-scenario means for each of ``others``, read from the
    stored tests where they are current; the others are computed now and stored."""
    if not others:
        return []
    found: dict[int, PairedTest] = {}
    stamped = {row.submission_id: row for row in others
               if row.submission_id is not None and row.result_stamp is not None}
    if leader.submission_id is not None and leader.result_stamp is not None and stamped:
        for other_id, leader_at, other_at, n_shared, difference, p_value in (
                StoredPairedTest.objects.filter(leader_id=leader.submission_id, other_id__in=list(stamped))
                .values_list("other_id", "leader_computed_at", "other_computed_at", "n_shared", "mean_difference",
                             "p_value")):
            if leader_at == leader.result_stamp and other_at == stamped[other_id].result_stamp:
                found[other_id] = PairedTest(n_shared, difference, p_value)
    missing = [row for row in others if row.submission_id is not None and row.submission_id not in found]
    if missing:
        means = _row_means([leader, *missing])
        leader_means = means.get(leader.submission_id, {}) if leader.submission_id is not None else {}
        new = []
        for row in missing:
            assert row.submission_id is not None
            test = paired_test(leader_means, means.get(row.submission_id, {}))
            found[row.submission_id] = test
            if leader.result_stamp is not None and row.result_stamp is not None:
                new.append(StoredPairedTest(
                    leader_id=leader.submission_id, other_id=row.submission_id,
                    leader_computed_at=leader.result_stamp, other_computed_at=row.result_stamp,
                    n_shared=test.n_shared, mean_difference=test.mean_difference, p_value=test.p_value))
        if new:
            _store(lambda: StoredPairedTest.objects.bulk_create(
                new, update_conflicts=True, unique_fields=["leader", "other"],
                update_fields=["leader_computed_at", "other_computed_at", "n_shared", "mean_difference", "p_value"]),
                "paired tests")
    # A published number (no submission) shares no scenario with anything.
    return [found[row.submission_id] if row.submission_id is not None else paired_test({}, {}) for row in others]


# --- a suite's scenarios -----------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteScenario:
    id: int
    key: str
    tags: dict[str, Any]
    in_mini: bool
    in_full: bool

    def in_subset(self, subset: str) -> bool:
        return self.in_mini if subset == "mini" else self.in_full


@dataclass
class SuiteScenarios:
    """Every scenario of one environment's suite in natural order, and a digest of their keys, tags
    and subsets: what an entry's analysis aggregate is grouped by."""

    env: str
    suite: str
    by_id: dict[int, SuiteScenario] = field(default_factory=dict)
    position: dict[int, int] = field(default_factory=dict)
    digest: str = ""

    def ordered(self, ids: Iterable[int]) -> list[int]:
        return sorted((i for i in ids if i in self.by_id), key=self.position.__getitem__)

    def subset_ids(self, subset: str) -> set[int]:
        return {i for i, scenario in self.by_id.items() if scenario.in_subset(subset)}


def suite_scenarios_get(env: str, suite: str) -> SuiteScenarios:
    rows = sorted(Scenario.objects.filter(environment_id=env, suite=suite).order_by("id")
                  .values_list("id", "key", "tags", "in_mini", "in_full"))
    scenarios = [SuiteScenario(id=i, key=k, tags=t if isinstance(t, dict) else {}, in_mini=m, in_full=f)
                 for i, k, t, m, f in rows]
    ordered = sorted(scenarios, key=lambda s: natural_key(s.key))
    digest = hashlib.sha256(json.dumps([[s.id, s.key, s.tags, s.in_mini, s.in_full] for s in scenarios],
                                       sort_keys=True, default=str).encode()).hexdigest()
    return SuiteScenarios(env=env, suite=suite, by_id={s.id: s for s in scenarios},
                          position={s.id: index for index, s in enumerate(ordered)}, digest=digest)


# --- an entry's analysis aggregate -------------------------------------------------------------


def _tag_value(scenario: SuiteScenario, tag: str) -> str | None:
    # As leaderboard.analysis.tag_value.
    if tag == "key":
        return scenario.key
    value = scenario.tags.get(tag)
    return None if value is None or value == "" else str(value)


@dataclass
class EntryAggregate:
    """An entry's share of its board's analysis (see ``EntryAnalysis``)."""

    tag_means: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    #: Each of the environment's analysis panels' aggregate by key (None where it has nothing to show).
    panels: dict[str, Any] = field(default_factory=dict)
    low: float | None = None
    high: float | None = None
    #: Scenarios it has means for outside its board's subset (the subset changed since it ran).
    extra: list[int] = field(default_factory=list)


#: Moved on whenever what an ``EntryAnalysis`` holds changes in code: the rows stored before are
#: then stale (see ``analysis_digest``) and computed again when next read.
ANALYSIS_FORMAT = 2


def analysis_digest(scenarios: SuiteScenarios, panels: Sequence[AnalysisPanel]) -> str:
    """What an entry's stored analysis was computed with: the suite's scenarios, the environment's
    panels and the stored format; a change to any of them makes the stored rows stale."""
    return hashlib.sha256(json.dumps([ANALYSIS_FORMAT, scenarios.digest, [panel.key for panel in panels]])
                          .encode()).hexdigest()


def entry_aggregate(means: dict[int, float], scenarios: SuiteScenarios, tag_groups: Sequence[tuple[str, str]],
                    subset: str, panels: Sequence[AnalysisPanel] = ()) -> EntryAggregate:
    """The aggregate of one entry's per-scenario means, summed in the order the analysis page sums
    them (the scenarios' natural order), so that every mean is the one it computed."""
    own = scenarios.ordered(means)
    tag_means: dict[str, dict[str, list[Any]]] = {}
    for tag, _label in tag_groups:
        groups: dict[str, list[float]] = defaultdict(list)
        for scenario_id in own:
            value = _tag_value(scenarios.by_id[scenario_id], tag)
            if value is not None:
                groups[value].append(means[scenario_id])
        tag_means[tag] = {value: [sum(hits) / len(hits), len(hits)] for value, hits in groups.items()}
    tagged = [(scenarios.by_id[scenario_id].tags, means[scenario_id]) for scenario_id in own]
    values = list(means.values())
    return EntryAggregate(
        tag_means=tag_means, panels={panel.key: panel.aggregate(tagged) for panel in panels},
        low=min(values) if values else None, high=max(values) if values else None,
        extra=sorted(i for i in means if i not in scenarios.by_id or not scenarios.by_id[i].in_subset(subset)))


def entry_aggregates(rows: Sequence[BoardRow], scenarios: SuiteScenarios, tag_groups: Sequence[tuple[str, str]],
                     subset: str, *, panels: Sequence[AnalysisPanel],
                     full: Collection[int] | None = None) -> dict[int, EntryAggregate]:
    """Each row's aggregate: stored where current (same result, same scenarios and panels), else
    computed from its per-scenario means and stored. ``full`` names the entries whose tag means and
    panels are read (None: all); the others' come with their range and extra scenarios only (a page
    of the analysis shows some entries' tables, and WebUI's per-page tag is a mean per scenario)."""
    from django.db.models import Case, JSONField, Value, When

    entries = [row for row in rows if row.submission_id is not None]
    found: dict[int, EntryAggregate] = {}
    digest = analysis_digest(scenarios, panels)
    stamped = {row.submission_id: row for row in entries if row.result_stamp is not None}
    if stamped:
        queryset = EntryAnalysis.objects.filter(result_id__in=list(stamped))
        if full is not None:
            wanted = sorted(set(full))
            queryset = queryset.annotate(
                tags_read=Case(When(result_id__in=wanted, then="tag_means"), default=Value(None),
                               output_field=JSONField()),
                panels_read=Case(When(result_id__in=wanted, then="panels"), default=Value(None),
                                 output_field=JSONField()))
        for result_id, computed_from, stored_digest, tag_means, panel_data, low, high, extra in queryset.values_list(
                "result_id", "computed_from", "scenarios_digest", "tag_means" if full is None else "tags_read",
                "panels" if full is None else "panels_read", "low", "high", "extra_scenarios"):
            if computed_from == stamped[result_id].result_stamp and stored_digest == digest:
                found[result_id] = EntryAggregate(tag_means=tag_means or {}, panels=panel_data or {}, low=low,
                                                  high=high, extra=list(extra))
    missing = [row for row in entries if row.submission_id not in found]
    if missing:
        means = _row_means(missing)
        new = []
        for row in missing:
            assert row.submission_id is not None
            aggregate = entry_aggregate(means.get(row.submission_id, {}), scenarios, tag_groups, subset, panels)
            found[row.submission_id] = aggregate
            if row.result_stamp is not None:
                new.append(EntryAnalysis(
                    result_id=row.submission_id, computed_from=row.result_stamp, scenarios_digest=digest,
                    tag_means=aggregate.tag_means, panels=aggregate.panels, low=aggregate.low, high=aggregate.high,
                    extra_scenarios=aggregate.extra))
        if new:
            _store(lambda: EntryAnalysis.objects.bulk_create(
                new, update_conflicts=True, unique_fields=["result"],
                update_fields=["computed_from", "scenarios_digest", "tag_means", "panels", "low", "high",
                               "extra_scenarios"]),
                "entry analyses")
    return found


# --- a board's aggregate -----------------------------------------------------------------------


def _board_name(board: Board) -> str:
    version = board.prompts.version if board.prompts else ""
    return f"{board.env}/{board.flow}/{board.subset}/{board.suite}/{version}"


def board_median(board: Board) -> float | None:
    """The median of every per-scenario mean of the board's entries (None without any), stored for
    the entries it was computed over."""
    import statistics

    entries = [row for row in board.rows if row.submission_id is not None]
    storable = all(row.result_stamp is not None for row in entries)
    digest = hashlib.sha256(json.dumps(sorted(
        [row.submission_id, row.result_stamp.isoformat() if row.result_stamp else ""] for row in entries),
    ).encode()).hexdigest()
    name = _board_name(board)
    if storable:
        stored = BoardAggregate.objects.filter(board=name).values_list("entries_digest", "median").first()
        if stored is not None and stored[0] == digest:
            return stored[1]
    values = [value for means in _row_means(entries).values() for value in means.values()]
    median = statistics.median(values) if values else None
    if storable:
        _store(lambda: BoardAggregate.objects.update_or_create(
            board=name, defaults={"entries_digest": digest, "median": median}), "a board aggregate")
    return median


# --- a board's rank intervals ------------------------------------------------------------------

#: Moved on whenever how rank intervals are computed changes in code: the stored ones are then stale.
RANK_INTERVALS_FORMAT = 1


def rank_intervals(ranked: Sequence[BoardRow], board: str) -> list[tuple[int, int] | None]:
    """Each ranked row's bootstrap rank interval (``scoring.stats.bootstrap_rank_intervals`` over
    the rows' per-scenario means, in the order given), read from ``StoredRankIntervals`` where the
    same rows with the same results were resampled before, else computed and stored under
    ``board`` (its name: a board's sets older than a day are dropped then). A published number has
    no scenarios: None, and it takes no part in the others' resamples."""
    entries = [row for row in ranked if row.submission_id is not None]
    if not entries:
        return [None for _ in ranked]
    storable = all(row.result_stamp is not None for row in entries)
    digest = hashlib.sha256(json.dumps([
        RANK_INTERVALS_FORMAT, RANK_RESAMPLES, BOOTSTRAP_SEED, RANK_TIE_TOLERANCE, board,
        [[row.submission_id, row.result_stamp.isoformat() if row.result_stamp else ""] for row in entries],
    ]).encode()).hexdigest()
    computed: list[tuple[int, int] | None] | None = None
    if storable:
        stored = StoredRankIntervals.objects.filter(entries_digest=digest).values_list("intervals", flat=True).first()
        if isinstance(stored, list) and len(stored) == len(entries):
            computed = [(int(value[0]), int(value[1])) if value else None for value in stored]
    if computed is None:
        means = _row_means(entries)
        computed = bootstrap_rank_intervals([means.get(row.submission_id or 0, {}) for row in entries])
        if storable:
            values = [list(interval) if interval else None for interval in computed]

            def write() -> None:
                StoredRankIntervals.objects.filter(
                    board=board, computed_at__lt=timezone.now() - timedelta(days=1)).delete()
                StoredRankIntervals.objects.update_or_create(
                    entries_digest=digest, defaults={"board": board[:200], "intervals": values})

            _store(write, "rank intervals")
    found = {row.submission_id: interval for row, interval in zip(entries, computed, strict=True)}
    return [found.get(row.submission_id) if row.submission_id is not None else None for row in ranked]


# --- a board's ranking -------------------------------------------------------------------------

#: Moved on whenever what a stored row holds, or how a board ranks its rows, changes in code: the
#: rankings an earlier version stored are then never read (see ``ranking_fingerprint``).
RANKING_FORMAT = 2
#: The rows' fields that JSON does not carry as they are.
_ROW_DATES = ("submitted_at", "result_stamp")


def ranking_fingerprint(env: str, flow: str) -> str:
    """What a board's stored ranking depends on that no write announces (no generation moves on
    when a deployment changes it): the rows' format and fields, the default suite's setting and the
    plug-in's own prompt version (a suite's current one when it has no imported set)."""
    from django.conf import settings

    from evaluators.base import get_plugin

    return hashlib.sha256(json.dumps([
        RANKING_FORMAT, _row_fields(), settings.MAGEBENCH_DEFAULT_SUITE,
        get_plugin(env).prompts(flow).version]).encode()).hexdigest()


def ranking_generations(boards: Iterable[BoardRef]) -> dict[BoardRef, tuple[int, int]]:
    """Everything's and each board's ``BoardsGeneration`` counter now (0 where none moved yet), in
    one query: read before a board is ranked, they are what its stored ranking is current for."""
    from leaderboard.cache import EVERYTHING, board_scope

    wanted = {board: board_scope(*board) for board in boards}
    values = dict(BoardsGeneration.objects.filter(scope__in=[EVERYTHING, *wanted.values()])
                  .values_list("scope", "value"))
    everything = values.get(EVERYTHING, 0)
    return {board: (everything, values.get(scope, 0)) for board, scope in wanted.items()}


@functools.cache
def _row_fields() -> tuple[str, ...]:
    from leaderboard.selectors.rows import BoardRow

    return tuple(row_field.name for row_field in fields(BoardRow))


def ranking_row_dump(row: BoardRow) -> str:
    """One row as one line of JSON, every field of it (``ranking_row_load`` reads it back equal)."""
    values = {name: getattr(row, name) for name in _row_fields()}
    for name in _ROW_DATES:
        if values[name] is not None:
            values[name] = values[name].isoformat()
    for name in EntrySummary.PER_SCENARIO:
        # Keyed by scenario id: a JSON object's keys would come back as strings.
        values[name] = [[key, item] for key, item in values[name].items()]
    values["best_of_n"] = [list(point) for point in values["best_of_n"]]
    # The values only, in the fields' order (named by ``ranking_fingerprint``): the names made more
    # than half of a row. json.dumps escapes a line break inside a string: one row is one line.
    return json.dumps(list(values.values()), separators=(",", ":"))


def ranking_row_load(line: str) -> BoardRow:
    from leaderboard.selectors.rows import BoardRow

    values = dict(zip(_row_fields(), json.loads(line), strict=True))
    for name in _ROW_DATES:
        values[name] = datetime.fromisoformat(values[name]) if values[name] is not None else None
    for name in EntrySummary.PER_SCENARIO:
        values[name] = dict(values[name])
    values["variant"] = tuple(values["variant"])
    values["best_of_n"] = [CurvePoint(*point) for point in values["best_of_n"]]
    return BoardRow(**values)


def ranking_cells(rows: Iterable[BoardRow]) -> list[list[Any]]:
    """What the overview reads of each row it places (a score, and run here: not a reported number),
    in rank order: ``leaderboard.selectors.OverviewEntry``'s fields."""
    return [[row.team, row.model, row.model_id, row.is_baseline, row.mean, row.se, row.submission_id, row.incomplete]
            for row in rows if row.mean is not None and not row.is_reported]


class _RankingsChanging:
    """Registered on a writer's transaction by ``boards_changed``, before its own on-commit work: until
    the write commits the database's generations have not moved, so that inside the transaction (the
    writer, or a page built in it) the rankings stored before the write look current though they are
    not. Savepoints rolled back drop it with the write, a rollback with the transaction."""

    def __init__(self, boards: Iterable[BoardRef]) -> None:
        #: None: every board.
        self.boards = frozenset(boards) or None
        #: Boards ranked and stored again inside the transaction since: their rankings hold the write.
        self.covered: set[BoardRef] = set()
        self.committed = False

    def __call__(self) -> None:
        self.committed = True

    def changes(self, board: BoardRef) -> bool:
        return (self.boards is None or board in self.boards) and board not in self.covered


def _rankings_changing() -> list[_RankingsChanging]:
    connection = transaction.get_connection()
    if not connection.in_atomic_block:
        return []
    return [func for _savepoints, func, _robust in connection.run_on_commit
            if isinstance(func, _RankingsChanging) and not func.committed]


def rankings_changing(boards: Iterable[BoardRef]) -> None:
    """Call where a write changes ``boards`` (none: every board): see ``rankings_uncommitted``."""
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(_RankingsChanging(boards))


def rankings_uncommitted(boards: Iterable[BoardRef]) -> set[BoardRef]:
    """Of ``boards``, those whose stored rankings a write in this connection's open transaction,
    not yet committed, changed since they were stored: a page built inside it ranks them again."""
    pending = _rankings_changing()
    return {board for board in boards if any(write.changes(board) for write in pending)}


def board_rankings_store(boards: Sequence[tuple[Board, tuple[int, int]]]) -> None:
    """Store each board, the default view of its board (``board_get`` with no filter, no viewer, the
    default suite), as the board's ranking at its generations, read before it was built: a write
    committed meanwhile moved them on, so that a ranking which may predate it is never read. One
    transaction for them all (the home page stores every board it had to rank at once)."""
    rankings = [StoredBoardRanking(
        env=board.env, flow=board.flow, subset=board.subset, suite=board.suite,
        prompt_version=board.prompts.version if board.prompts else "", everything_generation=generations[0],
        board_generation=generations[1], fingerprint=ranking_fingerprint(board.env, board.flow),
        board={"scenario_count": board.scenario_count, "checked_scenarios": board.checked_scenarios,
               "flagged_scenarios": board.flagged_scenarios, "note": board.note},
        rows="\n".join(ranking_row_dump(row) for row in board.rows), entries=len(board.rows),
        cells=json.dumps(ranking_cells(board.rows), separators=(",", ":")), computed_at=timezone.now())
        for board, generations in boards]

    def write() -> None:
        # One statement a ranking: several in one go are sent as arrays, whose every quote of the
        # rows' JSON psycopg escapes in Python (a third of a second for ten boards of 200 rows).
        for ranking in rankings:
            StoredBoardRanking.objects.bulk_create(
                [ranking], update_conflicts=True, unique_fields=["env", "flow", "subset"],
                update_fields=["suite", "prompt_version", "everything_generation", "board_generation", "fingerprint",
                               "board", "rows", "entries", "cells", "computed_at"])

    if rankings and _store(write, "boards' rankings"):
        # Ranked inside a write's transaction, after it: these rankings hold what it changed.
        for pending in _rankings_changing():
            pending.covered.update((board.env, board.flow, board.subset) for board, _ in boards)
