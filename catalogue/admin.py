from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from catalogue.changes import BoardRef, results_changed
from catalogue.models import ReportedResult


class BoardsChangedAdmin(admin.ModelAdmin):
    """An admin of rows the boards show (entries, their teams, reported results): every change made
    through it tells the boards, as the site's own writes do; a row of one board (an entry, a
    reported result) names that board only."""

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        # The stored row's board too: an entry moved to another board leaves the old one.
        before = boards_of(type(obj).objects.filter(pk=obj.pk)) if change else []
        after = boards_of([obj])
        super().save_model(request, obj, form, change)
        # No board on either side (a team, a model): every board.
        results_changed(*sorted({*before, *after}) if after and (before or not change) else ())

    def delete_model(self, request: HttpRequest, obj: Model) -> None:
        boards = boards_of([obj])
        super().delete_model(request, obj)
        results_changed(*boards)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        boards = boards_of(queryset)
        super().delete_queryset(request, queryset)
        results_changed(*boards)


def boards_of(rows: Iterable[Any]) -> list[BoardRef]:
    """The boards the rows are on, or none (every board) when any row is not on one board (a team,
    a model shown on several)."""
    boards: set[BoardRef] = set()
    for row in rows:
        env, flow, subset = (getattr(row, name, None) for name in ("environment_id", "flow", "subset"))
        if not (isinstance(env, str) and isinstance(flow, str) and isinstance(subset, str)):
            return []
        boards.add((env, flow, subset))
    return sorted(boards)


@admin.register(ReportedResult)
class ReportedResultAdmin(BoardsChangedAdmin):
    list_display = ("model_name", "environment", "flow", "subset", "score", "source")
    list_filter = ("environment", "flow", "subset")
