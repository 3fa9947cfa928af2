"""The benchmark catalogue: environments, their scenarios by suite, the prompt sets a suite runs with
and results published elsewhere.

The rows keep the tables they were created in (``leaderboard_*``): the catalogue became its own app
without a migration that moves data.
"""
from __future__ import annotations

from django.db import models

from evaluators.base import SUBSETS as SUBSET_NAMES


class Environment(models.Model):
    slug = models.SlugField(primary_key=True, max_length=32)
    title = models.CharField(max_length=64)
    score_label = models.CharField(max_length=64)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        db_table = "leaderboard_environment"
        ordering = ["position", "slug"]

    def __str__(self) -> str:
        return self.title


class Scenario(models.Model):
    """One level, page or match situation.

    ``suite`` separates scenario sets that must never be ranked together: the official MageBench
    resources ("official") and the platform's own fixtures ("fixture").
    """

    #: The sets as a field's choices (each value is its own label).
    SUBSETS = [(name, name) for name in SUBSET_NAMES]

    environment = models.ForeignKey(Environment, on_delete=models.PROTECT, related_name="scenarios")
    suite = models.SlugField(max_length=32)
    key = models.CharField(max_length=200)
    in_mini = models.BooleanField(default=False, db_index=True)
    in_full = models.BooleanField(default=True, db_index=True)
    tags = models.JSONField(default=dict)
    data = models.JSONField(default=dict)
    resource_path = models.CharField(max_length=500, blank=True)
    content_hash = models.CharField(max_length=64)
    imported_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "leaderboard_scenario"
        ordering = ["environment", "suite", "key"]
        constraints = [
            models.UniqueConstraint(fields=["environment", "suite", "key"], name="scenario_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.environment_id}/{self.suite}/{self.key}"

    @property
    def subsets(self) -> list[str]:
        return [name for name, member in (("mini", self.in_mini), ("full", self.in_full)) if member]

    @staticmethod
    def subset_filter(subset: str) -> dict[str, bool]:
        if subset not in SUBSET_NAMES:
            raise ValueError(f"unknown subset {subset!r}")
        return {f"in_{subset}": True}


class ReportedResult(models.Model):
    """A published number the platform did not run (a paper's table, a model card).

    Shown on its board, marked as reported, and kept off the ranking: nothing behind it can be
    replayed or re-scored here.
    """

    environment = models.ForeignKey(Environment, on_delete=models.PROTECT, related_name="reported_results")
    flow = models.CharField(max_length=16)
    subset = models.CharField(max_length=8, choices=Scenario.SUBSETS)
    model_name = models.CharField(max_length=120)
    organisation = models.CharField(max_length=120, blank=True)
    parameter_count = models.BigIntegerField(null=True, blank=True)
    open_weights = models.BooleanField(default=False)
    score = models.FloatField()
    ia_pct = models.FloatField(null=True, blank=True)
    ra_pct = models.FloatField(null=True, blank=True)
    source = models.URLField(max_length=500, help_text="Where the number is published")
    note = models.CharField(max_length=300, blank=True)
    #: How many times the publication ran each scenario (None: not stated).
    repeats = models.PositiveSmallIntegerField(null=True, blank=True)
    #: The ± the publication states for the score (e.g. a paper's δ between repeats; None: none stated).
    uncertainty = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "leaderboard_reportedresult"
        ordering = ["environment", "flow", "subset", "-score"]

    def __str__(self) -> str:
        return f"{self.model_name} ({self.environment_id}/{self.flow}/{self.subset}, reported)"


class SuitePromptSet(models.Model):
    """The texts one flow of one environment sends on a suite, read from the official checkout the
    suite was imported with (the platform's own wording needs no row: it is the plug-in's).

    A submission freezes the version it ran with in its settings (``prompt_version``); a later
    import with changed texts adds a row and starts a new board generation beside the old one.
    """

    environment = models.ForeignKey(Environment, on_delete=models.PROTECT, related_name="prompt_sets")
    suite = models.SlugField(max_length=32)
    flow = models.CharField(max_length=16)
    version = models.CharField(max_length=64)
    source = models.CharField(max_length=16)
    #: Every text by name (``evaluators.base.PromptSet``'s fields; templates keep their slots).
    texts = models.JSONField(default=dict)
    #: The checkout files the texts were read from, each with its sha256.
    source_files = models.JSONField(default=dict)
    #: One hash over those files: the sets read in one import share it.
    checkout_digest = models.CharField(max_length=64)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "leaderboard_suitepromptset"
        ordering = ["environment", "suite", "flow", "imported_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["environment", "suite", "flow", "version"],
                                    name="prompt_set_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.environment_id}/{self.suite}/{self.flow} prompts {self.version}"
