"""Regression verdicts (ADR-060 decision 4) on stored runs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from goldeneval.regression import RegressionThresholds, VerdictStatus, detect_regression
from goldeneval.store import StoredRun


def run(pass_rate: float, mean_score: float, *, errors: int = 0, run_id: str = "r") -> StoredRun:
    return StoredRun(
        id=run_id,
        created_at=datetime(2026, 11, 1, tzinfo=UTC),
        set_id="s",
        model="m",
        grader="retrieval_hit_rate",
        pass_rate=pass_rate,
        mean_score=mean_score,
        question_count=10,
        scored_count=10 - errors,
        error_count=errors,
        status="complete" if errors == 0 else "incomplete",
        details={},
        provenance={},
    )


def test_the_first_complete_run_is_the_baseline() -> None:
    assert detect_regression(run(0.5, 0.7), None).status is VerdictStatus.BASELINE


def test_a_drop_within_the_threshold_passes() -> None:
    verdict = detect_regression(run(0.45, 0.7), run(0.5, 0.7, run_id="prev"))
    assert (verdict.status, verdict.previous_run_id) == (VerdictStatus.PASS, "prev")


def test_a_drop_of_exactly_the_threshold_passes() -> None:
    assert detect_regression(run(0.4, 0.7), run(0.5, 0.7)).status is VerdictStatus.PASS


def test_a_top1_drop_beyond_the_threshold_names_the_rate_and_the_amount() -> None:
    verdict = detect_regression(run(0.375, 0.7), run(0.5, 0.7))
    assert verdict.status is VerdictStatus.REGRESSION
    assert verdict.reason == "top-1 hit rate fell 0.500 -> 0.375 (-0.125, allowed -0.100)"


def test_each_rate_has_its_own_threshold() -> None:
    thresholds = RegressionThresholds(max_pass_rate_drop=0.5, max_mean_score_drop=0.05)
    verdict = detect_regression(run(0.2, 0.6), run(0.5, 0.7), thresholds)
    assert [c.column for c in verdict.changes if c.regressed] == ["mean_score"]


def test_an_incomplete_run_is_not_compared() -> None:
    verdict = detect_regression(run(0.0, 0.0, errors=3), run(0.9, 0.9))
    assert verdict.status is VerdictStatus.SKIPPED
    assert "3 of 10 questions errored" in verdict.reason


def test_thresholds_outside_zero_to_one_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_pass_rate_drop must lie between 0 and 1"):
        RegressionThresholds(max_pass_rate_drop=1.5)
