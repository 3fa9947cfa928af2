"""The boards' query strings, read once: one serializer per page or API says what each parameter takes,
and builds the typed query (``leaderboard.selectors.query``) the views and selectors work with.

The pages and their APIs read the same parameters with the same serializers, in one call:
``XParams.read(request)``. A value a parameter does not take is refused, never read as its default:
``BadQuery`` names the parameter, which an API answers as a 400 (as every list does,
``submissions.paging``) and a page as a 400 page that names it (``shows_bad_query``). Parameters no
serializer names (a script's own, a campaign tag) are ignored.
"""
from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework import serializers

from evaluators.base import FLOWS, SUBSETS
from leaderboard.pairs import PAIR_ORDERS, PAIRS_PER_PAGE
from leaderboard.selectors.board_cost import COST_AXES
from leaderboard.selectors.boards import SUITE_NAME
from leaderboard.selectors.query import (
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
)
from submissions.export_apis import FramesQuery
from submissions.paging import BadQuery, checked, checked_query

#: The largest page (of rows, columns or blocks) a query names: far past any board's last page, which a
#: larger number is shown as; a bound keeps the number a small one wherever it is computed with.
PAGE_MAX = 10**6
#: The largest id a submission can have (a 64-bit primary key): a larger one would fail in the database.
ID_MAX = 2**63 - 1
#: The longest search: the model and team names it looks through are shorter.
SEARCH_MAX = 100
#: The longest organisation: the models' own field is this long.
ORGANISATION_MAX = 120


def _flag(help_text: str) -> serializers.BooleanField:
    # 1/0, true/false, yes/no, on/off: what a form's checkbox sends and what people type.
    return serializers.BooleanField(required=False, default=False, help_text=help_text)


def _page(help_text: str) -> serializers.IntegerField:
    return serializers.IntegerField(required=False, default=1, min_value=1, max_value=PAGE_MAX, help_text=help_text)


def _choice(choices: list[str], default: str, help_text: str) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=choices, required=False, default=default, allow_blank=default == "",
                                   help_text=help_text)


def _whole(pattern: re.Pattern[str]) -> str:
    # A RegexField searches its value for the pattern: anchored, the whole value must match it.
    return rf"\A(?:{pattern.pattern})\Z"


Q = TypeVar("Q")


class QueryParams(serializers.Serializer, Generic[Q]):
    """A page's or API's parameters, and the typed query they build: ``read(request)`` does both."""

    @classmethod
    @abstractmethod
    def query_of(cls, data: Mapping[str, Any]) -> Q:
        """The typed query of parameters these have read."""

    @classmethod
    def parse(cls, query: Mapping[str, Any]) -> Q:
        """The typed query of a query string; BadQuery names each parameter it refuses."""
        return cls.query_of(checked(cls, query))

    @classmethod
    def read(cls, request: Any) -> Q:
        """The typed query of a request's query string (Django's request or DRF's)."""
        return cls.query_of(checked_query(cls, request))


class SuiteParams(QueryParams[Q]):
    suite = serializers.RegexField(_whole(SUITE_NAME), max_length=32, required=False, default="", allow_blank=True,
                                   help_text="scenario suite (default: official once imported, else fixture)")

    @classmethod
    def suite_of(cls, data: Mapping[str, Any]) -> str:
        return str(data["suite"])


class SuiteOnlyParams(SuiteParams[str]):
    """A page that reads the suite alone."""

    @classmethod
    def query_of(cls, data: Mapping[str, Any]) -> str:
        return cls.suite_of(data)


class BoardFilterParams(SuiteParams[BoardQuery]):
    open = _flag("1: open-weight models only")
    size = _choice([bucket for bucket, _, _ in SIZE_BUCKETS] + [UNKNOWN_SIZE], "",
                   "parameter bucket: <10B, 10-40B, 40-100B, >100B, unknown")
    org = serializers.CharField(required=False, default="", allow_blank=True, max_length=ORGANISATION_MAX,
                                help_text="organisation (any case)")
    best = _flag("1: one best entry per team")
    verified = _flag("1: verified entries only")
    reported = _flag("1: rank published results too")
    incomplete = _flag("1: rank entries whose scored scenarios do not cover the board's (unranked by default)")
    q = serializers.CharField(required=False, default="", allow_blank=True, max_length=SEARCH_MAX,
                              help_text="search: only rows whose model or team name contains this text "
                                        "(ranks stay the board's)")
    prompts = serializers.RegexField(_whole(PROMPT_VERSION), required=False, default="", allow_blank=True,
                                     max_length=64, help_text="another generation of the board: the version of the "
                                     "prompt set its entries ran with (default: the suite's current one)")

    @classmethod
    def filters_of(cls, data: Mapping[str, Any]) -> BoardFilter:
        return BoardFilter(open_weights=data["open"], size=data["size"], organisation=data["org"],
                           best_per_team=data["best"], rank_reported=data["reported"], verified_only=data["verified"],
                           rank_incomplete=data["incomplete"], search=" ".join(data["q"].split()),
                           prompts=data["prompts"])

    @classmethod
    def query_of(cls, data: Mapping[str, Any]) -> BoardQuery:
        return BoardQuery(suite=cls.suite_of(data), filters=cls.filters_of(data))


class BoardPageParams(BoardFilterParams):
    sort = _choice(list(SORT_COLUMNS), "", "the column the rows are sorted by (default: the ranking's order)")
    dir = _choice(["asc", "desc"], "", "with sort: its direction (default: the column's usual one)")
    page = _page("page of the rows, from 1 (one past the last shows the last)")

    @classmethod
    def query_of(cls, data: Mapping[str, Any]) -> BoardQuery:
        return BoardQuery(suite=cls.suite_of(data), filters=cls.filters_of(data),
                          sort=BoardSort.of(data["sort"], data["dir"]), page=data["page"])


class BoardExportParams(BoardFilterParams, FramesQuery):
    """A board's per-attempt export: the board's filters, and whether a zip holds the frames."""


class HomeParams(QueryParams[HomeQuery]):
    overview = _choice(list(SUBSETS), "mini", "the set the overview shows")
    models = _choice(["all"], "", "all: every model, a page at a time (default: the first of each column)")
    page = _page("with models=all: the page of models")
    across = _choice(list(FLOWS), "global", "the flow of the summary across environments")

    @classmethod
    def query_of(cls, data: Mapping[str, Any]) -> HomeQuery:
        every_model = data["models"] == "all"
        return HomeQuery(overview=data["overview"], every_model=every_model, page=data["page"] if every_model else 1,
                         across=data["across"])


class AnalysisParams(SuiteParams[AnalysisQuery]):
    page = _page("page of the per-entry tables' rows")
    cols = _page("page of the wide tables' columns")
    charts = _flag("1: the data of the page's charts, as JSON, instead of the page")

    @classmethod
    def query_of(cls, data: Mapping[str, Any]) -> AnalysisQuery:
        return AnalysisQuery(suite=cls.suite_of(data), page=data["page"], cols=data["cols"], charts=data["charts"])


def _entry(help_text: str) -> serializers.IntegerField:
    return serializers.IntegerField(required=False, default=None, allow_null=True, min_value=1, max_value=ID_MAX,
                                    help_text=help_text)


class CompareParams(SuiteParams[CompareQuery]):
    a = _entry("submission id of entry A (default: the board's first)")
    b = _entry("submission id of entry B (default: the board's second)")

    @classmethod
    def query_of(cls, data: Mapping[str, Any]) -> CompareQuery:
        return CompareQuery(suite=cls.suite_of(data), a=data["a"], b=data["b"])


class PairsParams(SuiteParams[PairsQuery]):
    page = _page(f"block of rows: entries {PAIRS_PER_PAGE} × (page − 1) + 1 … in board order (kept within the "
                 "blocks there are)")
    cols = _page("block of columns, counted like page")
    order = _choice(list(PAIR_ORDERS), "board", "order of the rows and columns within their blocks: board order, "
                                                "mean win rate against the page's other entries (best first), or name")

    @classmethod
    def query_of(cls, data: Mapping[str, Any]) -> PairsQuery:
        return PairsQuery(suite=cls.suite_of(data), page=data["page"], cols=data["cols"], order=data["order"])


def _axis() -> serializers.ChoiceField:
    return _choice(list(COST_AXES), "", "the charts' cost axis: usd or tokens (default: each board's own, USD where "
                                        "any entry is priced, else tokens)")


class CostParams(SuiteParams[CostQuery]):
    x = _axis()

    @classmethod
    def query_of(cls, data: Mapping[str, Any]) -> CostQuery:
        return CostQuery(suite=cls.suite_of(data), axis=data["x"])


class CostOverviewParams(QueryParams[CostQuery]):
    subset = _choice(list(SUBSETS), "mini", "the set whose boards are shown")
    x = _axis()

    @classmethod
    def query_of(cls, data: Mapping[str, Any]) -> CostQuery:
        return CostQuery(subset=data["subset"], axis=data["x"])


P = ParamSpec("P")


def shows_bad_query(view: Callable[Concatenate[HttpRequest, P], HttpResponse]) -> Callable[
        Concatenate[HttpRequest, P], HttpResponse]:
    """The page, or a 400 page naming each parameter of its query it cannot read and what it takes."""
    @wraps(view)
    def page(request: HttpRequest, *args: P.args, **kwargs: P.kwargs) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except BadQuery as bad:
            return render(request, "leaderboard/bad_query.html", {"errors": bad.errors, "path": request.path},
                          status=400)
    return page
