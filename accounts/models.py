"""Teams, who belongs to which, and their API tokens."""
from __future__ import annotations

from django.conf import settings
from django.db import models


class Team(models.Model):
    name = models.CharField(max_length=120, unique=True)
    slug = models.SlugField(max_length=120, unique=True)
    #: Per-team quota overrides; empty means the site's default (MAGEBENCH_QUOTA_*).
    quota_per_day = models.PositiveIntegerField(null=True, blank=True)
    quota_total = models.PositiveIntegerField(null=True, blank=True)
    quota_concurrent = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The table kept its name when the model moved here from submissions: no data moved.
        db_table = "submissions_team"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner"
        MEMBER = "member"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["team__name", "user__username"]
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="membership_unique")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"


class ApiToken(models.Model):
    """A team's API token. Only a SHA-256 digest of its secret is stored: the token is shown once.

    The visible part, ``mb<r|w>_<key_id>``, names the scope and finds the row; the secret after it
    is 256 random bits, so a plain digest (no slow password hash) is enough to make a leaked
    database useless for calling the API.
    """

    class Scope(models.TextChoices):
        READ = "read", "read-only"
        WRITE = "write", "read-write"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="api_tokens")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=80)
    scope = models.CharField(max_length=8, choices=Scope.choices)
    key_id = models.CharField(max_length=16, unique=True)
    digest = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"

    @property
    def prefix(self) -> str:
        return f"mb{self.scope[0]}_{self.key_id}"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class LoginProof(models.Model):
    """A one-time log-in link mailed to an account that has had too many failed log-ins, once its
    owner gave the right password. Only a SHA-256 digest of the link's 256-bit secret is stored; it
    works once, before ``expires_at``."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="login_proofs")
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"log-in link for {self.user} until {self.expires_at:%Y-%m-%d %H:%M}"
