"""Label coverage in a verdict (ADR-215): how much of each ranking carries a judgment.

Labels built from one system's results are biased against the next: a run whose top-3 holds
documents nobody judged can look like a regression when it is not.  A kind whose details
know how much of each ranking was judged (:class:`LabelCoverage`: retrieval runs of a set
with judged negatives) gets a :class:`CoverageNote` on its verdict, and with
``min_judged`` a comparison whose candidate falls below it gets no numeric verdict
(:func:`labels_incomplete`); a baseline below it is short of labels
(:func:`baseline_labels_short`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from goldeneval.core.gate import EPSILON

if TYPE_CHECKING:
    from goldeneval.core.records import StoredRun

__all__ = [
    "BASELINE_SHORT",
    "COVERAGE_CUTOFF",
    "LABELS_INCOMPLETE",
    "CoverageNote",
    "LabelCoverage",
    "LabelsShort",
    "baseline_labels_short",
    "coverage_note",
    "labels_incomplete",
    "overlapping_bounds",
]

COVERAGE_CUTOFF = 3
"""The judged share a verdict reads: judged@3, what the gated top-3 looked at."""
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
        if abs(now_low - then_low) <= EPSILON:
            continue  # no difference to decide
        low_a, high_a = sorted((then_low, then_high))
        low_b, high_b = sorted((now_low, now_high))
        if low_a <= high_b + EPSILON and low_b <= high_a + EPSILON:
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
    if share + EPSILON >= min_judged:
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
