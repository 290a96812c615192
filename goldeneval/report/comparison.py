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

import numpy as np

from goldeneval.core.errors import InputError
from goldeneval.core.gate import ComparisonState
from goldeneval.core.kinds import SlicedDetails
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.records import StoredRun
from goldeneval.core.regression import RegressionVerdict
from goldeneval.core.stats import PairedComparison, Verdicts, paired_comparison
from goldeneval.report.items import Items, items_of, withheld
from goldeneval.report.model import (
    Flip,
    MeasureChange,
    QuestionRow,
    RunComparison,
    SliceRow,
    TrendPoint,
    comparison_privacy,
)
from goldeneval.report.sources import DocumentInfo, Sources
from goldeneval.store import Store

__all__ = ["build_comparison"]


# --------------------------------------------------------------------------- building


def _paired(
    verdict: RegressionVerdict, current: StoredRun, earlier: StoredRun | None, items: Items
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


def _measures(current: StoredRun, earlier: StoredRun | None, now: Items, then: Items | None) -> list[MeasureChange]:
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


def _slices(store: Store, current: StoredRun, earlier: StoredRun | None, items: Items) -> list[SliceRow]:
    now = {(s.kind, s.value): s for s in store.slices(current.id)}
    then = {(s.kind, s.value): s for s in store.slices(earlier.id)} if earlier is not None else {}
    keys = list(now) + [key for key in then if key not in now]
    paired = _slice_paired(current, earlier, items, {kind for kind, _ in keys})
    return [
        SliceRow(kind, value, then.get((kind, value)), now.get((kind, value)), paired.get((kind, value), ()))
        for kind, value in keys
    ]


def _slice_paired(
    current: StoredRun, earlier: StoredRun | None, items: Items, kinds: set[str]
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
    now: Items, then: Items | None, paired: Sequence[PairedComparison], sources: Sources, informational: bool
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
    kind, now = items_of(current, sources)
    then = items_of(earlier, sources)[1] if earlier is not None else None
    if shown is PrivacyMode.METADATA_ONLY:
        now, then = withheld(now), None if then is None else withheld(then)
    informational = earlier is not None and verdict.state is not ComparisonState.COMPARABLE
    paired = _paired(verdict, current, earlier, now)
    rows = _question_rows(now, then, paired, sources, informational)
    notes = list(sources.notes)
    if informational:
        notes.insert(
            0,
            f"no numeric verdict ({verdict.state.value}): the questions are compared for information only",
        )
        change = verdict.benchmark_change
        if change is not None:
            notes.insert(
                1,
                f"the verdict's informational comparison covers the {len(change.unchanged)} questions whose labels "
                "and judged documents did not change (the benchmarks' manifests say which); the questions below are "
                "every question both runs have, compared as they are",
            )
        elif earlier is not None and earlier.label_digest != current.label_digest:
            notes.insert(
                1,
                "the labels changed between the runs and the store kept no manifest of one of the benchmarks, so "
                "every question both runs have is compared as it is (its outcome may have moved with its labels)",
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
