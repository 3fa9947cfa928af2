from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from catalogue.admin import BoardsChangedAdmin, boards_of
from catalogue.changes import results_changed
from submissions.models import LiveWorker, Submission
from submissions.workers import live_since


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
        results_changed(*boards)

    @admin.action(description="Remove the verified mark")
    def clear_verified(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        boards = boards_of(queryset)
        queryset.update(verified=False)
        results_changed(*boards)


@admin.register(LiveWorker)
class LiveWorkerAdmin(admin.ModelAdmin):
    """Which workers the scheduler counts on: the rows are the workers' own, so the admin only reads them
    (a hand-edited row would be overwritten at the next beat, or would invent slots that ETAs count)."""

    list_display = ("hostname", "queue_list", "concurrency", "started_at", "last_seen", "is_live")
    search_fields = ("hostname",)
    ordering = ("hostname",)

    @admin.display(description="queues")
    def queue_list(self, worker: LiveWorker) -> str:
        return ", ".join(worker.queues)

    @admin.display(description="live", boolean=True)
    def is_live(self, worker: LiveWorker) -> bool:
        # The same limit as the queue page and the ETAs use.
        return worker.last_seen >= live_since()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: LiveWorker | None = None) -> bool:
        return False
