"""Regression verdicts (ADR-060 decision 4, ADR-215 decision 6) for a comparable pair of runs.

A rate (top-1 hit rate = ``pass_rate``, top-3 = ``mean_score``) regresses when it fell by
more than its threshold (default 0.1 absolute) — and, with ``max_p`` set, when the exact
McNemar test also calls the change significant.  Per-form and per-hard-class slices can
carry thresholds of their own, counted only when both runs scored at least
``min_slice_questions`` questions in the slice, so a regression hidden inside one class is
caught; with ``max_p`` a slice's drop must be significant too, tested on the slice's own
questions (``SlicedDetails.slice_of``).  Which earlier run is comparable at all is
:mod:`goldeneval.history.comparison`'s job.

The thresholds, states and gate decisions are :mod:`goldeneval.core.gate`'s (light: what
declares a threshold imports neither numpy nor the store); what a verdict says about label
coverage is :mod:`goldeneval.core.coverage`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from goldeneval.core.coverage import (
    BASELINE_SHORT,
    COVERAGE_CUTOFF,
    LABELS_INCOMPLETE,
    CoverageNote,
    LabelCoverage,
    LabelsShort,
    baseline_labels_short,
    coverage_note,
    labels_incomplete,
)
from goldeneval.core.gate import (
    DEFAULT_MAX_DROP,
    DEFAULT_THRESHOLDS,
    EPSILON,
    MIN_JUDGED_DESCRIPTION,
    RATES,
    ComparisonState,
    GateDecision,
    RegressionThresholds,
    VerdictStatus,
    check_slice_key,
)
from goldeneval.core.kinds import SlicedDetails
from goldeneval.core.manifest import BenchmarkChange, InformationalComparison
from goldeneval.core.records import SliceRates, StoredRun
from goldeneval.core.stats import PairedComparison, discordant_by, mcnemar_exact, paired_comparison

__all__ = [
    "BASELINE_SHORT",
    "COVERAGE_CUTOFF",
    "DEFAULT_MAX_DROP",
    "DEFAULT_THRESHOLDS",
    "LABELS_INCOMPLETE",
    "MIN_JUDGED_DESCRIPTION",
    "ComparisonState",
    "CoverageNote",
    "GateDecision",
    "LabelCoverage",
    "LabelsShort",
    "RateChange",
    "RegressionThresholds",
    "RegressionVerdict",
    "VerdictStatus",
    "baseline_labels_short",
    "check_slice_key",
    "coverage_note",
    "detect_regression",
    "labels_incomplete",
]
"""The gate's terms (:mod:`goldeneval.core.gate`) and label coverage
(:mod:`goldeneval.core.coverage`) are also importable from here, as they were before they
moved; new code imports them from their own modules."""


_CHANGE_FIELDS = ("rate", "column", "previous", "current", "drop", "threshold", "p_value", "regressed")
"""What the JSON of a :class:`RateChange` holds, in this order: these attributes under their own names."""


@dataclass(frozen=True)
class RateChange:
    rate: str
    """Human name, e.g. 'top-1 hit rate', prefixed by the slice for slice changes."""
    column: str
    previous: float
    current: float
    threshold: float
    p_value: float | None = None
    max_p: float | None = None

    @property
    def drop(self) -> float:
        return self.previous - self.current

    @property
    def significant(self) -> bool:
        """With ``max_p``, whether the paired test calls the change significant; a change no
        test applies to (no paired outcomes: a mean score) is gated on its drop alone."""
        return self.max_p is None or self.p_value is None or self.p_value < self.max_p

    @property
    def regressed(self) -> bool:
        return self.drop > self.threshold + EPSILON and self.significant

    def describe(self) -> str:
        direction = "fell" if self.drop > 0 else "rose" if self.drop < 0 else "held"
        text = f"{self.rate} {direction} {self.previous:.3f} -> {self.current:.3f}"
        if self.drop > 0:
            text += f" (-{self.drop:.3f}, allowed -{self.threshold:.3f})"
        if self.max_p is not None and self.p_value is not None:
            text += f" [McNemar p={self.p_value:.3g}, required < {self.max_p:g}]"
        return text

    def to_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in _CHANGE_FIELDS}


@dataclass(frozen=True)
class RegressionVerdict:
    state: ComparisonState
    previous_run_id: str | None
    reason: str
    regressed: bool = False
    changes: tuple[RateChange, ...] = ()
    slice_changes: tuple[RateChange, ...] = ()
    paired: tuple[PairedComparison, ...] = ()
    treatment_change: str | None = None
    """For a comparable pair: how the variant (model, chunking, pipeline) differs."""
    coverage: CoverageNote | None = None
    """For a pair whose runs measured label coverage (judged@3): what it says."""
    labels_short: LabelsShort | None = None
    """For a baseline under ``min_judged``: its judged@3 falls short (a baseline the labels
    cannot judge is no baseline: stored as the baseline, it fails the gate)."""
    reference: str | None = None
    """With ``baseline: accepted``: which run was the reference and why it is the series'
    level (``accepted level run <id> (accepted by <who>: <why>)``); the reason says it too."""
    benchmark_change: BenchmarkChange | None = None
    """For a ``mismatch`` whose benchmarks both have a manifest: what changed."""
    informational: InformationalComparison | None = None
    """For a ``mismatch``: the unchanged questions compared, informational, no numeric verdict."""

    @property
    def status(self) -> VerdictStatus:
        if self.state is ComparisonState.COMPARABLE:
            return VerdictStatus.REGRESSION if self.regressed else VerdictStatus.PASS
        return VerdictStatus(self.state.value)

    @property
    def summary(self) -> str:
        """``<status>: <reason>`` — the verdict in one line, as every report and the Dagster
        check's description show it (``mismatch: corpus changed (...)``)."""
        return f"{self.status.value}: {self.reason}"

    @property
    def passes_gate(self) -> bool:
        """ADR-215 decision 6: only a baseline and a passing comparison pass the gate; a
        baseline whose judged@3 falls short of ``min_judged`` does not."""
        if self.labels_short is not None:
            return False
        return self.status in (VerdictStatus.BASELINE, VerdictStatus.PASS)

    def gate(self, complete: bool) -> GateDecision:
        """The one gate rule, for ``--fail-on-regression`` and the ``no_regression`` check alike."""
        if self.passes_gate:
            return GateDecision.PASS
        if self.status is VerdictStatus.REGRESSION:
            return GateDecision.REGRESSION
        return GateDecision.NOT_COMPARABLE if complete else GateDecision.INCOMPLETE

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status.value,
            "state": self.state.value,
            "previous_run_id": self.previous_run_id,
            "reason": self.reason,
            "treatment_change": self.treatment_change,
            "changes": [c.to_dict() for c in self.changes],
            "slice_changes": [c.to_dict() for c in self.slice_changes],
            "paired": [p.to_dict() for p in self.paired],
            # only where coverage was measured: every other verdict's document is as it was
            **({} if self.coverage is None else {"label_coverage": self.coverage.to_dict()}),
            **({} if self.labels_short is None else {"labels_incomplete": self.labels_short.to_dict()}),
            # only on a mismatch the manifests explain: every other verdict's document is as it was
            **({} if self.benchmark_change is None else {"benchmark_change": self.benchmark_change.to_dict()}),
            **({} if self.informational is None else {"informational": self.informational.to_dict()}),
        }


SliceTest = Callable[[str, str, str], float | None]
"""A slice's McNemar p-value: ``(slice kind, slice value, rate column)``."""


def _slice_changes(
    previous: Sequence[SliceRates],
    current: Sequence[SliceRates],
    thresholds: RegressionThresholds,
    names: Mapping[str, str],
    tested: SliceTest | None = None,
) -> list[RateChange]:
    """Each gated slice's changes; with ``tested`` (``max_p`` set) each carries its p-value,
    so a slice regresses only when its drop is significant too, as the whole run's does."""
    earlier = {(s.kind, s.value): s for s in previous}
    changes = []
    for now in current:
        limit = thresholds.for_slice(now.kind, now.value)
        before = earlier.get((now.kind, now.value))
        if limit is None or before is None:
            continue
        if min(before.scored, now.scored) < thresholds.min_slice_questions:
            continue
        for column, prev, cur in (
            ("pass_rate", before.pass_rate, now.pass_rate),
            ("mean_score", before.mean_score, now.mean_score),
        ):
            if prev is not None and cur is not None:
                name = f"{now.kind} {now.value}: {names[column]}"
                p_value = tested(now.kind, now.value, column) if tested is not None else None
                changes.append(RateChange(name, column, prev, cur, limit, p_value, thresholds.max_p))
    return changes


def _slice_test(current: StoredRun, previous: StoredRun) -> SliceTest:
    """The exact McNemar test of one slice: the questions the current run has in it, paired
    with the earlier run by id (counted once per rate and kind of slice, for every slice of
    it).  A slice whose paired questions lost no more than they gained shows no drop (p = 1):
    its rate can fall by composition alone where membership depends on the run (an answer
    run's retrieval hit or miss).  None where no test applies: a rate without paired outcomes
    (a mean score), or a kind that cannot say which questions a slice holds."""
    details = current.details
    counted: dict[tuple[str, str], dict[str, tuple[int, int]] | None] = {}

    def counts(kind: str, column: str) -> dict[str, tuple[int, int]] | None:
        if (kind, column) not in counted:
            before, now = previous.paired_outcomes(column), current.paired_outcomes(column)
            labels = details.slice_of(kind) if isinstance(details, SlicedDetails) else None
            if before is None or now is None or labels is None:
                counted[kind, column] = None
            else:
                counted[kind, column] = discordant_by(before, now, labels)
        return counted[kind, column]

    def p_value(kind: str, value: str, column: str) -> float | None:
        by_value = counts(kind, column)
        if by_value is None or value not in by_value:
            return None
        lost, gained = by_value[value]
        return mcnemar_exact(lost, gained) if lost > gained else 1.0

    return p_value


def detect_regression(
    current: StoredRun,
    previous: StoredRun,
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS,
    *,
    current_slices: Sequence[SliceRates] = (),
    previous_slices: Sequence[SliceRates] = (),
    treatment_change: str | None = None,
    seed: int = 42,
) -> RegressionVerdict:
    """The numeric verdict of a comparable pair: rate drops, significance, slices."""
    paired: list[PairedComparison] = []
    changes: list[RateChange] = []
    names = current.details.rate_names
    for column in RATES:
        prev, cur = getattr(previous, column), getattr(current, column)
        before, now = previous.paired_outcomes(column), current.paired_outcomes(column)
        comparison = (
            paired_comparison(names[column], before, now, seed=seed) if before is not None and now is not None else None
        )
        if comparison is not None:
            paired.append(comparison)
        if prev is None or cur is None:
            continue
        p_value = comparison.p_value if comparison is not None else None
        changes.append(
            RateChange(names[column], column, prev, cur, thresholds.overall(column), p_value, thresholds.max_p)
        )
    tested = _slice_test(current, previous) if thresholds.max_p is not None else None
    slices = _slice_changes(previous_slices, current_slices, thresholds, names, tested)
    fallen = [c for c in (*changes, *slices) if c.regressed]
    if fallen:
        reason = "; ".join(c.describe() for c in fallen)
    else:
        reason = "within thresholds: " + "; ".join(c.describe() for c in changes)
    return RegressionVerdict(
        ComparisonState.COMPARABLE,
        previous.id,
        reason,
        regressed=bool(fallen),
        changes=tuple(changes),
        slice_changes=tuple(slices),
        paired=tuple(paired),
        treatment_change=treatment_change,
    )
