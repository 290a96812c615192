"""The comparison of two stored runs, computed once for every renderer.

The verdict is the gate's own (:func:`goldeneval.history.comparison.compare_pair` for two
named runs, :func:`~goldeneval.history.comparison.compare_with_history` for a run against the
baseline its series chooses), so ``goldeneval compare`` never decides differently from
``--fail-on-regression`` or the ``no_regression`` check.  Around it the comparison gathers
what a person must see to act: every rate and rank metric with its change, each slice of
both runs, the series' trend, and per question both runs' outcomes, top documents, the rank
of the first relevant document, what was judged, and (answer runs) both answers with their
grades and reasons.

Which questions flipped comes from the paired comparison (:func:`goldeneval.core.stats.paired_comparison`,
the verdict's own where there is a numeric verdict).  On a ``mismatch`` or ``unknown`` state
there is none: the shared questions are still compared with the same function and marked
*informational*, so a person sees what moved without a verdict being claimed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

import numpy as np

from goldeneval.core.errors import InputError
from goldeneval.core.kinds import SlicedDetails
from goldeneval.core.privacy import PrivacyMode, strictest
from goldeneval.core.records import SliceRates, StoredRun
from goldeneval.core.regression import ComparisonState, RegressionVerdict
from goldeneval.core.stats import PairedComparison, Verdicts, paired_comparison
from goldeneval.report.sources import DocumentInfo, Sources
from goldeneval.store import Store

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
    "build_comparison",
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


# --------------------------------------------------------------------------- per kind


@dataclass(frozen=True)
class _Items:
    """A run's questions as the comparison reads them, whatever its kind."""

    ids: list[str]
    forms: list[str | None]
    hard_classes: list[str | None]
    sides: list[Side]
    rates: tuple[str, ...]
    rate_columns: tuple[str, ...]
    metrics: Mapping[str, float]


def _first_relevant(
    ids: Sequence[str], lists: Sequence[Sequence[str]] | None, expected: Mapping[str, frozenset[str]]
) -> list[int | None]:
    if lists is None or not expected:
        return [None] * len(ids)
    found: list[int | None] = []
    for question, documents in zip(ids, lists, strict=True):
        relevant = expected.get(question)
        rank = next((i + 1 for i, d in enumerate(documents) if relevant and d in relevant), None)
        found.append(rank)
    return found


def _relevant_shown(
    ids: Sequence[str], tops: Sequence[Sequence[str]] | None, expected: Mapping[str, frozenset[str]]
) -> list[tuple[int, ...] | None]:
    """Per question, the ranks of its shown documents that are expected (None: not at hand)."""
    if tops is None or not expected:
        return [None] * len(ids)
    return [
        tuple(rank for rank, document in enumerate(top, 1) if document in expected.get(question, ()))
        for question, top in zip(ids, tops, strict=True)
    ]


def _retrieval_items(run: StoredRun, sources: Sources) -> _Items:
    from goldeneval.retrieval.details import RetrievalDetails

    details = run.details_as(RetrievalDetails)
    columns = details.columns
    lists = columns.document_lists() if sources.expected else None
    tops = columns.top_documents(SHOWN_DOCUMENTS)
    first = _first_relevant(columns.id, lists, sources.expected)
    relevant = _relevant_shown(columns.id, tops, sources.expected)
    unjudged = columns.unjudged_ranks
    sides = [
        Side(
            status=columns.status[i],
            outcomes=(columns.top1_hit[i], columns.top3_hit[i]),
            documents=None if tops is None else tuple(tops[i]),
            first_relevant=first[i],
            depth=columns.depth[i],
            unjudged=None if unjudged is None else tuple(unjudged[i]),
            relevant=relevant[i],
            error=columns.error[i],
        )
        for i in range(len(columns))
    ]
    names = details.rate_names
    return _Items(
        list(columns.id),
        list(columns.form),
        list(columns.hard_class),
        sides,
        (names["pass_rate"], names["mean_score"]),
        ("pass_rate", "mean_score"),
        dict(details.aggregates.metrics),
    )


def _prompt_items(run: StoredRun) -> _Items:
    from goldeneval.answers.details import PromptDetails

    details = run.details_as(PromptDetails)
    sides = [
        Side(
            status=p.status,
            outcomes=(p.passed,),
            documents=None if p.documents is None else tuple(p.documents[:SHOWN_DOCUMENTS]),
            answer=p.answer,
            score=p.score,
            reason=p.reason or _failed_assertions(p.assertions),
            error=p.error,
        )
        for p in details.prompts
    ]
    return _Items(
        [p.id for p in details.prompts],
        [p.form for p in details.prompts],
        [p.hard_class for p in details.prompts],
        sides,
        (details.rate_names["pass_rate"],),
        ("pass_rate",),
        {},
    )


def _failed_assertions(assertions: Sequence[Any]) -> str | None:
    """Why assertions graded an answer down, where no judge or reference gave a reason: each
    failed assertion's message (None under ``metadata_only``, which keeps no message)."""
    failed = [f"{a.type}: {a.message}" for a in assertions if not a.passed and a.message]
    return "; ".join(failed) or None


def _items(run: StoredRun, sources: Sources) -> tuple[str, _Items]:
    kind = getattr(run.details, "kind", None) or "retrieval"
    if kind == "retrieval":
        return kind, _retrieval_items(run, sources)
    return kind, _prompt_items(run)


def _withheld(items: _Items) -> _Items:
    """The items without content (``metadata_only``): ids, outcomes, ranks and scores only."""
    sides = [
        Side(
            side.status,
            side.outcomes,
            None,
            side.first_relevant,
            side.depth,
            side.unjudged,
            score=side.score,
            error=None if side.error is None else "error (message withheld: metadata_only)",
        )
        for side in items.sides
    ]
    return _Items(items.ids, items.forms, items.hard_classes, sides, items.rates, items.rate_columns, items.metrics)


# --------------------------------------------------------------------------- building


def _paired(
    verdict: RegressionVerdict, current: StoredRun, earlier: StoredRun | None, items: _Items
) -> list[PairedComparison]:
    """The verdict's paired comparisons, or (no numeric verdict) the same computed for information."""
    if verdict.paired or earlier is None:
        return list(verdict.paired)
    computed = []
    for name, column in zip(items.rates, items.rate_columns, strict=True):
        before, now = earlier.paired_outcomes(column), current.paired_outcomes(column)
        if before is not None and now is not None:
            found = paired_comparison(name, before, now)
            if found is not None:
                computed.append(found)
    return computed


def _measures(current: StoredRun, earlier: StoredRun | None, now: _Items, then: _Items | None) -> list[MeasureChange]:
    names = current.details.rate_names
    measures = [
        MeasureChange(
            names[column], None if earlier is None else getattr(earlier, column), getattr(current, column), True
        )
        for column in ("pass_rate", "mean_score")
    ]
    metric_names = list(now.metrics) + [m for m in (then.metrics if then else {}) if m not in now.metrics]
    for metric in metric_names:
        measures.append(
            MeasureChange(metric, None if then is None else then.metrics.get(metric), now.metrics.get(metric), False)
        )
    return measures


def _slices(store: Store, current: StoredRun, earlier: StoredRun | None, items: _Items) -> list[SliceRow]:
    now = {(s.kind, s.value): s for s in store.slices(current.id)}
    then = {(s.kind, s.value): s for s in store.slices(earlier.id)} if earlier is not None else {}
    keys = list(now) + [key for key in then if key not in now]
    paired = _slice_paired(current, earlier, items, {kind for kind, _ in keys})
    return [
        SliceRow(kind, value, then.get((kind, value)), now.get((kind, value)), paired.get((kind, value), ()))
        for kind, value in keys
    ]


def _slice_paired(
    current: StoredRun, earlier: StoredRun | None, items: _Items, kinds: set[str]
) -> dict[tuple[str, str], tuple[PairedComparison, ...]]:
    """Each slice's paired comparison per binary rate, as the gate tests a slice under
    ``--max-p`` (:func:`goldeneval.core.regression.detect_regression`): the questions the current
    run has in the slice, paired with the earlier run by id."""
    details = current.details
    if earlier is None or not isinstance(details, SlicedDetails):
        return {}
    found: dict[tuple[str, str], list[PairedComparison]] = {}
    for name, column in zip(items.rates, items.rate_columns, strict=True):
        before, now = earlier.paired_outcomes(column), current.paired_outcomes(column)
        if before is None or now is None:
            continue
        for kind in sorted(kinds):
            labels = details.slice_of(kind)
            if labels is None:
                continue
            earlier_labels = np.asarray([labels.get(q) for q in before.ids], dtype=object)
            current_labels = np.asarray([labels.get(q) for q in now.ids], dtype=object)
            for value in sorted({label for label in labels.values() if label is not None}):
                picked_before, picked_now = earlier_labels == value, current_labels == value
                comparison = paired_comparison(
                    name,
                    Verdicts(
                        [q for q, keep in zip(before.ids, picked_before, strict=True) if keep],
                        before.hits[picked_before],
                    ),
                    Verdicts([q for q, keep in zip(now.ids, picked_now, strict=True) if keep], now.hits[picked_now]),
                )
                if comparison is not None:
                    found.setdefault((kind, value), []).append(comparison)
    return {key: tuple(value) for key, value in found.items()}


def _trend(store: Store, current: StoredRun) -> list[TrendPoint]:
    runs = [r for r in store.list_runs(set_id=current.set_id, model=current.model) if r.grader == current.grader]
    runs.reverse()  # oldest first
    points: list[TrendPoint] = []
    for run in runs:
        before = points[-1].benchmark_fingerprint if points else None
        broken = bool(points) and (run.benchmark_fingerprint is None or run.benchmark_fingerprint != before)
        points.append(
            TrendPoint(
                run.id, run.created_at, run.status, run.pass_rate, run.mean_score, run.benchmark_fingerprint, broken
            )
        )
    return points


def _flip(
    question: str, failing: Mapping[str, list[str]], passing: Mapping[str, list[str]]
) -> tuple[Flip, tuple[str, ...]]:
    lost, gained = failing.get(question, []), passing.get(question, [])
    if lost:
        return Flip.NEWLY_FAILING, tuple(lost)
    if gained:
        return Flip.NEWLY_PASSING, tuple(gained)
    return Flip.UNCHANGED, ()


def _question_rows(
    now: _Items, then: _Items | None, paired: Sequence[PairedComparison], sources: Sources, informational: bool
) -> list[QuestionRow]:
    failing: dict[str, list[str]] = {}
    passing: dict[str, list[str]] = {}
    for comparison in paired:
        for question in comparison.newly_failing:
            failing.setdefault(question, []).append(comparison.rate)
        for question in comparison.newly_passing:
            passing.setdefault(question, []).append(comparison.rate)
    earlier_at = {question: i for i, question in enumerate(then.ids)} if then is not None else {}
    rows: list[QuestionRow] = []
    for i, question in enumerate(now.ids):
        j = earlier_at.pop(question, None)
        before = then.sides[j] if then is not None and j is not None else None
        current = now.sides[i]
        flipped: tuple[str, ...] = ()
        if then is None:
            flip, flipped = Flip.UNCHANGED, ()
        elif before is None or before.status == "error":
            flip, flipped = Flip.ONLY_CURRENT, ()
        elif current.status == "error":
            flip, flipped = Flip.ONLY_EARLIER, ()
        else:
            flip, flipped = _flip(question, failing, passing)
        rows.append(
            QuestionRow(
                question,
                sources.texts.get(question),
                now.forms[i],
                now.hard_classes[i],
                before,
                current,
                flip,
                flipped,
                informational,
                _expected(sources, question),
            )
        )
    if then is not None:
        for question, j in earlier_at.items():  # questions the current run does not have
            rows.append(
                QuestionRow(
                    question,
                    sources.texts.get(question),
                    then.forms[j],
                    then.hard_classes[j],
                    then.sides[j],
                    None,
                    Flip.ONLY_EARLIER,
                    (),
                    informational,
                    _expected(sources, question),
                )
            )
    return rows


def _expected(sources: Sources, question: str) -> tuple[str, ...] | None:
    found = sources.expected.get(question) if sources.expected else None
    return None if found is None else tuple(sorted(found))


def _shown_documents(rows: Sequence[QuestionRow], sources: Sources) -> dict[str, DocumentInfo]:
    shown: dict[str, DocumentInfo] = {}
    if sources.corpus is None:
        return shown
    for row in rows:
        documents = [*(row.expected or ())]
        for side in (row.earlier, row.current):
            documents += (side.documents or ()) if side is not None else ()
        for document in documents:
            if document not in shown:
                info = sources.document(document)
                if info is not None:
                    shown[document] = info
    return shown


def build_comparison(
    store: Store,
    current: StoredRun,
    earlier: StoredRun | None,
    verdict: RegressionVerdict,
    sources: Sources,
    *,
    privacy: PrivacyMode = PrivacyMode.FULL,
    trend: bool = True,
) -> RunComparison:
    """The comparison of ``current`` with ``earlier`` (None: the run alone, a baseline),
    around ``verdict`` (the gate's verdict of the pair).  ``sources`` give the question text and
    the documents' titles; ``privacy`` is what the reader may see (made no looser than the
    runs' own modes).  ``trend`` reads every stored run of the current run's series."""
    if earlier is not None and earlier.grader != current.grader:
        raise InputError(
            f"run {earlier.id[:12]} is graded by {earlier.grader!r} and run {current.id[:12]} by "
            f"{current.grader!r}: runs of different kinds or graders are not compared"
        )
    if earlier is not None and earlier.set_id != current.set_id:
        raise InputError(
            f"run {earlier.id[:12]} measured set {earlier.set_id!r} and run {current.id[:12]} set "
            f"{current.set_id!r}: runs of different sets are not compared"
        )
    shown = comparison_privacy(privacy, current, earlier)
    if shown is PrivacyMode.METADATA_ONLY and (sources.texts or sources.corpus is not None):
        sources = Sources(notes=("metadata_only: question text, document ids, titles and answers are not shown",))
    kind, now = _items(current, sources)
    then = _items(earlier, sources)[1] if earlier is not None else None
    if shown is PrivacyMode.METADATA_ONLY:
        now, then = _withheld(now), None if then is None else _withheld(then)
    informational = earlier is not None and verdict.state is not ComparisonState.COMPARABLE
    paired = _paired(verdict, current, earlier, now)
    rows = _question_rows(now, then, paired, sources, informational)
    notes = list(sources.notes)
    if informational:
        notes.insert(
            0,
            f"no numeric verdict ({verdict.state.value}): the questions are compared for information only",
        )
        if earlier is not None and earlier.label_digest != current.label_digest:
            notes.insert(
                1,
                "the labels changed between the runs; a run records its labels' digest, not each question's, "
                "so every question both runs have is compared as it is (its outcome may have moved with its labels)",
            )
    return RunComparison(
        current=current,
        earlier=earlier,
        verdict=verdict,
        kind=kind,
        rates=now.rates,
        rate_names=current.details.rate_names,
        paired=tuple(paired),
        measures=tuple(_measures(current, earlier, now, then)),
        slices=tuple(_slices(store, current, earlier, now)),
        questions=tuple(rows),
        documents=_shown_documents(rows, sources) if shown is PrivacyMode.FULL else {},
        trend=tuple(_trend(store, current)) if trend else (),
        privacy=shown,
        notes=tuple(notes),
    )
