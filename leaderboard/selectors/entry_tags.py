"""A submission's scores by scenario tag: the entry's own row of its board's analysis tables."""
from __future__ import annotations

from dataclasses import dataclass

from evaluators.base import get_plugin
from leaderboard.selectors.headline import BoardPlace
from leaderboard.selectors.rows import BoardRow
from leaderboard.stored import entry_aggregates, suite_scenarios_get
from scoring.ordering import natural_key
from submissions.models import Submission


@dataclass(frozen=True)
class TagCell:
    value: str
    #: Mean of the entry's per-scenario means over the scenarios carrying the value.
    mean: float
    scenarios: int


@dataclass(frozen=True)
class EntryTagTable:
    tag: str
    label: str
    cells: list[TagCell]


def entry_tag_tables(submission: Submission, place: BoardPlace) -> list[EntryTagTable]:
    """The entry's mean per value of each of its environment's tag groups, read from the stored
    aggregate the analysis page reads (``leaderboard.stored.entry_aggregates``), so every number is
    the one the analysis shows for this entry. A group per scenario (WebUI's pages) is left out:
    the page's per-scenario table already shows it."""
    env, subset, suite = submission.environment_id, submission.subset, submission.suite
    try:
        plugin = get_plugin(env)
    except KeyError:  # an environment no longer configured: no tags to group by
        return []
    groups = [(tag, label) for tag, label in plugin.tag_groups if tag != "key"]
    if not groups:
        return []
    # The aggregate is keyed by the entry's stored result (or computed from its means): the rest of a
    # board row plays no part in it.
    row = BoardRow(submission_id=submission.id, model="", team="", organisation="", parameter_count=None,
                   open_weights=False, is_baseline=submission.is_baseline, status=submission.status,
                   result_stamp=place.result_stamp, scenario_means=place.scenario_means)
    aggregate = entry_aggregates([row], suite_scenarios_get(env, suite), plugin.tag_groups, subset,
                                 panels=plugin.analysis_panels, full=[submission.id]).get(submission.id)
    if aggregate is None:
        return []
    tables = []
    for tag, label in groups:
        by_value = aggregate.tag_means.get(tag, {})
        cells = [TagCell(value=value, mean=by_value[value][0], scenarios=by_value[value][1])
                 for value in sorted(by_value, key=natural_key)]
        if cells:
            tables.append(EntryTagTable(tag=tag, label=label, cells=cells))
    return tables
