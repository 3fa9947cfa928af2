"""Every pair of a set of entries at once: the paired t-test of ``scoring.stats.paired_test`` and the
share of scenarios each entry of a pair wins, for all pairs in one pass over the entries'
per-scenario means.

Entry ``i`` against entry ``j`` uses the scenarios both have a mean for, as ``paired_test`` does:
the same mean difference, the same p-value (a two-sided paired t-test, 1.0 when the scores are
identical, undefined below two shared scenarios), so a cell of the matrix says what the
comparison page of that pair says.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scoring.stats import PairedTest

#: A per-scenario difference this small is a tie (the comparison page's rule): means are averages
#: of floats, and their last bits differ with the order they were summed in.
TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class PairMatrix:
    """Row entry against column entry, as arrays of shape (rows, columns); NaN where undefined."""

    n_shared: np.ndarray
    mean_difference: np.ndarray
    p_value: np.ndarray
    #: The share of shared scenarios where the row's mean is above the column's, a tie counting half.
    win_rate: np.ndarray

    def test(self, row: int, column: int) -> PairedTest:
        """The pair's numbers as ``paired_test`` gives them (None where it gives None)."""
        return PairedTest(int(self.n_shared[row, column]), _number(self.mean_difference[row, column]),
                          _number(self.p_value[row, column]))

    def win(self, row: int, column: int) -> float | None:
        return _number(self.win_rate[row, column])

    def significant(self, row: int, column: int) -> bool:
        """Separable at the boards' tie level (``TIE_ALPHA``): the opposite of ``PairedTest.tied``."""
        return not self.test(row, column).tied


def _number(value: Any) -> float | None:
    return None if np.isnan(value) else float(value)


def means_matrix(entries: Sequence[Mapping[Any, float]], scenarios: Sequence[Any]) -> np.ndarray:
    """The entries' per-scenario means as rows of an (entries, scenarios) array, NaN where missing."""
    return np.array([[means.get(key, np.nan) for key in scenarios] for means in entries], dtype=float).reshape(
        len(entries), len(scenarios))


def pair_matrix(rows: np.ndarray, columns: np.ndarray) -> PairMatrix:
    """Each row entry against each column entry; ``rows`` and ``columns`` are per-scenario means
    (``means_matrix``) over the same scenarios."""
    from scipy import stats as scipy_stats  # imported here, as in scoring.stats

    differences = rows[:, None, :] - columns[None, :, :]
    shared = ~np.isnan(differences)
    n = shared.sum(axis=-1)
    filled = np.where(shared, differences, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=-1) / n
        # Two passes, as the t-test computes its variance: the one-pass formula loses the small
        # differences of two close entries to rounding.
        squares = np.where(shared, differences - mean[..., None], 0.0) ** 2
        variance = squares.sum(axis=-1) / (n - 1)
        t = mean / np.sqrt(variance / n)
        p = 2.0 * scipy_stats.t.sf(np.abs(t), np.maximum(n - 1, 1))
        wins = (shared & (differences > TIE_TOLERANCE)).sum(axis=-1)
        ties = (shared & (np.abs(differences) <= TIE_TOLERANCE)).sum(axis=-1)
        win_rate = (wins + 0.5 * ties) / n
    # paired_test's own cases: identical scores (numpy's allclose) are tied with p 1; fewer than two
    # shared scenarios have no p-value.
    reference = np.broadcast_to(columns[None, :, :], differences.shape)
    close = (np.abs(differences) <= 1e-8 + 1e-5 * np.abs(reference)) | ~shared
    p = np.where(close.all(axis=-1), 1.0, p)
    p = np.where(n < 2, np.nan, p)
    return PairMatrix(n_shared=n, mean_difference=np.where(n > 0, mean, np.nan), p_value=p,
                      win_rate=np.where(n > 0, win_rate, np.nan))

