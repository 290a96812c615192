"""What a run measured, as Python objects: one :class:`QuestionResult` per question, the
rates of groups of questions (:class:`RateSummary`, :class:`Aggregates`) and the judged@k
means (:class:`JudgedSummary`).

These are the shapes the store's records, the report and the Dagster tables read; the
scoring itself works on arrays (:mod:`goldeneval.retrieval.scoring`) and builds them from
its columns (:func:`aggregate_columns`, :func:`summarise_judged`), or from results read back
from a hits table (:func:`aggregate`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from goldeneval.core.forms import NO_HARD_CLASS
from goldeneval.retrieval.golden import GoldenQuestion
from goldeneval.retrieval.protocol import TOP_K, judged_name

__all__ = [
    "Aggregates",
    "JudgedSummary",
    "QuestionResult",
    "QuestionStatus",
    "RateSummary",
    "aggregate",
    "aggregate_columns",
    "error_result",
    "failed_result",
    "summarise_judged",
]


class QuestionStatus(StrEnum):
    OK = "ok"
    ERROR = "error"


@dataclass(frozen=True)
class QuestionResult:
    """What the evaluator measured for one question."""

    question_id: str
    form: str
    hard_class: str | None
    expected: frozenset[str]
    returned_ids: tuple[str, ...]
    """The raw overfetched ranking, as the retriever returned it."""
    documents: tuple[str, ...]
    """Distinct document ids in rank order (first occurrences), to the measurement depth."""
    top1_hit: bool
    top3_hit: bool
    latency_ms: float
    status: QuestionStatus = QuestionStatus.OK
    error: str | None = None
    metrics: Mapping[str, float] = field(default_factory=dict)
    judged: bool = True
    """Whether it has rank metrics: a question without expected documents has none."""
    reached: int | None = None
    """Distinct documents reached, when the documents themselves are withheld (tables
    written in ``metadata_only``); otherwise :attr:`depth` counts :attr:`documents`."""
    judged_at: Mapping[str, float] = field(default_factory=dict)
    """``judged@k`` -> the share of the first k distinct documents that carry a judgment,
    where the set records judged negatives and the share is defined
    (:func:`~goldeneval.retrieval.protocol.judged_cutoffs`)."""
    unjudged_ranks: tuple[int, ...] = ()
    """Ranks among the ``TOP_K`` best distinct documents that carry no judgment (the same runs)."""
    unjudged_relevant: Mapping[str, float] = field(default_factory=dict)
    """Each rank metric as it would be with every unjudged document of its top k judged
    relevant (:func:`goldeneval.retrieval.incomplete.if_unjudged_relevant`; the same runs)."""

    @property
    def top_documents(self) -> tuple[str, ...]:
        """The ``TOP_K`` best distinct documents: what the top-3 verdict looked at."""
        return self.documents[:TOP_K]

    @property
    def scored(self) -> bool:
        return self.status is QuestionStatus.OK

    @property
    def depth(self) -> int:
        """How many distinct documents the ranking reached (the rank metrics saw these)."""
        return self.reached if self.reached is not None else len(self.documents)


@dataclass(frozen=True)
class JudgedSummary:
    """judged@k of a run: the mean share of each cutoff overall and by form, over the scored
    questions where it is defined (a judgment and a non-empty ranking)."""

    cutoffs: tuple[int, ...]
    measured: int
    """Questions the overall means are taken over."""
    overall: Mapping[str, float | None]
    by_form: Mapping[str, Mapping[str, float | None]]
    bounds: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)
    """Each rank metric's mean with every unjudged document of its top k not relevant (the
    metric as reported) and with every one relevant, over the questions the metric's mean is
    over; empty on condensed lists."""

    def to_dict(self) -> dict[str, object]:
        return {
            "cutoffs": list(self.cutoffs),
            "measured": self.measured,
            "overall": dict(self.overall),
            "by_form": {form: dict(values) for form, values in self.by_form.items()},
            **({"bounds": {name: list(ends) for name, ends in self.bounds.items()}} if self.bounds else {}),
        }


def _mean(values: np.ndarray) -> float | None:
    defined = values[~np.isnan(values)]
    # fsum, as the metrics' means: independent of the order of the questions
    return math.fsum(defined.tolist()) / defined.size if defined.size else None


def _mean_with(values: np.ndarray, extra_zeros: int) -> float | None:
    defined = values[~np.isnan(values)]
    count = defined.size + extra_zeros
    return math.fsum(defined.tolist()) / count if count else None


def summarise_judged(
    cutoffs: Sequence[int],
    values: Mapping[str, np.ndarray],
    forms: Sequence[str],
    *,
    metrics: Mapping[str, np.ndarray] | None = None,
    ends: Mapping[str, np.ndarray] | None = None,
    extra_zeros: int = 0,
) -> JudgedSummary:
    """The :class:`JudgedSummary` of per-question shares (NaN: undefined or errored), with
    each metric's bounds from its per-question ``metrics`` and ``ends`` (the values with the
    unjudged documents relevant), averaged as the metric is (``extra_zeros``: the queries
    ``all-judged`` counts 0 without a row)."""
    bounds = {
        name: (_mean_with(metrics[name], extra_zeros), _mean_with(column, extra_zeros))
        for name, column in (ends or {}).items()
        if metrics is not None and name in metrics
    }
    cutoffs = tuple(cutoffs)
    first = values[judged_name(cutoffs[0])] if cutoffs else np.empty(0)
    form_array = np.asarray(forms, dtype=object)
    return JudgedSummary(
        cutoffs=cutoffs,
        measured=int((~np.isnan(first)).sum()),
        overall={name: _mean(column) for name, column in values.items()},
        by_form={
            form: {name: _mean(column[form_array == form]) for name, column in values.items()}
            for form in sorted(set(forms))
        },
        bounds=bounds,
    )


def error_result(question: GoldenQuestion, message: str, latency_ms: float) -> QuestionResult:
    """A question the retriever failed on: no verdict, not a miss."""
    return failed_result(question.id, question.form.value, question.hard_class, question.expected, message, latency_ms)


def failed_result(
    question_id: str, form: str, hard_class: str | None, expected: frozenset[str], message: str, latency_ms: float
) -> QuestionResult:
    return QuestionResult(
        question_id=question_id,
        form=form,
        hard_class=hard_class,
        expected=expected,
        returned_ids=(),
        documents=(),
        top1_hit=False,
        top3_hit=False,
        latency_ms=latency_ms,
        status=QuestionStatus.ERROR,
        error=message,
        judged=bool(expected),
    )


@dataclass(frozen=True)
class RateSummary:
    """Hit counts and rates of a group of questions; rates exclude errored questions."""

    questions: int
    errors: int
    top1_hits: int
    top3_hits: int

    @property
    def scored(self) -> int:
        return self.questions - self.errors

    @property
    def top1_rate(self) -> float | None:
        return self.top1_hits / self.scored if self.scored else None

    @property
    def top3_rate(self) -> float | None:
        return self.top3_hits / self.scored if self.scored else None

    def to_dict(self) -> dict[str, int | float | None]:
        return {
            "questions": self.questions,
            "scored": self.scored,
            "errors": self.errors,
            "top1_hits": self.top1_hits,
            "top3_hits": self.top3_hits,
            "top1_rate": self.top1_rate,
            "top3_rate": self.top3_rate,
        }


@dataclass(frozen=True)
class Aggregates:
    overall: RateSummary
    by_form: Mapping[str, RateSummary]
    by_hard_class: Mapping[str, RateSummary]
    metrics: Mapping[str, float]
    """Mean of each rank metric over the scored questions it is defined for."""

    def to_dict(self) -> dict[str, object]:
        return {
            "overall": self.overall.to_dict(),
            "by_form": {k: v.to_dict() for k, v in self.by_form.items()},
            "by_hard_class": {k: v.to_dict() for k, v in self.by_hard_class.items()},
            "metrics": dict(self.metrics),
        }


def aggregate(results: Sequence[QuestionResult], extra_zeros: int = 0) -> Aggregates:
    """:func:`aggregate_columns` of per-question results (read back from a hits table)."""
    count = len(results)
    ok = np.fromiter((r.scored for r in results), dtype=np.bool_, count=count)
    top1 = np.fromiter((r.scored and r.top1_hit for r in results), dtype=np.bool_, count=count)
    top3 = np.fromiter((r.scored and r.top3_hit for r in results), dtype=np.bool_, count=count)
    names: dict[str, None] = {}
    for result in results:
        if result.scored:
            names.update(dict.fromkeys(result.metrics))
    metrics = {
        name: np.fromiter(
            (r.metrics.get(name, math.nan) if r.scored else math.nan for r in results), dtype=np.float64, count=count
        )
        for name in names
    }
    forms, hard_classes = [r.form for r in results], [r.hard_class for r in results]
    return aggregate_columns(ok, top1, top3, forms, hard_classes, metrics, extra_zeros)


def aggregate_columns(
    ok: np.ndarray,
    top1: np.ndarray,
    top3: np.ndarray,
    forms: Sequence[str],
    hard_classes: Sequence[str | None],
    metrics: Mapping[str, np.ndarray],
    extra_zeros: int = 0,
) -> Aggregates:
    """Rates overall, by form and by hard class, and each metric's mean over the scored
    questions it is defined for (NaN: undefined or errored), from one array per quantity.

    Hits count only where ``ok``; a group's rates leave its errored questions out.
    ``extra_zeros``: queries outside the questions that count 0 in every mean (trec_eval's
    rule, ``all-judged``: the source's queries judged only with grade 0).
    """
    top1 = top1 & ok
    top3 = top3 & ok
    means: dict[str, float] = {}
    for name, values in metrics.items():
        defined = values[~np.isnan(values) & ok]
        if defined.size:
            # fsum, as statistics.fmean: the mean does not depend on the order of the questions.
            means[name] = math.fsum(defined.tolist()) / (defined.size + extra_zeros)
    return Aggregates(
        overall=RateSummary(len(ok), len(ok) - int(ok.sum()), int(top1.sum()), int(top3.sum())),
        by_form=_groups(forms, ok, top1, top3),
        by_hard_class=_groups([h or NO_HARD_CLASS for h in hard_classes], ok, top1, top3),
        metrics=means,
    )


def _groups(keys: Sequence[str], ok: np.ndarray, top1: np.ndarray, top3: np.ndarray) -> dict[str, RateSummary]:
    """The rates of each group of questions that share a key, sorted by key."""
    codes: dict[str, int] = {}
    code = np.fromiter((codes.setdefault(key, len(codes)) for key in keys), dtype=np.int64, count=len(keys))
    size = len(codes)
    questions = np.bincount(code, minlength=size)
    scored = np.bincount(code, weights=ok, minlength=size)
    hits1 = np.bincount(code, weights=top1, minlength=size)
    hits3 = np.bincount(code, weights=top3, minlength=size)
    return {
        key: RateSummary(
            questions=int(questions[c]),
            errors=int(questions[c] - scored[c]),
            top1_hits=int(hits1[c]),
            top3_hits=int(hits3[c]),
        )
        for key, c in sorted(codes.items())
    }
