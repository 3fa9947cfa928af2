"""What the boards store beside the submissions: generations of the cached pages, and aggregates
computed once per change and read by every page (``leaderboard.stored``)."""
from __future__ import annotations

from django.db import models

from catalogue.models import Scenario


class BoardsGeneration(models.Model):
    """One row per scope (every board: "", one board, the home page): moved on after every write that
    changes it. The cached boards are keyed by them when the cache is each process's own memory,
    where a worker's finished submission must still reach the web process's cache
    (``leaderboard.cache``)."""

    scope = models.CharField(max_length=120, default="", unique=True)
    value = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = "boards generation"


class StoredPairedTest(models.Model):
    """A board's paired t-test of one entry against another (the entry leading the board), computed
    once from their stored results and read by every later build of the board.

    The results' ``computed_at`` it was computed from are kept with it: a result rebuilt since (a
    re-scored submission) makes the stored test stale, and the board computes it again. A deleted
    submission takes its tests with it.
    """

    leader = models.ForeignKey("submissions.SubmissionResult", on_delete=models.CASCADE, related_name="+")
    other = models.ForeignKey("submissions.SubmissionResult", on_delete=models.CASCADE, related_name="+")
    leader_computed_at = models.DateTimeField()
    other_computed_at = models.DateTimeField()
    n_shared = models.PositiveIntegerField()
    mean_difference = models.FloatField(null=True)
    p_value = models.FloatField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["leader", "other"], name="stored_paired_test_unique")]

    def __str__(self) -> str:
        return f"paired test of result {self.other_id} against {self.leader_id}"


class EntryAnalysis(models.Model):
    """One entry's share of its board's analysis page, computed from its stored result when it
    finishes: its mean per scenario tag value, its environment's analysis panels and the range of its
    per-scenario means (the matrix's colours run over the board's range).

    ``computed_from`` is the result's ``computed_at`` and ``scenarios_digest`` a digest of the suite's
    scenario keys and tags it was grouped by, the environment's panels and the stored format
    (``leaderboard.stored.analysis_digest``): a rebuilt result, re-imported scenarios or another
    panel make it stale, and it is computed again.
    """

    result = models.OneToOneField("submissions.SubmissionResult", primary_key=True, on_delete=models.CASCADE,
                                  related_name="analysis")
    computed_from = models.DateTimeField()
    scenarios_digest = models.CharField(max_length=64)
    #: {tag: {value: [mean of its per-scenario means, scenarios]}} for each of the plug-in's tag groups.
    tag_means = models.JSONField(default=dict)
    #: {panel key: its aggregate, or None} for each of the environment's analysis panels.
    panels = models.JSONField(default=dict)
    low = models.FloatField(null=True)
    high = models.FloatField(null=True)
    #: Scenarios it has means for outside its board's subset (the subset changed since it ran): the
    #: analysis lists them too.
    extra_scenarios = models.JSONField(default=list)

    def __str__(self) -> str:
        return f"analysis of result {self.result_id}"


class BoardAggregate(models.Model):
    """What one generation of a board's analysis needs of all its entries at once: the median of
    every per-scenario mean (the comparison's fail threshold). ``entries_digest`` names the entries
    (and their results' ``computed_at``) it was computed over: any other set of entries computes it
    again."""

    board = models.CharField(max_length=200, unique=True)
    entries_digest = models.CharField(max_length=64)
    median = models.FloatField(null=True)
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"aggregate of {self.board}"


class StoredRankIntervals(models.Model):
    """The bootstrap rank intervals of one set of ranked entries (``scoring.stats.
    bootstrap_rank_intervals``): a thousand resamples of a full board take a noticeable part of a
    second, so they are computed once per set of entries and read back by every page and export.
    ``entries_digest`` names the board, the entries in rank order with their results'
    ``computed_at``, and the resampling (count, seed): anything else computes them again."""

    entries_digest = models.CharField(max_length=64, unique=True)
    #: The board it was computed for (``env/flow/subset/suite/prompts``), to drop a board's older sets.
    board = models.CharField(max_length=200, db_index=True)
    #: ``[[low, high] or null, …]`` in the entries' rank order.
    intervals = models.JSONField(default=list)
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"rank intervals of {self.board}"


class StoredBoardRanking(models.Model):
    """One board's ranked rows as anonymous visitors see it by default (the environment's default
    suite, the suite's current prompt set, no filter): what the home page's cards and its overview of
    every board read, all boards in one query, instead of ranking every board's entries again on each
    build of the page.

    The rows are ``leaderboard.selectors.board_get``'s own, stored by the writer once a change to the
    board commits (``leaderboard.changes.boards_store``) or by the first page that found them stale.
    They are read only while current: ``everything_generation`` and ``board_generation`` are the
    ``BoardsGeneration`` counters (everything's and the board's) as they were before the rows were
    ranked, and every write that changes what a board shows moves one of them on; ``fingerprint``
    covers what no write announces (the settings and code the rows were ranked with).
    """

    env = models.CharField(max_length=32)
    flow = models.CharField(max_length=16)
    subset = models.CharField(max_length=8, choices=Scenario.SUBSETS)
    #: The suite and prompt set the rows are of (the defaults when they were ranked).
    suite = models.SlugField(max_length=32)
    prompt_version = models.CharField(max_length=64)
    everything_generation = models.BigIntegerField()
    board_generation = models.BigIntegerField()
    fingerprint = models.CharField(max_length=64)
    #: The board's own numbers beside its rows: its scenario count, its checked and flagged scenarios, its note.
    board = models.JSONField(default=dict)
    #: Every row, in rank order, one JSON object a line: text, not jsonb, which would reorder the
    #: lost-score parts (drawn in the order they come) and cannot hold NaN. A page showing the first
    #: rows parses those lines only.
    rows = models.TextField()
    entries = models.PositiveIntegerField()
    #: What the overview reads of every row that has a score: a short JSON list per row, so that the
    #: overview of every board does not parse every row.
    cells = models.TextField()
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["env", "flow", "subset"], name="stored_board_ranking_unique")]

    def __str__(self) -> str:
        return f"ranking of {self.env}/{self.flow}/{self.subset}/{self.suite}"


class SnapshotQuerySet(models.QuerySet["BoardSnapshot"]):
    def update(self, **kwargs: object) -> int:
        raise TypeError("a board snapshot is never changed once made")


class BoardSnapshot(models.Model):
    """One dated, immutable release of a public board: its rows and its attempts as Parquet, with a
    dataset card, in a folder of its own (``leaderboard.snapshots``). Made by a worker or a command,
    never by a request, and only when the board's content differs from its latest snapshot.

    Never changed once made: ``save`` refuses an existing row, the queryset refuses ``update``, and
    the files are written once into a folder named after the version, then made read-only.
    """

    env = models.CharField(max_length=32)
    flow = models.CharField(max_length=16)
    subset = models.CharField(max_length=8, choices=Scenario.SUBSETS)
    suite = models.SlugField(max_length=32)
    #: The day it was made and its number that day for this board: "2026-11-29.1".
    version = models.CharField(max_length=32)
    #: sha256 of the canonical serialisation of the board's metadata, rows and attempts
    #: (``leaderboard.snapshots``): equal content, equal hash, whatever the Parquet writer's version.
    content_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField()
    prompt_version = models.CharField(max_length=64, blank=True)
    scenarios = models.PositiveIntegerField(default=0)
    entries = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0)
    #: Every file of the release: [{"name", "size", "sha256"}], relative to its folder.
    files = models.JSONField(default=list)

    objects = SnapshotQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["env", "flow", "subset", "suite", "version"],
                                               name="board_snapshot_version_unique")]
        indexes = [models.Index(fields=["env", "flow", "subset", "suite", "-created_at"],
                                name="board_snapshot_latest")]
        ordering = ["env", "flow", "subset", "suite", "-created_at"]

    def __str__(self) -> str:
        return f"{self.board_name} {self.version}"

    def save(self, *args: object, **kwargs: object) -> None:
        if not self._state.adding:
            raise TypeError("a board snapshot is never changed once made")
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    @property
    def board_name(self) -> str:
        return f"{self.env}-{self.flow}-{self.subset}-{self.suite}"

    @property
    def size(self) -> int:
        """Bytes of the release's files, the zip left out (it holds the others)."""
        return sum(int(f["size"]) for f in self.files if not str(f["name"]).endswith(".zip"))
