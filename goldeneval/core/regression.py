"""Regression verdicts (ADR-060 decision 4, ADR-215 decision 6) for a comparable pair of runs.

A rate (top-1 hit rate = ``pass_rate``, top-3 = ``mean_score``) regresses when it fell by
more than its threshold (default 0.1 absolute) — and, with ``max_p`` set, when the exact
McNemar test also calls the change significant.  Per-form and per-hard-class slices can
carry thresholds of their own, counted only when both runs scored at least
``min_slice_questions`` questions in the slice, so a regression hidden inside one class is
caught; with ``max_p`` a slice's drop must be significant too, tested on the slice's own
questions (``SlicedDetails.slice_of``).  Which earlier run is comparable at all is
:mod:`goldeneval.history.comparison`'s job.

Labels built from one system's results are biased against the next: a run whose top-3 holds
documents nobody judged can look like a regression when it is not.  A kind whose details
know how much of each ranking was judged (:class:`LabelCoverage`: retrieval runs of a set
with judged negatives) gets a :class:`CoverageNote` on its verdict, and with
``min_judged`` a comparison whose candidate falls below it gets no numeric verdict
(:func:`labels_incomplete`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from goldeneval.core.forms import QuestionForm
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

DEFAULT_MAX_DROP = 0.1
DEFAULT_MIN_SLICE_QUESTIONS = 5
_EPSILON = 1e-12
"""Float slack, so that a drop of exactly the threshold (0.5 - 0.4) is not a regression."""

RATES = ("pass_rate", "mean_score")
"""The two stored rates every kind of run has; what each means is its details' ``rate_names``."""


def check_slice_key(key: str) -> str:
    """A slice threshold's key: ``*``, ``form:MATCH``, ``form:GAP`` or ``hard_class:<CLASS>``.

    A form that does not exist would never match a slice and silently gate nothing."""
    kind, sep, value = key.partition(":")
    if key != "*" and not (sep and value and kind in ("form", "hard_class")):
        raise ValueError(f"slice {key!r} must be '*', 'form:<FORM>' or 'hard_class:<CLASS>'")
    forms = [form.value for form in QuestionForm]
    if kind == "form" and value not in forms:
        raise ValueError(f"slice {key!r}: a form is one of {', '.join(forms)}")
    return key


def _check_fraction(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie between 0 and 1, got {value}")


@dataclass(frozen=True)
class RegressionThresholds:
    """The largest allowed absolute drop of each rate, overall and per slice."""

    max_pass_rate_drop: float = DEFAULT_MAX_DROP
    max_mean_score_drop: float = DEFAULT_MAX_DROP
    max_p: float | None = None
    """When set, a drop is a regression only if its McNemar p-value is below it."""
    slice_max_drop: Mapping[str, float] = field(default_factory=dict)
    """Per slice ``"form:GAP"``, ``"hard_class:boilerplate"``, or ``"*"`` for every slice."""
    min_slice_questions: int = DEFAULT_MIN_SLICE_QUESTIONS
    min_judged: float | None = None
    """When set, a comparison whose candidate's judged@3 is below it (or was not measured)
    has no numeric verdict: state ``unknown``, "labels incomplete for this run"."""

    def __post_init__(self) -> None:
        _check_fraction("max_pass_rate_drop", self.max_pass_rate_drop)
        _check_fraction("max_mean_score_drop", self.max_mean_score_drop)
        if self.max_p is not None:
            _check_fraction("max_p", self.max_p)
        if self.min_judged is not None:
            _check_fraction("min_judged", self.min_judged)
        for key, value in self.slice_max_drop.items():
            check_slice_key(key)
            _check_fraction(f"slice threshold {key!r}", value)
        if self.min_slice_questions < 1:
            raise ValueError("min_slice_questions must be at least 1")

    def overall(self, column: str) -> float:
        return self.max_pass_rate_drop if column == "pass_rate" else self.max_mean_score_drop

    def for_slice(self, kind: str, value: str) -> float | None:
        return self.slice_max_drop.get(f"{kind}:{value}", self.slice_max_drop.get("*"))


DEFAULT_THRESHOLDS = RegressionThresholds()


class ComparisonState(StrEnum):
    """ADR-215 decision 6: whether a numeric verdict is possible at all."""

    BASELINE = "baseline"
    """The first run with a known benchmark in its series."""
    COMPARABLE = "comparable"
    """Known, equal benchmark fingerprints: a numeric verdict follows."""
    MISMATCH = "mismatch"
    """Known, different benchmark fingerprints (corpus, labels or protocol changed)."""
    UNKNOWN = "unknown"
    """A benchmark fingerprint is unknown, or this run is incomplete."""


class VerdictStatus(StrEnum):
    """What a gate acts on: the state, refined to pass/regression when comparable."""

    BASELINE = "baseline"
    PASS = "pass"
    REGRESSION = "regression"
    MISMATCH = "mismatch"
    UNKNOWN = "unknown"


class GateDecision(StrEnum):
    """What the regression gate decides about a stored run; only ``pass`` passes."""

    PASS = "pass"
    """A baseline, or a comparable run within every threshold."""
    REGRESSION = "regression"
    """A comparable run fell by more than a threshold."""
    INCOMPLETE = "incomplete"
    """The run itself is incomplete (a question errored or timed out): no verdict."""
    NOT_COMPARABLE = "not_comparable"
    """State ``mismatch`` or ``unknown``: nothing to compare with, so nothing can pass."""

    @property
    def raises_alert(self) -> bool:
        """Whether a failed gate is alerted on its own.  An incomplete run is one incident,
        alerted as incomplete (the ``run_complete`` check); its missing verdict is not
        alerted a second time."""
        return self in (GateDecision.REGRESSION, GateDecision.NOT_COMPARABLE)


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
        return self.drop > self.threshold + _EPSILON and self.significant

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


COVERAGE_CUTOFF = 3
"""The judged share a verdict reads: judged@3, what the gated top-3 looked at."""
MIN_JUDGED_DESCRIPTION = (
    "Least judged@3 (share of the top-3 documents that carry a judgment; sets with judged negatives) "
    "a comparison needs: below it, or not measured, the verdict is unknown (labels incomplete for this run)."
)
"""What ``min_judged`` means, in the words of the CLI flag and the suite field alike."""
MAX_LISTED_QUESTIONS = 20
"""Newly failing questions whose unjudged documents the text lists (the JSON lists all)."""
LABELS_INCOMPLETE = "labels incomplete for this run"
"""The reason's start when ``min_judged`` refuses a numeric verdict."""


@runtime_checkable
class LabelCoverage(Protocol):
    """Details that know how much of each ranking carries a judgment (retrieval runs of a
    set with judged negatives); a kind whose details lack these methods has no coverage."""

    def judged_share(self, k: int = COVERAGE_CUTOFF) -> float | None:
        """judged@k of the run; None when it was not measured."""
        ...

    def unjudged_top(self) -> Mapping[str, Sequence[str]] | None:
        """Per question, its top-3 documents that carry no judgment; None when the documents
        were withheld (``metadata_only``) or coverage was not measured."""
        ...

    def unjudged_counts(self) -> Mapping[str, int] | None:
        """Per question, how many of its top-3 documents carry no judgment (no ids)."""
        ...


@dataclass(frozen=True)
class CoverageNote:
    """What a verdict says about label coverage: judged@3 of both runs, how many questions'
    top-3 hold unjudged documents the earlier run's did not, and those documents for the
    newly failing questions (empty when the documents were withheld)."""

    candidate: float | None
    baseline: float | None
    newly_unjudged: int
    """Questions whose top-3 hold more unjudged documents than the earlier run's did."""
    failing_unjudged: Mapping[str, tuple[str, ...]]
    """Newly failing (top-3) questions -> the candidate's unjudged top-3 documents."""
    retriever: str
    run_id: str
    """The candidate run (``goldeneval pool --run`` pools exactly what it returned)."""
    overlapping: Mapping[str, tuple[tuple[float, float], tuple[float, float]]] = field(default_factory=dict)
    """Rank metrics whose values differ but whose bounds under unjudged documents overlap ->
    (the earlier run's bounds, the candidate's): judging those documents could reverse them."""

    @property
    def hint(self) -> str:
        return (
            f"pool the new retriever and judge what it found: goldeneval pool --set SET_FILE --retriever "
            f"{self.retriever} (or --run {self.run_id}) --depth 3 --out JUDGMENTS.jsonl, then goldeneval judge "
            "and goldeneval judgments to-set"
        )

    def lines(self) -> list[str]:
        def share(value: float | None) -> str:
            return "not measured" if value is None else f"{value:.3f}"

        lines = [f"  judged@3: {share(self.baseline)} -> {share(self.candidate)} (label coverage of the top-3)"]
        if self.newly_unjudged:
            lines.append(
                f"    {self.newly_unjudged} questions' top-3 hold documents nobody judged that the earlier run's "
                f"did not; {self.hint}"
            )
        failing = list(self.failing_unjudged.items())
        for question, documents in failing[:MAX_LISTED_QUESTIONS]:
            lines.append(f"    newly failing {question}: unjudged {', '.join(documents)}")
        if len(failing) > MAX_LISTED_QUESTIONS:
            more = len(failing) - MAX_LISTED_QUESTIONS
            lines.append(f"    ... and {more} more newly failing questions (see the JSON)")
        if self.overlapping:
            ranges = "; ".join(
                f"{name} {then[0]:.3f}..{then[1]:.3f} -> {now[0]:.3f}..{now[1]:.3f}"
                for name, (then, now) in self.overlapping.items()
            )
            lines.append(
                f"  bounds overlap (unjudged documents not relevant .. relevant): {ranges}; "
                "the labels cannot decide these metrics' comparison: judge the unjudged documents"
            )
        return lines

    def to_dict(self) -> dict[str, object]:
        return {
            "judged_at_3": self.candidate,
            "baseline_judged_at_3": self.baseline,
            "newly_unjudged_questions": self.newly_unjudged,
            "newly_failing_unjudged": {q: list(d) for q, d in self.failing_unjudged.items()},
            "hint": self.hint if self.newly_unjudged else None,
            "overlapping_bounds": {
                name: {"baseline": list(then), "candidate": list(now)} for name, (then, now) in self.overlapping.items()
            },
        }


@dataclass(frozen=True)
class LabelsShort:
    """A baseline's judged@3 below ``min_judged`` (None: not measured, which counts as below)."""

    judged_at_3: float | None
    min_judged: float
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"judged_at_3": self.judged_at_3, "min_judged": self.min_judged, "reason": self.reason}


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


def coverage_note(current: StoredRun, previous: StoredRun, newly_failing: Sequence[str]) -> CoverageNote | None:
    """The label coverage of a pair, when the current run measured it (None otherwise).

    A question counts as newly unjudged when its top-3 hold an unjudged document the earlier
    run's top-3 did not (by id where both runs kept their documents, else by count).  The
    unjudged documents of the newly failing questions are listed only from a run that kept
    its documents: never from ``metadata_only``."""
    details = current.details
    if not isinstance(details, LabelCoverage) or details.judged_share() is None:
        return None
    earlier = previous.details if previous.details_json is not None else None
    before = earlier.judged_share() if isinstance(earlier, LabelCoverage) else None
    now_ids = details.unjudged_top()
    then_ids = earlier.unjudged_top() if isinstance(earlier, LabelCoverage) else None
    if now_ids is not None and then_ids is not None and current.privacy != "metadata_only":
        newly = sum(1 for q, docs in now_ids.items() if set(docs) - set(then_ids.get(q, ())))
    else:
        now_counts: Mapping[str, int] = details.unjudged_counts() or {}
        then_counts: Mapping[str, int] = (
            earlier.unjudged_counts() if isinstance(earlier, LabelCoverage) else None
        ) or {}
        newly = sum(1 for q, n in now_counts.items() if n > then_counts.get(q, 0))
    listed: dict[str, tuple[str, ...]] = {}
    if now_ids is not None and current.privacy != "metadata_only":
        listed = {q: tuple(now_ids[q]) for q in newly_failing if now_ids.get(q)}
    return CoverageNote(
        details.judged_share(),
        before,
        newly,
        listed,
        current.retriever_id or current.model,
        current.id,
        overlapping_bounds(getattr(earlier, "metric_bounds", None), getattr(details, "metric_bounds", None)),
    )


Bounds = Mapping[str, tuple[float, float]]


def overlapping_bounds(
    earlier: Callable[[], Bounds | None] | None, current: Callable[[], Bounds | None] | None
) -> dict[str, tuple[tuple[float, float], tuple[float, float]]]:
    """The rank metrics whose means differ between two runs but whose bounds under unjudged
    documents (the mean with every unjudged document not relevant, and relevant) overlap: the
    labels cannot decide which run is better on them.  Empty when either run has no bounds
    (a details object without ``metric_bounds``, a set without judged negatives)."""
    then = earlier() if earlier is not None else None
    now = current() if current is not None else None
    if not then or not now:
        return {}
    found: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {}
    for name, (now_low, now_high) in now.items():
        if name not in then:
            continue
        then_low, then_high = then[name]
        if abs(now_low - then_low) <= _EPSILON:
            continue  # no difference to decide
        low_a, high_a = sorted((then_low, then_high))
        low_b, high_b = sorted((now_low, now_high))
        if low_a <= high_b + _EPSILON and low_b <= high_a + _EPSILON:
            found[name] = ((then_low, then_high), (now_low, now_high))
    return found


def labels_incomplete(
    current: StoredRun, min_judged: float, note: CoverageNote | None, *, outcome: str = "no numeric verdict"
) -> str | None:
    """The reason a comparison has no numeric verdict under ``min_judged``, or None when the
    candidate's judged@3 reaches it.  Not measured counts as below: the labels cannot say.
    ``outcome`` ends the reason (what falling short means for this verdict)."""
    share = note.candidate if note is not None else None
    if share is None:
        return (
            f"{LABELS_INCOMPLETE}: judged@3 was not measured (set {current.set_id!r} records no judged "
            f"negatives: build it with goldeneval judgments to-set), and min_judged {min_judged:g} needs it; "
            f"{outcome}"
        )
    if share + _EPSILON >= min_judged:
        return None
    assert note is not None  # a measured share comes from a note
    return (
        f"{LABELS_INCOMPLETE}: judged@3 {share:.3f} is below min_judged {min_judged:g} "
        f"(its top-3 hold documents nobody judged; {note.hint}); {outcome}"
    )


BASELINE_SHORT = "a baseline the labels cannot judge fails the gate"
"""How a baseline's reason ends when its judged@3 falls short of ``min_judged``."""


def baseline_labels_short(current: StoredRun, min_judged: float) -> LabelsShort | None:
    """The one rule for a first run under ``min_judged`` (the CLI's gate and the nightly
    check read it through :attr:`RegressionVerdict.passes_gate`): stored as the baseline, but
    short of labels when its judged@3 is below ``min_judged`` or was not measured."""
    details = current.details
    share = details.judged_share() if isinstance(details, LabelCoverage) else None
    note = (
        None if share is None else CoverageNote(share, None, 0, {}, current.retriever_id or current.model, current.id)
    )
    reason = labels_incomplete(current, min_judged, note, outcome=BASELINE_SHORT)
    return None if reason is None else LabelsShort(share, min_judged, reason)
