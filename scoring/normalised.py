"""Scores on a common scale across environments: each scenario's mean placed between a floor (what
doing nothing scores there) and a fixed ceiling (the best score possible there, or a published
reference where the metric has no maximum), as a percentage.

An environment's raw scores are not comparable with another's (AES %, Sokoban's 100-based reward
score, Football's dense reward), but "how far from doing nothing to the ceiling" is. Per scenario
``n = 100 · (x − floor) / (ceiling − floor)``; an entry's normalised score is the mean of ``n`` over
its scenarios, with the standard error over scenarios as ``scoring.stats`` takes it (per-scenario
means first, ddof = 1, over sqrt(k)). Nothing is clipped: an entry below the floor scores below 0,
one above a reference ceiling above 100.

Floors and ceilings are constants per scenario, never read from other entries, so an entry's score
depends on its own means alone. Where a board's floor and ceiling are the same on every scenario
(a published reference), ``n`` is one linear map of the raw mean and its SE the raw SE scaled by
``100 / (ceiling − floor)`` (``linear_map``): the per-scenario form gives exactly that.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Normalised:
    """An entry's normalised score over the scenarios it has means for."""

    mean: float | None
    #: None with fewer than two scenarios.
    se: float | None
    #: Scenarios that counted.
    n_scenarios: int
    #: Scenarios it has a mean for whose ceiling is not above their floor (nothing to normalise by).
    skipped: int = 0


def normalise(value: float, floor: float, ceiling: float) -> float | None:
    """``value`` as a percentage of the way from ``floor`` to ``ceiling``; None when the ceiling is
    not above the floor."""
    if not ceiling > floor:
        return None
    return 100.0 * (value - floor) / (ceiling - floor)


def mean_and_se(values: Sequence[float]) -> tuple[float | None, float | None]:
    """The mean and its standard error (ddof = 1, over sqrt(k)); None for what cannot be computed."""
    k = len(values)
    if not k:
        return None, None
    centre = sum(values) / k
    if k < 2:
        return centre, None
    variance = sum((value - centre) ** 2 for value in values) / (k - 1)
    return centre, math.sqrt(variance) / math.sqrt(k)


def normalised_score(means: Mapping[K, float], floors: Mapping[K, float],
                     ceilings: Mapping[K, float]) -> Normalised:
    """An entry's per-scenario ``means`` normalised by each scenario's floor and ceiling, then
    averaged over scenarios. A scenario with no floor or no ceiling does not count; one whose
    ceiling is not above its floor is counted in ``skipped``."""
    values: list[float] = []
    skipped = 0
    for scenario, value in means.items():
        if scenario not in floors or scenario not in ceilings:
            continue
        normalised = normalise(value, floors[scenario], ceilings[scenario])
        if normalised is None:
            skipped += 1
        else:
            values.append(normalised)
    mean, se = mean_and_se(values)
    return Normalised(mean=mean, se=se, n_scenarios=len(values), skipped=skipped)


def linear_map(mean: float, se: float | None, floor: float, ceiling: float) -> tuple[float | None, float | None]:
    """A board's raw ``mean`` ± ``se`` on the scale from a constant ``floor`` to a constant
    ``ceiling``: ``100 · (mean − floor) / (ceiling − floor)`` ± ``100 · se / (ceiling − floor)`` (a
    linear map scales the standard error by its slope); None where the ceiling is not above the floor."""
    normalised = normalise(mean, floor, ceiling)
    if normalised is None:
        return None, None
    return normalised, None if se is None else 100.0 * se / (ceiling - floor)


def combined(scores: Sequence[tuple[float, float | None]]) -> tuple[float | None, float | None]:
    """The mean of several normalised scores (one per environment) and its standard error
    ``sqrt(Σ se²) / k``, the environments' scores being independent; the SE is None where any is."""
    if not scores:
        return None, None
    k = len(scores)
    mean = sum(value for value, _ in scores) / k
    errors = [se for _, se in scores]
    if any(se is None for se in errors):
        return mean, None
    return mean, math.sqrt(sum(se * se for se in errors if se is not None)) / k
