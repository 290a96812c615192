"""Scoring protocol v1 (ADR-072, decision 3): distinct-document top-1/top-3 hits.

The protocol, exactly:

1. ask the retriever for ``TOP_K * OVERFETCH_MULTIPLIER`` raw ids, so that a chunk-grained
   ranking does not collapse to fewer than ``TOP_K`` documents;
2. map each id to its document id and collapse duplicates to their first occurrence;
3. top-1 hit: the first distinct document is expected; top-3 hit: any of the first three is;
4. a question with an empty expected set is a hit (both) only when nothing is returned;
5. a retriever error or timeout is an ``error``, never a miss: it is left out of every rate
   and makes the run ``incomplete``.

Rates are aggregated overall, by form and by hard class, each with its question count.

Separately from the protocol, the reported rank metrics (:mod:`goldeneval.metrics`) look at
the question's distinct documents to the run's *measurement depth*: the evaluator asks for
``max(TOP_K * OVERFETCH_MULTIPLIER, depth)`` raw ids and over-fetches again while fewer
distinct documents than the depth come back and the retriever has more.  The protocol's
hits are still taken from the first ``TOP_K * OVERFETCH_MULTIPLIER`` raw ids of that
ranking (a ranking must not change its head when asked for more, as any top-k ranking does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from statistics import fmean

from goldeneval.golden import GoldenQuestion
from goldeneval.metrics import DEFAULT_METRICS, DEFAULT_RELEVANCE_LEVEL, Metric, parse_metrics, question_metrics

__all__ = [
    "DEFAULT_HIT_CUTOFFS",
    "GRADER_ID",
    "NO_HARD_CLASS",
    "OVERFETCH_MULTIPLIER",
    "SCORING_PROTOCOL_REVISION",
    "TOP_K",
    "Aggregates",
    "QuestionResult",
    "QuestionStatus",
    "RateSummary",
    "aggregate",
    "collapse_to_documents",
    "error_result",
    "run_metrics",
    "score_question",
]

TOP_K = 3
"""The deepest hit rate the protocol gates on."""
OVERFETCH_MULTIPLIER = 10
"""Raw ids asked for per question = TOP_K * OVERFETCH_MULTIPLIER."""
SCORING_PROTOCOL_REVISION = "retrieval-hit-rate/v1"
"""Changes whenever a rule above changes; part of the benchmark identity."""
GRADER_ID = "retrieval_hit_rate"
"""The store's grader column for retrieval runs (keeps them apart from prompt grading)."""
DEFAULT_HIT_CUTOFFS: tuple[int, ...] = (1, 3, 5, 10)
NO_HARD_CLASS = "(none)"
"""Breakdown key of questions without a hard class."""


def raw_limit() -> int:
    return TOP_K * OVERFETCH_MULTIPLIER


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


def run_metrics(
    hit_cutoffs: Sequence[int] = DEFAULT_HIT_CUTOFFS, metrics: Sequence[Metric] = DEFAULT_METRICS
) -> tuple[Metric, ...]:
    """The metrics a run reports: ``hit@k`` for each hit cutoff (``--hit-k``), then
    ``metrics`` (``--metrics``), each once."""
    names = [f"hit@{k}" for k in hit_cutoffs] + [metric.name for metric in metrics]
    return parse_metrics(names)


def collapse_to_documents(returned_ids: Iterable[str], to_document: Callable[[str], str]) -> tuple[str, ...]:
    """Document ids in rank order, each kept at its first occurrence only."""
    seen: dict[str, None] = {}
    for returned_id in returned_ids:
        seen.setdefault(to_document(returned_id), None)
    return tuple(seen)


def score_question(
    question: GoldenQuestion,
    returned_ids: Sequence[str],
    latency_ms: float,
    to_document: Callable[[str], str],
    metrics: Sequence[Metric] | None = None,
    *,
    depth: int | None = None,
    relevance_level: int = DEFAULT_RELEVANCE_LEVEL,
) -> QuestionResult:
    """Apply the protocol to the head of one question's raw ranking, and the rank
    ``metrics`` (default: :func:`run_metrics`) to its distinct documents, kept to ``depth``
    (default: all of them)."""
    metrics = run_metrics() if metrics is None else metrics
    head = collapse_to_documents(returned_ids[: raw_limit()], to_document)
    documents = collapse_to_documents(returned_ids, to_document)[:depth]
    if question.expected:
        top1 = bool(head) and head[0] in question.expected
        top3 = any(doc in question.expected for doc in head[:TOP_K])
    else:
        top1 = top3 = not head
    return QuestionResult(
        question_id=question.id,
        form=question.form.value,
        hard_class=question.hard_class,
        expected=question.expected,
        returned_ids=tuple(returned_ids),
        documents=documents,
        top1_hit=top1,
        top3_hit=top3,
        latency_ms=latency_ms,
        metrics=question_metrics(documents, question.judgements, metrics, relevance_level),
        judged=bool(question.expected),
    )


def error_result(question: GoldenQuestion, message: str, latency_ms: float) -> QuestionResult:
    """A question the retriever failed on: no verdict, not a miss."""
    return QuestionResult(
        question_id=question.id,
        form=question.form.value,
        hard_class=question.hard_class,
        expected=question.expected,
        returned_ids=(),
        documents=(),
        top1_hit=False,
        top3_hit=False,
        latency_ms=latency_ms,
        status=QuestionStatus.ERROR,
        error=message,
        judged=bool(question.expected),
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

    @classmethod
    def of(cls, results: Iterable[QuestionResult]) -> RateSummary:
        items = list(results)
        scored = [r for r in items if r.scored]
        return cls(
            questions=len(items),
            errors=len(items) - len(scored),
            top1_hits=sum(r.top1_hit for r in scored),
            top3_hits=sum(r.top3_hit for r in scored),
        )

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


def _group(results: Sequence[QuestionResult], key: Callable[[QuestionResult], str]) -> dict[str, RateSummary]:
    keys = sorted({key(r) for r in results})
    return {k: RateSummary.of(r for r in results if key(r) == k) for k in keys}


def aggregate(results: Sequence[QuestionResult]) -> Aggregates:
    names: dict[str, None] = {}
    for result in results:
        names.update(dict.fromkeys(result.metrics))
    means = {
        name: fmean(r.metrics[name] for r in results if r.scored and name in r.metrics)
        for name in names
        if any(r.scored and name in r.metrics for r in results)
    }
    return Aggregates(
        overall=RateSummary.of(results),
        by_form=_group(results, lambda r: r.form),
        by_hard_class=_group(results, lambda r: r.hard_class or NO_HARD_CLASS),
        metrics=means,
    )
