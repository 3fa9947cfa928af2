from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from leaderboard.admin import BoardsChangedAdmin, boards_of
from leaderboard.cache import boards_changed
from submissions.models import Submission


@admin.register(Submission)
class SubmissionAdmin(BoardsChangedAdmin):
    # Hiding (``hidden`` with its reason), publishing and deleting are done in the change form.
    list_display = ("id", "model", "team", "environment", "flow", "subset", "status", "is_public", "verified", "hidden",
                    "created_at")
    list_filter = ("environment", "flow", "subset", "status", "verified", "hidden", "is_public", "is_baseline",
                   "source")
    search_fields = ("model__name", "team__name")
    readonly_fields = ("settings", "api_key_encrypted", "status", "status_reason", "rerun_of", "upload_path",
                       "started_at", "finished_at")
    actions = ("mark_verified", "clear_verified")

    @admin.action(description="Mark as verified")
    def mark_verified(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        boards = boards_of(queryset)
        queryset.update(verified=True)
        boards_changed(*boards)

    @admin.action(description="Remove the verified mark")
    def clear_verified(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        boards = boards_of(queryset)
        queryset.update(verified=False)
        boards_changed(*boards)
