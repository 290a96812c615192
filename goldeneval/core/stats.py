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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = [
    "PairedComparison",
    "Verdicts",
    "bootstrap_interval",
    "discordant_by",
    "mcnemar_exact",
    "paired_comparison",
]

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 42


def mcnemar_exact(lost: int, gained: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts."""
    discordant = lost + gained
    if discordant == 0:
        return 1.0
    from scipy.stats import binomtest  # scipy.stats costs a second at import: only when runs are compared

    return float(binomtest(lost, discordant, 0.5, alternative="two-sided").pvalue)


def bootstrap_interval(
    previous: Sequence[bool] | np.ndarray,
    current: Sequence[bool] | np.ndarray,
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
    if len(previous) != len(current) or not len(previous):
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


class Verdicts(NamedTuple):
    """The binary outcomes of a run's scored questions (prompts): ids and verdicts, aligned."""

    ids: Sequence[str]
    hits: np.ndarray

    @classmethod
    def of(cls, outcomes: Mapping[str, bool]) -> Verdicts:
        return cls(list(outcomes), np.fromiter(outcomes.values(), dtype=np.bool_, count=len(outcomes)))


def discordant_by(previous: Verdicts, current: Verdicts, labels: Mapping[str, str]) -> dict[str, tuple[int, int]]:
    """Per label (a slice's value), of the questions both runs scored, how many the current run
    lost (passed before, not now) and gained: each slice's McNemar counts, in one pass.  A
    label none of whose questions both runs scored is absent."""
    earlier = dict(zip(previous.ids, previous.hits.tolist(), strict=True))
    counts: dict[str, list[int]] = {}
    for question, hit in zip(current.ids, current.hits.tolist(), strict=True):
        was, label = earlier.get(question), labels.get(question)
        if was is None or label is None:
            continue
        tally = counts.setdefault(label, [0, 0])
        tally[0] += was and not hit
        tally[1] += hit and not was
    return {label: (lost, gained) for label, (lost, gained) in counts.items()}


def paired_comparison(
    rate: str,
    previous: Verdicts,
    current: Verdicts,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> PairedComparison | None:
    """Compare verdicts per question id; None when the runs share no scored question.

    Columnar: when both runs scored the same questions in the same order (the usual case:
    one set, no errors) the verdict arrays are compared as they are; otherwise they are
    paired by id.  The newly failing and passing ids are listed sorted either way."""
    before, now = previous, current
    if before.ids == now.ids:
        ids, was, became = np.asarray(before.ids, dtype=object), before.hits, now.hits
    else:
        shared = sorted(set(before.ids) & set(now.ids))
        earlier, later = (
            dict(zip(before.ids, before.hits.tolist(), strict=True)),
            dict(zip(now.ids, now.hits.tolist(), strict=True)),
        )
        ids = np.asarray(shared, dtype=object)
        was = np.fromiter(map(earlier.__getitem__, shared), dtype=np.bool_, count=len(shared))
        became = np.fromiter(map(later.__getitem__, shared), dtype=np.bool_, count=len(shared))
    if not len(ids):
        return None
    failing = tuple(sorted(ids[was & ~became].tolist()))
    passing = tuple(sorted(ids[~was & became].tolist()))
    interval = bootstrap_interval(was, became, seed=seed, resamples=resamples)
    return PairedComparison(rate, len(ids), failing, passing, mcnemar_exact(len(failing), len(passing)), interval)
