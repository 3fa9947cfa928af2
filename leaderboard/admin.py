from django.contrib import admin

from leaderboard.models import ReportedResult


@admin.register(ReportedResult)
class ReportedResultAdmin(admin.ModelAdmin):
    list_display = ("model_name", "environment", "flow", "subset", "score", "source")
    list_filter = ("environment", "flow", "subset")
