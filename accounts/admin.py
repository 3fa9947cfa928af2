from django.contrib import admin

from accounts.forms import AdminLoginForm
from accounts.models import ApiToken, Membership, Team
from catalogue.admin import BoardsChangedAdmin

# The admin's log-in counts failures and locks out like the site's own.
admin.site.login_form = AdminLoginForm


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "team", "role", "created_at")
    list_filter = ("role",)
    search_fields = ("user__username", "team__name")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "name", "team", "scope", "created_by", "created_at", "last_used_at", "revoked_at")
    list_filter = ("scope",)
    # The digest is useless to read and must never be edited; a token is revoked, not changed.
    readonly_fields = ("team", "created_by", "name", "scope", "key_id", "digest", "created_at", "last_used_at")


# The boards show team names: a team changed here tells them, as the site's own writes do.
@admin.register(Team)
class TeamAdmin(BoardsChangedAdmin):
    list_display = ("name", "slug", "quota_per_day", "quota_total", "quota_concurrent", "created_at")
    search_fields = ("name",)
