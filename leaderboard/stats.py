"""Statistics for boards.

Repeats of one scenario are not independent samples of the benchmark, so the uncertainty is taken
over scenarios: each scenario's repeats are averaged first, and the standard error is that of the
mean of those per-scenario means (sample standard deviation, ddof = 1, over sqrt(k)).
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Summary:
    mean: float | None
    se: float | None
    n_scenarios: int
    n_scores: int


def summarise(scores: Iterable[tuple[object, float]]) -> Summary:
    """Mean over all (scenario, score) pairs and the standard error over scenario means."""
    by_scenario: dict[object, list[float]] = defaultdict(list)
    total = 0.0
    count = 0
    for scenario, score in scores:
        by_scenario[scenario].append(score)
        total += score
        count += 1
    if not count:
        return Summary(None, None, 0, 0)
    means = [sum(values) / len(values) for values in by_scenario.values()]
    k = len(means)
    se = None
    if k > 1:
        centre = sum(means) / k
        variance = sum((m - centre) ** 2 for m in means) / (k - 1)
        se = math.sqrt(variance) / math.sqrt(k)
    return Summary(total / count, se, k, count)
