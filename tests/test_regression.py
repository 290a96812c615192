"""Regression verdicts (ADR-060 decision 4) on stored runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from goldeneval.core.gate import RegressionThresholds, VerdictStatus
from goldeneval.core.records import SliceRates
from goldeneval.core.regression import RateChange, detect_regression
from goldeneval.store import StoredRun
from tests.records import details, question


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
        details_json=json.dumps(details().to_json()),
        provenance={},
    )


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


def test_thresholds_outside_zero_to_one_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_pass_rate_drop must lie between 0 and 1"):
        RegressionThresholds(max_pass_rate_drop=1.5)


def hits_run(top1: list[bool], top3: list[bool], run_id: str) -> StoredRun:
    questions = [question(f"q{i}", a, b) for i, (a, b) in enumerate(zip(top1, top3, strict=True))]
    base = run(sum(top1) / len(top1), sum(top3) / len(top3), run_id=run_id)
    return StoredRun(**{**base.__dict__, "details_json": json.dumps(details(questions).to_json())})


def test_a_significant_drop_is_required_when_max_p_is_set() -> None:
    # 20 questions; 3 lost, 0 gained at top-1: drop 0.15 > 0.1, but McNemar p = 0.25.
    previous = hits_run([True] * 10 + [False] * 10, [True] * 20, "prev")
    current = hits_run([True] * 7 + [False] * 13, [True] * 20, "cur")
    plain = detect_regression(current, previous)
    gated = detect_regression(current, previous, RegressionThresholds(max_p=0.05))
    assert plain.status is VerdictStatus.REGRESSION
    assert gated.status is VerdictStatus.PASS
    assert gated.changes[0].p_value == pytest.approx(0.25)


def test_newly_failing_and_newly_passing_questions_are_listed() -> None:
    previous = hits_run([True, True, False, False], [True] * 4, "prev")
    current = hits_run([True, False, True, False], [True] * 4, "cur")
    [top1, _top3] = detect_regression(current, previous).paired
    assert (top1.newly_failing, top1.newly_passing) == (("q1",), ("q2",))


def test_a_slice_drop_must_be_significant_too_when_max_p_is_set() -> None:
    """docs/guide/provenance-and-comparison.md: ``--max-p`` makes the gate require significance
    as well as the drop; a slice's drop is tested on the slice's own questions (a probe found
    slices gated on the drop alone, ``p_value: null``)."""
    forms = ["GAP"] * 10 + ["MATCH"] * 10
    was = [True] * 20
    became = [False] * 6 + [True] * 14  # six GAP questions lost at top-1: exact McNemar p = 1/32

    def with_forms(top1: list[bool], run_id: str) -> StoredRun:
        pairs = enumerate(zip(top1, forms, strict=True))
        questions = [question(f"q{i}", hit, True, form=form) for i, (hit, form) in pairs]
        base = run(sum(top1) / 20, 1.0, run_id=run_id)
        return StoredRun(**{**base.__dict__, "details_json": json.dumps(details(questions).to_json())})

    def slices(top1: list[bool]) -> list[SliceRates]:
        return [
            SliceRates("form", form, 10, 10, sum(h for h, f in zip(top1, forms, strict=True) if f == form) / 10, 1.0)
            for form in ("GAP", "MATCH")
        ]

    previous, current = with_forms(was, "prev"), with_forms(became, "cur")
    by_slice = {"form:GAP": 0.1}
    for max_p, regressed in ((0.01, False), (0.05, True), (None, True)):
        thresholds = RegressionThresholds(max_pass_rate_drop=0.5, max_p=max_p, slice_max_drop=by_slice)
        verdict = detect_regression(
            current, previous, thresholds, current_slices=slices(became), previous_slices=slices(was)
        )
        [gap_top1] = [c for c in verdict.slice_changes if c.rate == "form GAP: top-1 hit rate"]
        assert gap_top1.drop == pytest.approx(0.6)
        assert gap_top1.p_value == (None if max_p is None else pytest.approx(1 / 32)), max_p
        assert (gap_top1.regressed, verdict.status is VerdictStatus.REGRESSION) == (regressed, regressed), max_p
    gated = detect_regression(
        current,
        previous,
        RegressionThresholds(max_pass_rate_drop=0.5, max_p=0.05, slice_max_drop=by_slice),
        current_slices=slices(became),
        previous_slices=slices(was),
    )
    assert "form GAP: top-1 hit rate fell 1.000 -> 0.400 (-0.600, allowed -0.100) [McNemar p=0.0312" in gated.reason


def test_a_slice_whose_paired_questions_gained_shows_no_significant_drop() -> None:
    """Where slice membership depends on the run (an answer run's retrieval hit or miss), a
    slice's rate can fall by composition alone: the paired test must not call that a drop."""
    before_forms = ["GAP"] * 10 + ["MATCH"] * 10
    now_forms = ["GAP"] * 20
    was = [True] * 10 + [False] * 10
    became = [True] * 15 + [False] * 5  # five questions newly in the slice gained, none lost

    def with_forms(top1: list[bool], forms: list[str], run_id: str) -> StoredRun:
        pairs = enumerate(zip(top1, forms, strict=True))
        questions = [question(f"q{i}", hit, True, form=form) for i, (hit, form) in pairs]
        base = run(sum(top1) / 20, 1.0, run_id=run_id)
        return StoredRun(**{**base.__dict__, "details_json": json.dumps(details(questions).to_json())})

    previous, current = with_forms(was, before_forms, "prev"), with_forms(became, now_forms, "cur")
    thresholds = RegressionThresholds(max_p=0.05, slice_max_drop={"form:GAP": 0.1})
    verdict = detect_regression(
        current,
        previous,
        thresholds,
        current_slices=[SliceRates("form", "GAP", 20, 20, 0.75, 1.0)],
        previous_slices=[SliceRates("form", "GAP", 10, 10, 1.0, 1.0)],
    )
    [gap_top1] = [c for c in verdict.slice_changes if c.column == "pass_rate"]
    assert (gap_top1.drop, gap_top1.p_value, gap_top1.regressed) == (0.25, 1.0, False)
    assert verdict.status is VerdictStatus.PASS


def test_with_max_p_a_change_no_test_applies_to_is_gated_on_its_drop() -> None:
    """A mean score has no paired outcomes: ``--max-p`` (a pass-rate drop must be significant)
    leaves its drop gated as it is."""
    change = RateChange("mean score", "mean_score", 0.95, 0.55, 0.1, p_value=None, max_p=0.05)
    assert change.regressed
    assert not RateChange("mean score", "mean_score", 0.95, 0.9, 0.1, p_value=None, max_p=0.05).regressed
