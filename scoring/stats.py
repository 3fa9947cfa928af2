"""Statistics for boards.

Repeats of one scenario are not independent samples of the benchmark, so the uncertainty is taken
over scenarios: each scenario's repeats are averaged first, and the standard error is that of the
mean of those per-scenario means (sample standard deviation, ddof = 1, over sqrt(k)).
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, NamedTuple

import numpy as np


@dataclass(frozen=True)
class Summary:
    mean: float | None
    se: float | None
    n_scenarios: int
    n_scores: int


def summarise(scores: Iterable[tuple[object, float]]) -> Summary:
    """Mean over all (scenario, score) pairs and the standard error over scenario means."""
    pairs = [(scenario, float(score)) for scenario, score in scores]
    if not pairs:
        return Summary(None, None, 0, 0)
    total = sum(score for _, score in pairs)
    count = len(pairs)
    means = list(scenario_means(pairs).values())
    k = len(means)
    se = None
    if k > 1:
        centre = sum(means) / k
        variance = sum((m - centre) ** 2 for m in means) / (k - 1)
        se = math.sqrt(variance) / math.sqrt(k)
    return Summary(total / count, se, k, count)


#: Bootstrap resamples for a board's confidence intervals; a fixed seed keeps a board's numbers
#: identical between page loads and exports.
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20241
CONFIDENCE = 0.95
TIE_ALPHA = 0.05


def scenario_means(scores: Iterable[tuple[object, float]]) -> dict[object, float]:
    """Each scenario's mean over its repeats."""
    by_scenario: dict[object, list[float]] = defaultdict(list)
    for scenario, score in scores:
        by_scenario[scenario].append(float(score))
    return {scenario: sum(values) / len(values) for scenario, values in by_scenario.items()}


def bootstrap_ci(means: Sequence[float] | np.ndarray, *, resamples: int = BOOTSTRAP_RESAMPLES,
                 seed: int = BOOTSTRAP_SEED, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean, resampling scenarios (their means) with replacement."""
    values = np.asarray(list(means), dtype=float)
    if len(values) < 2:
        return None
    from scipy import stats as scipy_stats  # imported here: scipy.stats takes half a second to import

    result = scipy_stats.bootstrap((values,), np.mean, n_resamples=resamples, confidence_level=confidence,
                                   method="percentile", random_state=np.random.default_rng(seed))
    # The quantiles are read from scipy's resampled means with numpy's default interpolation, as
    # boards always were: scipy's own interval can differ from them in the last bit.
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(result.bootstrap_distribution, [tail, 1.0 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class PairedTest:
    n_shared: int
    mean_difference: float | None
    p_value: float | None

    @property
    def tied(self) -> bool:
        """Not distinguishable at TIE_ALPHA; fewer than two shared scenarios cannot separate anything."""
        return self.n_shared < 2 or self.p_value is None or self.p_value >= TIE_ALPHA


def paired_test(leader: Mapping[Any, float], other: Mapping[Any, float]) -> PairedTest:
    """Paired t-test of per-scenario means on the scenarios both entries have scores for."""
    shared = sorted(set(leader) & set(other), key=str)
    if not shared:
        return PairedTest(0, None, None)
    a = np.array([leader[s] for s in shared], dtype=float)
    b = np.array([other[s] for s in shared], dtype=float)
    difference = float((a - b).mean())
    if len(shared) < 2:
        return PairedTest(len(shared), difference, None)
    if np.allclose(a, b):
        return PairedTest(len(shared), difference, 1.0)  # identical scores: the test is undefined, and tied
    from scipy import stats as scipy_stats  # imported here, as in bootstrap_ci

    result = scipy_stats.ttest_rel(a, b)
    p_value = float(result.pvalue)
    return PairedTest(len(shared), difference, None if math.isnan(p_value) else p_value)


def best_of_n(scores: Sequence[float], n: int) -> float | None:
    """Unbiased estimate of E[max of n draws without replacement] from k ≥ n repeats.

    With the scores sorted ascending, the i-th smallest (1-based) is the maximum of exactly
    C(i−1, n−1) of the C(k, n) subsets of size n.
    """
    values = sorted(float(s) for s in scores)
    k = len(values)
    if n < 1 or k < n:
        return None
    total = math.comb(k, n)
    return sum(value * math.comb(i - 1, n - 1) for i, value in enumerate(values, start=1) if i >= n) / total


class CurvePoint(NamedTuple):
    n: int
    value: float
    #: How many scenarios had at least ``n`` scored repeats (the ones averaged at this N).
    scenarios: int


def best_of_n_curve(scores_by_scenario: Mapping[Any, Sequence[float]]) -> list[CurvePoint]:
    """Expected best score over N repeats, N = 1 … the most repeats any scenario has.

    At each N only the scenarios with at least N scored repeats can be estimated, so the
    average at N is over those (their number is kept beside the value).
    """
    most = max((len(v) for v in scores_by_scenario.values()), default=0)
    points = []
    for n in range(1, most + 1):
        values = [best_of_n(v, n) for v in scores_by_scenario.values() if len(v) >= n]
        estimates = [v for v in values if v is not None]
        if estimates:
            points.append(CurvePoint(n=n, value=sum(estimates) / len(estimates), scenarios=len(estimates)))
    return points


@dataclass(frozen=True)
class AttemptOutcome:
    """What a board needs of one attempt; ``scored`` and ``infra_failed`` come from its status."""

    attempt_id: int
    scenario_id: int
    repeat: int
    scored: bool
    infra_failed: bool
    score: float | None
    invalid_action: bool = False
    repeating_action: bool = False
    #: The lost-score parts of this attempt (the plug-in's ``breakdown_keys``, fractions of the maximum score), if any.
    breakdown: Mapping[str, float] | None = None
    #: Wall time of the attempt's last try.
    seconds: float | None = None
    #: The effort the platform measured: false for an upload, whose runs were not made here (its
    #: replies are played back, so calls, tokens and time say nothing of the model).
    measured: bool = True
    model_calls: int | None = None
    #: As the endpoint reported them, summed over the attempt's calls (None: not reported).
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass
class EntrySummary:
    """A board entry's numbers, computed once from all its attempts (the defaults: no numbers)."""

    mean: float | None = None
    se: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n_scenarios: int = 0
    n_scored: int = 0
    n_attempts: int = 0
    n_infra_failed: int = 0
    ia_pct: float | None = None
    ra_pct: float | None = None
    #: Mean lost score per part in % of the maximum, for environments that break their score down.
    breakdown: dict[str, float] | None = None
    scenario_means: dict[int, float] = field(default_factory=dict, repr=False)
    #: Each scenario's scores in repeat order (best-of-N curves need the repeats, not just their mean).
    scenario_scores: dict[int, list[float]] = field(default_factory=dict, repr=False)
    #: Each scenario's lowest scored repeat, the one a board links to as its replay.
    first_attempts: dict[int, int] = field(default_factory=dict, repr=False)
    #: Mean wall time of a scored attempt: what the queue's ETAs for the same board start from.
    mean_seconds: float | None = None
    #: The entry's best-of-N curve (computing it for every entry of a full board on each request is slow).
    best_of_n: list[CurvePoint] = field(default_factory=list, repr=False)
    #: Effort (``summarise_effort``): scored attempts whose effort was measured, and those of them
    #: with token counts; totals over them; and per scenario, what one run of a scenario took,
    #: averaged over scenarios (None where nothing was measured).
    effort_attempts: int = 0
    token_attempts: int = 0
    model_calls_total: int | None = None
    prompt_tokens_total: int | None = None
    completion_tokens_total: int | None = None
    seconds_total: float | None = None
    model_calls_per_scenario: float | None = None
    prompt_tokens_per_scenario: float | None = None
    completion_tokens_per_scenario: float | None = None
    seconds_per_scenario: float | None = None

    #: The fields keyed by scenario id (stored as JSON objects, whose keys are strings).
    PER_SCENARIO: ClassVar[tuple[str, ...]] = ("scenario_means", "scenario_scores", "first_attempts")

    def numbers(self) -> dict[str, Any]:
        """The fields by name, sharing (not copying) the per-scenario dictionaries."""
        return {f.name: getattr(self, f.name) for f in fields(EntrySummary)}

    @property
    def tokens_per_scenario(self) -> float | None:
        if self.prompt_tokens_per_scenario is None or self.completion_tokens_per_scenario is None:
            return None
        return self.prompt_tokens_per_scenario + self.completion_tokens_per_scenario


def _per_scenario(values: Iterable[tuple[int, float]]) -> float | None:
    """The mean over scenarios of each scenario's mean value per attempt: every scenario weighs the
    same, however many of its repeats were measured."""
    by_scenario: dict[int, list[float]] = defaultdict(list)
    for scenario_id, value in values:
        by_scenario[scenario_id].append(value)
    if not by_scenario:
        return None
    return sum(sum(v) / len(v) for v in by_scenario.values()) / len(by_scenario)


def summarise_effort(scored: Sequence[AttemptOutcome]) -> dict[str, Any]:
    """What the scored attempts cost in model calls, tokens and wall time (the ``EntrySummary``
    effort fields). Only measured attempts count, and tokens only where the endpoint reported both
    counts for every call: an upload, or an endpoint without ``usage``, is "not measured", never 0."""
    measured = [o for o in scored if o.measured]
    counted = [o for o in measured if o.prompt_tokens is not None and o.completion_tokens is not None]
    calls = [(o.scenario_id, o.model_calls) for o in measured if o.model_calls is not None]
    timed = [(o.scenario_id, o.seconds) for o in measured if o.seconds is not None]
    return {
        "effort_attempts": len(measured), "token_attempts": len(counted),
        "model_calls_total": sum(c for _, c in calls) if calls else None,
        "prompt_tokens_total": sum(o.prompt_tokens or 0 for o in counted) if counted else None,
        "completion_tokens_total": sum(o.completion_tokens or 0 for o in counted) if counted else None,
        "seconds_total": sum(t for _, t in timed) if timed else None,
        "model_calls_per_scenario": _per_scenario(calls),
        "prompt_tokens_per_scenario": _per_scenario((o.scenario_id, o.prompt_tokens or 0) for o in counted),
        "completion_tokens_per_scenario": _per_scenario((o.scenario_id, o.completion_tokens or 0) for o in counted),
        "seconds_per_scenario": _per_scenario(timed),
    }


def summarise_entry(outcomes: Iterable[AttemptOutcome], breakdown_keys: Sequence[str] = ()) -> EntrySummary:
    ordered = sorted(outcomes, key=lambda o: (o.scenario_id, o.repeat, o.attempt_id))
    scored = [o for o in ordered if o.scored and o.score is not None]
    summary = summarise((o.scenario_id, o.score) for o in scored if o.score is not None)
    scores: dict[int, list[float]] = defaultdict(list)
    first: dict[int, int] = {}
    for outcome in scored:
        scores[outcome.scenario_id].append(float(outcome.score))  # type: ignore[arg-type]
        first.setdefault(outcome.scenario_id, outcome.attempt_id)
    means = {scenario: sum(values) / len(values) for scenario, values in scores.items()}
    interval = bootstrap_ci(list(means.values()))
    n = len(scored)
    durations = [o.seconds for o in scored if o.seconds is not None]
    breakdown = None
    if n and breakdown_keys:
        breakdown = {key: 100.0 * sum(float((o.breakdown or {}).get(key, 0.0)) for o in scored) / n
                     for key in breakdown_keys}
    return EntrySummary(
        mean=summary.mean, se=summary.se, ci_low=interval[0] if interval else None,
        ci_high=interval[1] if interval else None, n_scenarios=summary.n_scenarios, n_scored=n,
        n_attempts=len(ordered), n_infra_failed=sum(1 for o in ordered if o.infra_failed),
        ia_pct=100.0 * sum(1 for o in scored if o.invalid_action) / n if n else None,
        ra_pct=100.0 * sum(1 for o in scored if o.repeating_action) / n if n else None,
        breakdown=breakdown, scenario_means=means, scenario_scores=dict(scores), first_attempts=first,
        mean_seconds=sum(durations) / len(durations) if durations else None, best_of_n=best_of_n_curve(scores),
        **summarise_effort(scored),
    )


#: Two means closer than this are the same score for ranking (competition ranking, "1, 1, 3"). The
#: boards show two decimals; the tolerance is far below that and only absorbs the last bits that
#: floating-point sums in a different order leave (100.0 summed over ten scenarios, or averaged from
#: repeats, is not always exactly 100.0), so two entries tie when their means are equal as numbers.
RANK_TIE_TOLERANCE = 1e-9
#: Bootstrap resamples of a board's rank intervals: each resample ranks every entry once, so this
#: is kept below ``BOOTSTRAP_RESAMPLES`` (a full board has hundreds of entries); the fixed seed
#: (``BOOTSTRAP_SEED``) keeps a board's intervals the same on every page and export.
RANK_RESAMPLES = 1000


def competition_ranks(means: Sequence[float]) -> list[int]:
    """Each mean's rank, best (highest) first, equal means sharing the best rank of their group and
    the next mean skipping as many ranks as shared it: 100, 100, 90 rank 1, 1, 3. Means closer than
    ``RANK_TIE_TOLERANCE`` are equal."""
    values = np.asarray(list(means), dtype=float)
    if not len(values):
        return []
    return [int(rank) for rank in _ranks(values[None, :])[0]]


def _ranks(matrix: np.ndarray) -> np.ndarray:
    """Competition ranks of each row of ``matrix`` (resamples × entries): 1 + how many entries of
    the row are better by more than the tolerance; a NaN (no scenario of the entry drawn) ranks last."""
    filled = np.where(np.isnan(matrix), -np.inf, matrix)
    ordered = np.sort(filled, axis=1)
    count = matrix.shape[1]
    ranks = np.empty(matrix.shape, dtype=int)
    for index in range(matrix.shape[0]):
        not_better = np.searchsorted(ordered[index], filled[index] + RANK_TIE_TOLERANCE, side="right")
        ranks[index] = 1 + count - not_better
    return ranks


def bootstrap_rank_intervals(entries: Sequence[Mapping[Any, float]], *, resamples: int = RANK_RESAMPLES,
                             seed: int = BOOTSTRAP_SEED,
                             confidence: float = CONFIDENCE) -> list[tuple[int, int] | None]:
    """Each entry's rank interval: the scenarios any entry has a mean for are resampled with
    replacement; on each resample every entry's mean over the scenarios drawn (those of them it has)
    is recomputed and the entries ranked (``competition_ranks``); an entry's interval is the
    ``confidence`` range (2.5–97.5 %) of its ranks. All entries are ranked on the same resamples, so
    an entry far ahead of the rest keeps rank 1 however noisy its own scores. None for an entry
    without any scenario, or when fewer than two scenarios can be resampled."""
    scenarios = sorted({key for means in entries for key in means}, key=str)
    if len(scenarios) < 2 or not entries:
        return [None for _ in entries]
    matrix = np.array([[means.get(key, np.nan) for key in scenarios] for means in entries], dtype=float)
    present = ~np.isnan(matrix)
    values = np.where(present, matrix, 0.0)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(scenarios), size=(resamples, len(scenarios)))
    # How often each scenario is drawn in each resample: a resampled mean is a weighted mean.
    counts = np.zeros((resamples, len(scenarios)))
    np.add.at(counts, (np.arange(resamples)[:, None], draws), 1.0)
    totals = counts @ values.T
    weights = counts @ present.T.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        resampled = np.where(weights > 0, totals / np.where(weights > 0, weights, 1.0), np.nan)
    ranks = _ranks(resampled)
    tail = (1.0 - confidence) / 2
    low = np.quantile(ranks, tail, axis=0, method="lower")
    high = np.quantile(ranks, 1.0 - tail, axis=0, method="higher")
    return [(int(lo), int(hi)) if present[index].any() else None
            for index, (lo, hi) in enumerate(zip(low, high, strict=True))]
