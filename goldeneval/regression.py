"""Regression detection (ADR-060 decision 4): a run against the previous run of its series.

A complete run is compared with the previous complete run of the same (set, model, grader).
A regression is a rate that fell by more than its threshold (default 0.1 absolute).  For
retrieval runs the two rates are the top-1 hit rate (``pass_rate``) and the top-3 hit rate
(``mean_score``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from goldeneval.store import StoredRun

__all__ = [
    "DEFAULT_THRESHOLDS",
    "RateChange",
    "RegressionThresholds",
    "RegressionVerdict",
    "VerdictStatus",
    "detect_regression",
]

DEFAULT_MAX_DROP = 0.1
_EPSILON = 1e-12
"""Float slack, so that a drop of exactly the threshold (0.5 - 0.4) is not a regression."""


@dataclass(frozen=True)
class RegressionThresholds:
    """The largest allowed absolute drop of each rate."""

    max_pass_rate_drop: float = DEFAULT_MAX_DROP
    max_mean_score_drop: float = DEFAULT_MAX_DROP

    def __post_init__(self) -> None:
        for name in ("max_pass_rate_drop", "max_mean_score_drop"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must lie between 0 and 1, got {value}")


class VerdictStatus(StrEnum):
    BASELINE = "baseline"
    """No earlier complete run of the series: this run is the baseline."""
    PASS = "pass"
    REGRESSION = "regression"
    SKIPPED = "skipped"
    """The run is incomplete (some questions errored) and is not compared."""


@dataclass(frozen=True)
class RateChange:
    rate: str
    """Human name, e.g. 'top-1 hit rate'."""
    column: str
    previous: float
    current: float
    threshold: float

    @property
    def drop(self) -> float:
        return self.previous - self.current

    @property
    def regressed(self) -> bool:
        return self.drop > self.threshold + _EPSILON

    def describe(self) -> str:
        direction = "fell" if self.drop > 0 else "rose" if self.drop < 0 else "held"
        text = f"{self.rate} {direction} {self.previous:.3f} -> {self.current:.3f}"
        if self.drop > 0:
            text += f" (-{self.drop:.3f}, allowed -{self.threshold:.3f})"
        return text


@dataclass(frozen=True)
class RegressionVerdict:
    status: VerdictStatus
    previous_run_id: str | None
    changes: tuple[RateChange, ...]
    reason: str

    @property
    def regressed(self) -> bool:
        return self.status is VerdictStatus.REGRESSION

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status.value,
            "previous_run_id": self.previous_run_id,
            "reason": self.reason,
            "changes": [
                {
                    "rate": c.rate,
                    "column": c.column,
                    "previous": c.previous,
                    "current": c.current,
                    "drop": c.drop,
                    "threshold": c.threshold,
                    "regressed": c.regressed,
                }
                for c in self.changes
            ],
        }


RATE_NAMES = {"pass_rate": "top-1 hit rate", "mean_score": "top-3 hit rate"}
DEFAULT_THRESHOLDS = RegressionThresholds()


def detect_regression(
    current: StoredRun,
    previous: StoredRun | None,
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS,
    rate_names: dict[str, str] = RATE_NAMES,
) -> RegressionVerdict:
    """Compare ``current`` with ``previous`` (the latest earlier complete run, or None)."""
    if not current.complete:
        return RegressionVerdict(
            VerdictStatus.SKIPPED,
            None,
            (),
            f"run is incomplete ({current.error_count} of {current.question_count} questions "
            "errored); incomplete runs are not compared",
        )
    if previous is None:
        return RegressionVerdict(
            VerdictStatus.BASELINE, None, (), "no earlier complete run: this run is the baseline"
        )
    changes = tuple(
        RateChange(rate_names[column], column, prev, cur, limit)
        for column, prev, cur, limit in (
            ("pass_rate", previous.pass_rate, current.pass_rate, thresholds.max_pass_rate_drop),
            ("mean_score", previous.mean_score, current.mean_score, thresholds.max_mean_score_drop),
        )
        if prev is not None and cur is not None
    )
    fallen = [c for c in changes if c.regressed]
    if fallen:
        reason = "; ".join(c.describe() for c in fallen)
        return RegressionVerdict(VerdictStatus.REGRESSION, previous.id, changes, reason)
    reason = "within thresholds: " + "; ".join(c.describe() for c in changes)
    return RegressionVerdict(VerdictStatus.PASS, previous.id, changes, reason)
