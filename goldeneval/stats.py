"""Paired statistics for two runs over the same questions (beyond ADR-060/072).

A 48-question set moves about 2 points per question, so a 0.1 threshold is five questions
and can be noise.  For a comparable pair of runs, per rate (top-1, top-3):

* the exact McNemar test: a two-sided binomial test (scipy) on the discordant pairs —
  questions hit in one run and missed in the other — with p = 1 when there are none;
* a paired bootstrap 95% interval of the difference in rate (current - previous): paired
  resampling of questions, percentile method, drawn as counts of discordant pairs (see
  :func:`bootstrap_interval`); the seed is a parameter, so the same runs give the same
  interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest

__all__ = ["PairedComparison", "bootstrap_interval", "mcnemar_exact", "paired_comparison"]

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 42


def mcnemar_exact(lost: int, gained: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts."""
    discordant = lost + gained
    if discordant == 0:
        return 1.0
    return float(binomtest(lost, discordant, 0.5, alternative="two-sided").pvalue)


def bootstrap_interval(
    previous: Sequence[bool],
    current: Sequence[bool],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[float, float]:
    """Percentile interval of mean(current) - mean(previous) over paired resamples.

    This is the paired percentile bootstrap (``scipy.stats.bootstrap(..., paired=True,
    method="percentile")``) computed from counts: a resample of n question pairs changes the
    rate difference only through how many *lost* (hit, then miss) and *gained* pairs it
    draws, and those counts are multinomial, so drawing them directly gives the same
    distribution in O(resamples) time and memory.  Resampling the n pairs themselves, as
    scipy does, holds a resamples x n matrix: 16 GB for a 100,000-question set.
    ``tests/test_stats.py`` holds the two within Monte Carlo error of each other.
    """
    if len(previous) != len(current) or not previous:
        raise ValueError("the bootstrap needs two equally long, non-empty paired samples")
    before, now = np.asarray(previous, dtype=bool), np.asarray(current, dtype=bool)
    n = before.size
    lost, gained = int((before & ~now).sum()), int((~before & now).sum())
    counts = np.random.default_rng(seed).multinomial(n, [lost / n, gained / n, (n - lost - gained) / n], resamples)
    differences = (counts[:, 1] - counts[:, 0]) / n
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(differences, [tail, 100.0 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class PairedComparison:
    """One rate compared over the questions both runs scored."""

    rate: str
    questions: int
    newly_failing: tuple[str, ...]
    newly_passing: tuple[str, ...]
    p_value: float
    interval: tuple[float, float]

    def to_dict(self) -> dict[str, object]:
        return {
            "rate": self.rate,
            "questions": self.questions,
            "newly_failing": list(self.newly_failing),
            "newly_passing": list(self.newly_passing),
            "mcnemar_p": self.p_value,
            "bootstrap_95": list(self.interval),
        }


def paired_comparison(
    rate: str,
    previous: dict[str, bool],
    current: dict[str, bool],
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> PairedComparison | None:
    """Compare hits per question id; None when the runs share no scored question."""
    shared = sorted(previous.keys() & current.keys())
    if not shared:
        return None
    failing = tuple(q for q in shared if previous[q] and not current[q])
    passing = tuple(q for q in shared if not previous[q] and current[q])
    interval = bootstrap_interval(
        [previous[q] for q in shared], [current[q] for q in shared], seed=seed, resamples=resamples
    )
    return PairedComparison(rate, len(shared), failing, passing, mcnemar_exact(len(failing), len(passing)), interval)
