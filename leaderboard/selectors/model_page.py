"""A model's page: its metadata and its row on every board it has a visible entry on."""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from evaluators.base import all_plugins
from leaderboard.selectors.boards import RANKED_STATUSES, board_get, visible_entries
from leaderboard.selectors.rows import BoardRow
from submissions.models import Submission


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
    #: The highest mean on the board (any model's): the chart's axis reaches at least this far, so that
    #: a score of 0 is drawn against the board's scale rather than on an empty sliver of an axis.
    board_top: float | None = None


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
    #: The prices per million prompt / completion tokens (USD) its team gave, which the cost figures use.
    price_input_per_mtok: float | None = None
    price_output_per_mtok: float | None = None

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
        board_top = max((row.mean for row in board.rows if row.mean is not None), default=None)
        entries += [ModelBoardEntry(env=env, env_title=board.title, score_label=board.score_label, flow=flow,
                                    subset=subset, suite=suite, row=row, board_top=board_top)
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
        price_input_per_mtok=model.price_input_per_mtok, price_output_per_mtok=model.price_output_per_mtok,
        best=[ModelEnvironmentBest(env=env, title=entry.env_title, score_label=entry.score_label, entry=entry)
              for env, entry in best.items()])


#: Room on a model chart's score axis beyond the data, as a share of the data's span: a little on the
#: side away from the bar's end, more beyond its end, where the value's label sits past the whisker.
CHART_PADDING = 0.05
CHART_LABEL_ROOM = 0.18


def model_chart_data(best: list[ModelEnvironmentBest]) -> list[dict[str, Any]]:
    """What the model page's chart draws: one panel per environment, each on its own score axis
    (environments score on their own scales), its range fitted to the best mean, its 95 % interval
    and the board's highest mean, from 0 (the bar's base). The value's label is placed at ``label_y`` beyond the end of
    the bar and of its whisker (above for a mean ≥ 0, below for a negative one), so that neither
    covers it; ``range`` leaves it room."""
    panels = []
    for item in best:
        row = item.entry.row
        mean = row.mean if row.mean is not None else 0.0
        low = row.ci_low if row.ci_low is not None else mean
        high = row.ci_high if row.ci_high is not None else mean
        # The axis spans at least 0 to the board's highest mean: the entry is seen against its board.
        reach = item.entry.board_top if item.entry.board_top is not None else 0.0
        bottom, top = min(0.0, mean, low), max(0.0, mean, high, reach)
        span = (top - bottom) or max(abs(mean), 1.0)
        upward = mean >= 0
        range_low = bottom - (span * (CHART_LABEL_ROOM if not upward else CHART_PADDING if bottom < 0 else 0.0))
        range_high = top + span * (CHART_LABEL_ROOM if upward else CHART_PADDING if top > 0 else 0.0)
        panels.append({"env": item.title, "label": item.score_label, "mean": row.mean, "low": row.ci_low,
                       "high": row.ci_high, "board": f"{item.entry.flow} · {item.entry.subset} · {item.entry.suite}",
                       "complete": row.complete, "range": [range_low, range_high],
                       "label_y": max(mean, high) if upward else min(mean, low),
                       "label_side": "above" if upward else "below"})
    return panels
