"""A submission's headline: its numbers and place on its board, or why it has none."""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime

from evaluators.base import get_plugin
from leaderboard.selectors.boards import board_get
from leaderboard.selectors.query import BoardFilter
from submissions.models import Submission


@dataclass(frozen=True)
class BoardPlace:
    """One entry of a board as the board itself computed it."""

    mean: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    rank: int | None
    standing: str
    tie_p_value: float | None
    incomplete: bool
    n_scenarios: int
    n_scored: int
    n_attempts: int
    variant: tuple[str, ...]
    #: Whether its scored scenarios cover the board's (a board ranks only complete entries by default).
    complete: bool = True
    board_scenarios: int = 0
    #: Attempts with an invalid / repeating action in % (environments with action diagnostics).
    ia_pct: float | None = None
    ra_pct: float | None = None
    #: Lost score per part in % (environments that break their score down), as the board's bar shows it.
    breakdown: dict[str, float] | None = None
    #: What the board's analysis reads the entry's tag means from: its stored result's stamp, or where
    #: it has none (summarised from its attempts) its per-scenario means.
    result_stamp: datetime | None = field(default=None, compare=False)
    scenario_means: dict[int, float] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Headline:
    """What a submission's page leads with: its numbers and rank, or why there are none."""

    env: str
    flow: str
    subset: str
    suite: str
    board_title: str
    #: The entry on its board, as the board shows it to this visitor; None when it is not there.
    place: BoardPlace | None
    #: Entries ranked on that board.
    ranked: int
    #: Why there is no rank (or why the rank is not the public one); empty when it is.
    reason: str
    #: "running", "cancelled", "failed", "hidden", "private", "baseline", "variant" or "" (ranked).
    kind: str

    @property
    def board_label(self) -> str:
        return f"{self.board_title} · {self.flow.title()} · {self.subset}"


def _board_places(env: str, flow: str, subset: str, suite: str,
                  viewer_team_ids: tuple[int, ...]) -> tuple[dict[int, BoardPlace], int]:
    """Every platform entry of the board with the numbers and rank the board page shows the same
    visitor (its default filters), and how many entries it ranks."""
    board = board_get(env=env, flow=flow, subset=subset, suite=suite, filters=BoardFilter(),
                      viewer_team_ids=viewer_team_ids)
    places = {
        row.submission_id: BoardPlace(
            mean=row.mean, se=row.se, ci_low=row.ci_low, ci_high=row.ci_high, rank=row.rank, standing=row.standing,
            tie_p_value=row.tie_p_value, incomplete=row.incomplete, n_scenarios=row.n_scenarios,
            n_scored=row.n_scored, n_attempts=row.n_attempts, variant=row.variant, complete=row.complete,
            board_scenarios=row.board_scenarios, ia_pct=row.ia_pct, ra_pct=row.ra_pct, breakdown=row.breakdown,
            result_stamp=row.result_stamp, scenario_means=row.scenario_means if row.result_stamp is None else {})
        for row in board.rows if row.submission_id is not None}
    return places, sum(1 for row in board.rows if row.rank is not None)


def submission_headline(submission: Submission, viewer_team_ids: Collection[int] = ()) -> Headline:
    """The submission's place on its board, taken from the board's own ranking (cached with the
    board, so it changes exactly when the board does)."""
    from leaderboard.cache import board_scope, cached

    env, flow, subset, suite = submission.environment_id, submission.flow, submission.subset, submission.suite
    try:
        title = get_plugin(env).title
    except KeyError:  # an environment no longer configured: it has no board
        title = env
    base = dict(env=env, flow=flow, subset=subset, suite=suite, board_title=title)
    if submission.hidden:
        return Headline(**base, place=None, ranked=0, kind="hidden",
                        reason="It is hidden from the boards by the maintainers, so it has no rank.")
    if submission.is_active:
        return Headline(**base, place=None, ranked=0, kind="running",
                        reason="No score yet: it is still running, and enters its board when it finishes.")
    if submission.status == Submission.Status.CANCELLED:
        return Headline(**base, place=None, ranked=0, kind="cancelled",
                        reason="No rank: it was cancelled before it finished. Resuming it queues its unscored "
                               "attempts again.")
    teams = tuple(sorted(viewer_team_ids))
    try:
        places, ranked = cached("submission-places", (env, flow, subset, suite, teams),
                                lambda: _board_places(env, flow, subset, suite, teams),
                                scope=board_scope(env, flow, subset))
    except (KeyError, ValueError):  # the board no longer exists (environment or flow removed)
        places, ranked = {}, 0
    place = places.get(submission.id)
    if place is None:
        private = not (submission.is_public or submission.is_baseline)
        return Headline(**base, place=None, ranked=ranked, kind="private" if private else "failed",
                        reason="No rank: it is private, and only its team sees it on the board." if private
                        else "It is not on its board.")
    if place.mean is None:
        return Headline(**base, place=place, ranked=ranked, kind="failed",
                        reason="No score: none of its attempts was scored (infrastructure failures never are).")
    if submission.is_baseline:
        return Headline(**base, place=place, ranked=ranked, kind="baseline",
                        reason="A baseline: shown on the board as a reference, never ranked.")
    if place.variant:
        return Headline(**base, place=place, ranked=ranked, kind="variant",
                        reason=f"Run with non-default settings ({', '.join(place.variant)}): a labelled variant of "
                               "the official protocol, shown on the board but not ranked.")
    if not submission.is_public:
        return Headline(**base, place=place, ranked=ranked, kind="private",
                        reason="Private: this is its place on the board as its team sees it; the public board "
                               "does not show it until the team's owner publishes it.")
    return Headline(**base, place=place, ranked=ranked, kind="", reason="")
