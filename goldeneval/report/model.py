"""What a comparison of two stored runs holds: the values every renderer reads.

:func:`goldeneval.report.comparison.build_comparison` fills them; the terminal table, JSON,
Markdown, JUnit XML, the HTML report and the Dagster check's description only read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from goldeneval.core.gate import ComparisonState
from goldeneval.core.privacy import PrivacyMode, strictest
from goldeneval.core.records import SliceRates, StoredRun
from goldeneval.core.regression import RegressionVerdict
from goldeneval.core.stats import PairedComparison
from goldeneval.report.sources import DocumentInfo

__all__ = [
    "COMPARISON_FORMAT_VERSION",
    "SHOWN_DOCUMENTS",
    "Flip",
    "MeasureChange",
    "QuestionRow",
    "RunComparison",
    "Side",
    "SliceRow",
    "TrendPoint",
    "comparison_privacy",
]

COMPARISON_FORMAT_VERSION = 1
SHOWN_DOCUMENTS = 5
"""Top documents of each run shown per question."""


class Flip(StrEnum):
    """How a question's outcome moved from the earlier run to the current one."""

    NEWLY_FAILING = "newly_failing"
    NEWLY_PASSING = "newly_passing"
    UNCHANGED = "unchanged"
    ONLY_CURRENT = "only_in_current"
    """Not scored by the earlier run (new, or an error there)."""
    ONLY_EARLIER = "only_in_earlier"
    """Not scored by the current run (removed, or an error now)."""


@dataclass(frozen=True, slots=True)
class Side:
    """One run's view of one question."""

    status: str
    """``ok``, ``error`` or (answer runs) ``unstable``."""
    outcomes: tuple[bool | None, ...]
    """Per binary rate of the kind (:attr:`RunComparison.rates`): retrieval hit at 1 and at 3,
    an answer's pass; None for an error."""
    documents: tuple[str, ...] | None
    """The first :data:`SHOWN_DOCUMENTS` documents, best first; None when withheld."""
    first_relevant: int | None = None
    """Rank of the first expected document among every stored document; None when none was
    found or the expected documents are not at hand."""
    depth: int | None = None
    """How many distinct documents the ranking reached."""
    unjudged: tuple[int, ...] | None = None
    """Ranks of the top-3 documents nobody judged; None where the run did not measure it."""
    relevant: tuple[int, ...] | None = None
    """Ranks of the shown documents that are expected; None when the expected documents are
    not at hand (no set, ``metadata_only``)."""
    answer: str | None = None
    score: float | None = None
    reason: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class QuestionRow:
    """One question of the comparison."""

    id: str
    text: str | None
    form: str | None
    hard_class: str | None
    earlier: Side | None
    current: Side | None
    flip: Flip
    flipped: tuple[str, ...]
    """The rates (their names) whose outcome flipped."""
    informational: bool
    """Compared without a numeric verdict (state ``mismatch`` or ``unknown``)."""
    expected: tuple[str, ...] | None = None
    """What should have come back: the question's expected documents in the set at hand
    (None when the set is not at hand, or under ``metadata_only``)."""

    @property
    def rank_change(self) -> int | None:
        """The first relevant document's rank now minus before (negative: it moved up); a
        document found by one run only counts as one rank past the other's depth."""
        if self.earlier is None or self.current is None:
            return None
        before, now = self.earlier.first_relevant, self.current.first_relevant
        if before is None and now is None:
            return None
        if before is None:
            before = (self.earlier.depth or 0) + 1
        if now is None:
            now = (self.current.depth or 0) + 1
        return now - before


@dataclass(frozen=True, slots=True)
class MeasureChange:
    """A rate or rank metric of both runs."""

    name: str
    earlier: float | None
    current: float | None
    gated: bool
    """One of the two rates the gate reads (``pass_rate``, ``mean_score``)."""

    @property
    def change(self) -> float | None:
        return None if self.earlier is None or self.current is None else self.current - self.earlier


@dataclass(frozen=True, slots=True)
class SliceRow:
    """One slice (a form, a hard class, a retrieval hit or miss) of both runs."""

    kind: str
    value: str
    earlier: SliceRates | None
    current: SliceRates | None
    paired: tuple[PairedComparison, ...] = ()
    """Per binary rate, the paired comparison of the slice's questions (the current run's
    members): McNemar's p and the bootstrap interval of the slice's change; empty where the
    runs share none or the kind cannot say which questions a slice holds."""


@dataclass(frozen=True, slots=True)
class TrendPoint:
    """A stored run of the current run's series, for the trend over time."""

    run_id: str
    created_at: datetime
    status: str
    pass_rate: float | None
    mean_score: float | None
    benchmark_fingerprint: str | None
    break_before: bool
    """The benchmark changed since the point before (or is unknown): the line breaks here."""


@dataclass(frozen=True)
class RunComparison:
    """Everything a renderer shows of two runs (or of one run without an earlier one)."""

    current: StoredRun
    earlier: StoredRun | None
    verdict: RegressionVerdict
    kind: str
    """``retrieval``, ``prompts`` or ``answers``."""
    rates: tuple[str, ...]
    """The names of the binary rates of :attr:`Side.outcomes`, in order."""
    rate_names: Mapping[str, str]
    """What the stored ``pass_rate`` and ``mean_score`` mean for this kind."""
    paired: tuple[PairedComparison, ...]
    """Per binary rate: the verdict's paired comparison, or the same computed for information."""
    measures: tuple[MeasureChange, ...]
    slices: tuple[SliceRow, ...]
    questions: tuple[QuestionRow, ...]
    documents: Mapping[str, DocumentInfo]
    """Title and snippet of every document shown, where the corpus is at hand."""
    trend: tuple[TrendPoint, ...]
    privacy: PrivacyMode
    """What may be shown: the strictest of the request and both runs' own modes."""
    notes: tuple[str, ...]
    """What is not shown, and why."""

    @property
    def informational(self) -> bool:
        """The questions are compared, but there is no numeric verdict to back it."""
        return self.earlier is not None and self.verdict.state is not ComparisonState.COMPARABLE

    def flipped(self, flip: Flip) -> list[QuestionRow]:
        return [row for row in self.questions if row.flip is flip]

    @property
    def newly_failing(self) -> list[QuestionRow]:
        return self.flipped(Flip.NEWLY_FAILING)

    @property
    def newly_passing(self) -> list[QuestionRow]:
        return self.flipped(Flip.NEWLY_PASSING)


def comparison_privacy(requested: PrivacyMode, *runs: StoredRun | None) -> PrivacyMode:
    """The strictest of ``requested`` and the modes the runs were stored under: a comparison
    shows no more than the stricter run kept."""
    recorded = [PrivacyMode(r.privacy) for r in runs if r is not None and r.privacy in {m.value for m in PrivacyMode}]
    return strictest(requested, *recorded)
