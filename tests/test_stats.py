"""Paired statistics against scipy called by hand on the same numbers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest, bootstrap

from goldeneval.core.stats import Verdicts, bootstrap_interval, mcnemar_exact, paired_comparison

PREVIOUS = [True] * 30 + [False] * 18
CURRENT = [True] * 24 + [False] * 6 + [True] * 2 + [False] * 16  # 6 lost, 2 gained


def test_mcnemar_is_the_two_sided_binomial_on_the_discordant_pairs() -> None:
    assert mcnemar_exact(6, 2) == pytest.approx(binomtest(6, 8, 0.5, alternative="two-sided").pvalue, abs=1e-15)
    assert mcnemar_exact(6, 2) == pytest.approx(0.2890625, abs=1e-12)  # 2 * P(X <= 2), X ~ Bin(8, 1/2)


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    assert mcnemar_exact(0, 0) == 1.0


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_the_bootstrap_interval_is_scipys_paired_percentile_interval(seed: int) -> None:
    """Drawn as counts of discordant pairs, the interval matches scipy's paired percentile
    bootstrap (which resamples the questions themselves) within Monte Carlo error."""
    expected = bootstrap(
        (np.asarray(PREVIOUS, float), np.asarray(CURRENT, float)),
        lambda p, c, axis=-1: c.mean(axis=axis) - p.mean(axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=10_000,
        confidence_level=0.95,
        method="percentile",
        rng=np.random.default_rng(seed),
    ).confidence_interval
    low, high = bootstrap_interval(PREVIOUS, CURRENT, seed=seed)
    # One question moves the difference by 1/48: the two agree to within one question.
    assert low == pytest.approx(expected.low, abs=1 / 48 + 1e-9)
    assert high == pytest.approx(expected.high, abs=1 / 48 + 1e-9)


def test_the_bootstrap_interval_is_reproducible_and_cheap_for_a_large_set() -> None:
    previous = [True] * 60_000 + [False] * 40_000
    current = [True] * 59_000 + [False] * 1_000 + [True] * 500 + [False] * 39_500
    first = bootstrap_interval(previous, current)
    assert first == bootstrap_interval(previous, current)
    assert first[0] < -0.005 < first[1]  # the observed difference, (500 - 1000) / 100,000


def test_agreement_has_a_zero_width_interval() -> None:
    assert bootstrap_interval([True, False, True], [True, False, True]) == (0.0, 0.0)


def test_the_bootstrap_interval_brackets_the_observed_difference() -> None:
    low, high = bootstrap_interval(PREVIOUS, CURRENT)
    assert low < (sum(CURRENT) - sum(PREVIOUS)) / len(CURRENT) < high


def test_a_paired_comparison_uses_only_questions_both_runs_scored() -> None:
    comparison = paired_comparison(
        "top-1", Verdicts.of({"a": True, "b": True, "c": False}), Verdicts.of({"a": False, "b": True})
    )
    assert comparison is not None
    assert (comparison.questions, comparison.newly_failing, comparison.newly_passing) == (2, ("a",), ())


def test_unequal_samples_are_refused() -> None:
    with pytest.raises(ValueError, match="equally long, non-empty"):
        bootstrap_interval([True], [True, False])


def test_a_single_question_has_an_interval() -> None:
    """A one-question set compared with its earlier run (scipy's bootstrap refuses one
    observation; counting discordant pairs needs none)."""
    assert bootstrap_interval([True], [False]) == (-1.0, -1.0)
    comparison = paired_comparison("top-1", Verdicts.of({"q": True}), Verdicts.of({"q": True}))
    assert comparison is not None and comparison.interval == (0.0, 0.0)


def test_aligned_verdicts_and_verdicts_paired_by_id_compare_the_same() -> None:
    """The columnar fast path (same ids, same order) gives what pairing by id gives."""
    rng = np.random.default_rng(3)
    ids = [f"q{i:04d}" for i in range(500)]
    before, now = rng.random(500) < 0.6, rng.random(500) < 0.55
    aligned = paired_comparison("top-1", Verdicts(ids, before), Verdicts(ids, now))
    order = rng.permutation(500)
    shuffled = Verdicts([ids[i] for i in order], now[order])
    by_id = paired_comparison("top-1", Verdicts.of(dict(zip(ids, before.tolist(), strict=True))), shuffled)
    assert aligned == by_id
    assert aligned is not None and list(aligned.newly_failing) == sorted(
        q for q, b, n in zip(ids, before, now, strict=True) if b and not n
    )
