from typing import Any

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from leaderboard.cache import boards_changed
from leaderboard.models import ReportedResult


class BoardsChangedAdmin(admin.ModelAdmin):
    """An admin of rows the boards show (entries, their teams, reported results): every change made
    through it drops the cached boards, as the site's own writes do."""

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        boards_changed()

    def delete_model(self, request: HttpRequest, obj: Model) -> None:
        super().delete_model(request, obj)
        boards_changed()

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        super().delete_queryset(request, queryset)
        boards_changed()


@admin.register(ReportedResult)
class ReportedResultAdmin(BoardsChangedAdmin):
    list_display = ("model_name", "environment", "flow", "subset", "score", "source")
    list_filter = ("environment", "flow", "subset")
