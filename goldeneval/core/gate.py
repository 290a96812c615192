"""The regression gate's terms: its thresholds, the comparison states, the verdict statuses
and the gate's decisions (ADR-060 decision 4, ADR-215 decision 6).

They live apart from :mod:`goldeneval.core.regression` (the verdict of a pair of runs, which
needs the stored runs and the statistics) so that what declares the thresholds -- the CLI's
flags, the suite file, the run specification -- imports neither numpy nor the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from goldeneval.core.forms import QuestionForm

__all__ = [
    "DEFAULT_MAX_DROP",
    "DEFAULT_MIN_SLICE_QUESTIONS",
    "DEFAULT_THRESHOLDS",
    "EPSILON",
    "MIN_JUDGED_DESCRIPTION",
    "RATES",
    "ComparisonState",
    "GateDecision",
    "RegressionThresholds",
    "VerdictStatus",
    "check_slice_key",
]

DEFAULT_MAX_DROP = 0.1
DEFAULT_MIN_SLICE_QUESTIONS = 5
EPSILON = 1e-12
"""Float slack, so that a drop of exactly the threshold (0.5 - 0.4) is not a regression."""

RATES = ("pass_rate", "mean_score")
"""The two stored rates every kind of run has; what each means is its details' ``rate_names``."""

MIN_JUDGED_DESCRIPTION = (
    "Least judged@3 (share of the top-3 documents that carry a judgment; sets with judged negatives) "
    "a comparison needs: below it, or not measured, the verdict is unknown (labels incomplete for this run)."
)
"""What ``min_judged`` means, in the words of the CLI flag and the suite field alike."""


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
