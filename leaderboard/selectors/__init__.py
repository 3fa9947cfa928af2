"""Reads for boards, metric cards and scenarios.

One module per read model: a board (``boards``, its rows in ``rows``), the home page's stored
rankings (``ranked``) and overview (``overview``), a board's cost view (``board_cost``), a model's
page (``model_page``), a submission's headline (``headline``), an environment's metric card
(``metric_card``) and the summary across environments (``summary``); ``query`` holds what a page or
API of the boards was asked for (a board's filters, search and sort; an analysis page's blocks).
"""
from __future__ import annotations

from leaderboard.selectors.board_cost import COST_AXES, BoardCost, CostEntry, board_cost_get
from leaderboard.selectors.boards import RANKED_STATUSES, SUITE_NAME, board_get, board_organisations, visible_entries
from leaderboard.selectors.cached_reads import (
    board_cached,
    board_organisations_cached,
    board_storable,
    boards_ranked_cached,
    home_boards_cached,
)
from leaderboard.selectors.headline import BoardPlace, Headline, submission_headline
from leaderboard.selectors.metric_card import metric_card, scenario_notes
from leaderboard.selectors.model_page import (
    ModelBoardEntry,
    ModelEnvironmentBest,
    ModelPage,
    model_chart_data,
    model_page_get,
    parameters_label,
)
from leaderboard.selectors.overview import Overview, OverviewCell, OverviewEntry, OverviewRow, overview_get, overview_of
from leaderboard.selectors.query import (
    ASCENDING_FIRST,
    PROMPT_VERSION,
    SIZE_BUCKETS,
    SORT_COLUMNS,
    UNKNOWN_SIZE,
    AnalysisQuery,
    BoardFilter,
    BoardQuery,
    BoardSort,
    CompareQuery,
    CostQuery,
    HomeQuery,
    PairsQuery,
    size_bucket,
)
from leaderboard.selectors.ranked import RankedBoard, boards_ranked_get
from leaderboard.selectors.rows import Board, BoardRow, PromptGeneration
from leaderboard.selectors.summary import (
    Summary,
    SummaryCell,
    SummaryRow,
    model_summaries,
    scale_notes,
    summary_get,
)

__all__ = [
    "ASCENDING_FIRST",
    "COST_AXES",
    "PROMPT_VERSION",
    "RANKED_STATUSES",
    "SIZE_BUCKETS",
    "SORT_COLUMNS",
    "SUITE_NAME",
    "UNKNOWN_SIZE",
    "AnalysisQuery",
    "Board",
    "BoardCost",
    "BoardFilter",
    "BoardPlace",
    "BoardQuery",
    "BoardRow",
    "BoardSort",
    "CompareQuery",
    "CostEntry",
    "CostQuery",
    "Headline",
    "HomeQuery",
    "ModelBoardEntry",
    "ModelEnvironmentBest",
    "ModelPage",
    "Overview",
    "OverviewCell",
    "OverviewEntry",
    "OverviewRow",
    "PairsQuery",
    "PromptGeneration",
    "RankedBoard",
    "Summary",
    "SummaryCell",
    "SummaryRow",
    "board_cost_get",
    "board_cached",
    "board_get",
    "board_organisations",
    "board_organisations_cached",
    "board_storable",
    "boards_ranked_cached",
    "boards_ranked_get",
    "home_boards_cached",
    "metric_card",
    "model_summaries",
    "model_chart_data",
    "model_page_get",
    "overview_get",
    "overview_of",
    "parameters_label",
    "scenario_notes",
    "size_bucket",
    "submission_headline",
    "scale_notes",
    "summary_get",
    "visible_entries",
]
