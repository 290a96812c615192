"""One evaluated run of a set against a retriever (:class:`RetrievalRun`), and what the store
keeps of it: the typed details (:meth:`RetrievalRun.details`, written straight from the
scoring arrays) and the ADR-060 result row (:meth:`RetrievalRun.to_record`).

The evaluator (:mod:`goldeneval.retrieval.evaluation`) makes one; the Dagster tables and the
answers' retrieval step read one back from a hits table.  Neither asks nor scores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from goldeneval.core.manifest import BenchmarkManifest
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.provenance import Provenance, benchmark_fingerprint, variant_fingerprint
from goldeneval.core.records import RunRecord, SliceRates, record_of
from goldeneval.retrieval.details import (
    COLUMNAR_FORMAT_VERSION,
    COVERAGE_FORMAT_VERSION,
    AggregatesDetail,
    JudgedDetail,
    QuestionColumns,
    QuestionDetail,
    RetrievalDetails,
)
from goldeneval.retrieval.metrics import (
    DEFAULT_AVERAGE_OVER,
    DEFAULT_RELEVANCE_LEVEL,
    AverageOver,
    Metric,
    measurement_depth,
    parse_metrics,
)
from goldeneval.retrieval.protocol import (
    DEFAULT_HIT_CUTOFFS,
    GRADER_ID,
    OVERFETCH_MULTIPLIER,
    TOP_K,
    judged_name,
    run_metrics,
    scoring_protocol,
)
from goldeneval.retrieval.results import Aggregates, JudgedSummary, QuestionResult, RateSummary, summarise_judged
from goldeneval.retrieval.retrievers.base import DEFAULT_CHUNK_SEPARATOR
from goldeneval.retrieval.scored import ScoredAnswers

__all__ = ["RetrievalRun"]


@dataclass(frozen=True)
class RetrievalRun:
    """One evaluated run of a set against a retriever (ADR-072's set evaluation result)."""

    set_id: str
    series: str
    """The series name the run is stored under (the store's ``model`` column)."""
    retriever_id: str
    """The retriever id (registered or ``package.module:factory``) that produced the rankings."""
    results: Sequence[QuestionResult]
    """One result per question, in set order: the evaluator's :class:`ScoredAnswers` (backed
    by arrays, the records built only when read), or records read back from a hits table."""
    aggregates: Aggregates
    started_at: datetime
    provenance: Provenance = field(default_factory=Provenance)
    label_digest: str | None = None
    hit_cutoffs: tuple[int, ...] = field(default=DEFAULT_HIT_CUTOFFS)
    metric_names: tuple[str, ...] = field(default_factory=lambda: tuple(m.name for m in run_metrics()))
    """Every rank metric the run reports (hit@k for the hit cutoffs first), by name."""
    relevance_level: int = DEFAULT_RELEVANCE_LEVEL
    unjudged: tuple[str, ...] = ()
    """Ids of questions the set's source left out for want of a relevant judgement."""
    warnings: tuple[str, ...] = ()
    """What the user should know about this run's input (never stored, shown by each door)."""
    judged_cutoffs: tuple[int, ...] = ()
    """The cutoffs judged@k is reported at; empty when the set records no judged negatives."""
    average_over: AverageOver = DEFAULT_AVERAGE_OVER
    """Which questions each metric's mean is over (:data:`goldeneval.retrieval.metrics.AVERAGE_OVER`)."""
    chunk_separator: str | None = DEFAULT_CHUNK_SEPARATOR
    """Where returned ids were cut to document ids (``''`` or None: kept whole); part of the protocol."""
    judged_only: bool = False
    """Whether the rank metrics were computed on condensed lists (trec_eval -J); part of the protocol."""
    manifest: BenchmarkManifest | None = None
    """The manifest of the benchmark it measured (:mod:`goldeneval.retrieval.manifest`), with
    document ids: filtered by the privacy mode when the run is recorded; None when unknown."""
    errors_reduced: bool = False
    """Whether the results' errors hold only their class already (read back from a
    ``metadata_only`` hits table): reduced again for the store, ``KeyError`` would become
    ``error``, not what the CLI stores for the same evaluation."""

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return parse_metrics(self.metric_names)

    @property
    def depth(self) -> int:
        """The measurement depth: distinct documents kept per question (the deepest cutoff)."""
        return measurement_depth(self.metrics, TOP_K, judged_only=self.judged_only)

    @property
    def unmeasured(self) -> tuple[str, ...]:
        """Scored questions without expected documents: no-answer questions, which count in
        top-1/top-3 but have no rank metrics (trec_eval has no qrels for them)."""
        return tuple(r.question_id for r in self.results if r.scored and not r.judged)

    @property
    def short(self) -> tuple[str, ...]:
        """Scored questions whose ranking ended before the measurement depth: their deepest
        metrics count the missing ranks as misses."""
        depth = self.depth
        return tuple(r.question_id for r in self.results if r.scored and r.depth < depth)

    @property
    def benchmark_fingerprint(self) -> str | None:
        if self.label_digest is None:
            return None
        protocol = scoring_protocol(self.relevance_level, self.average_over, self.chunk_separator, self.judged_only)
        return benchmark_fingerprint(self.provenance.corpus_revision, self.label_digest, protocol)

    @property
    def variant_fingerprint(self) -> str | None:
        return variant_fingerprint(self.provenance)

    @property
    def judged(self) -> JudgedSummary | None:
        """judged@k overall and by form; None when the set records no judged negatives."""
        if not self.judged_cutoffs:
            return None
        names = [judged_name(k) for k in self.judged_cutoffs]
        extra_zeros = len(self.unjudged) if self.average_over == "all-judged" else 0
        if isinstance(self.results, ScoredAnswers):
            values = dict(self.results.judged_at)
            forms: list[str] = self.results.forms
            metrics, ends = self.results.metrics, self.results.unjudged_relevant
        else:
            count = len(self.results)

            def column(name: str, of: Callable[[QuestionResult], Mapping[str, float]]) -> np.ndarray:
                return np.fromiter(
                    (of(r).get(name, np.nan) if r.scored else np.nan for r in self.results),
                    dtype=np.float64,
                    count=count,
                )

            values = {name: column(name, lambda r: r.judged_at) for name in names}
            forms = [r.form for r in self.results]
            bounded = list(dict.fromkeys(name for r in self.results for name in r.unjudged_relevant))
            metrics = {name: column(name, lambda r: r.metrics) for name in bounded}
            ends = {name: column(name, lambda r: r.unjudged_relevant) for name in bounded}
        return summarise_judged(self.judged_cutoffs, values, forms, metrics=metrics, ends=ends, extra_zeros=extra_zeros)

    @property
    def complete(self) -> bool:
        return self.aggregates.overall.errors == 0

    @property
    def status(self) -> str:
        return "complete" if self.complete else "incomplete"

    def details(self, privacy: PrivacyMode = PrivacyMode.FULL, *, tables_run_id: str | None = None) -> RetrievalDetails:
        """The typed details record the store keeps, filtered by the privacy mode."""
        judged = self.judged
        if isinstance(self.results, ScoredAnswers):
            questions = _columns_of_scored(self.results)
        else:
            questions = QuestionColumns.from_rows(_records(self.results, self.depth, judged is not None))
        if privacy is PrivacyMode.METADATA_ONLY:
            # errors read back from a metadata_only table are their class already: only the documents go
            if self.errors_reduced:
                questions = questions.model_copy(update={"documents": None})
            else:
                questions = questions.without_content()
        return RetrievalDetails(
            # format 5 only where judged@k is held: every other run keeps format 4's shape
            format_version=COLUMNAR_FORMAT_VERSION if judged is None else COVERAGE_FORMAT_VERSION,
            protocol=scoring_protocol(self.relevance_level, self.average_over, self.chunk_separator, self.judged_only),
            top_k=TOP_K,
            overfetch_multiplier=OVERFETCH_MULTIPLIER,
            hit_cutoffs=list(self.hit_cutoffs),
            metrics=list(self.metric_names),
            relevance_level=self.relevance_level,
            measurement_depth=self.depth,
            unjudged=list(self.unjudged),
            aggregates=AggregatesDetail.model_validate(self.aggregates.to_dict()),
            questions=questions,
            retriever_id=self.retriever_id,
            tables_run_id=tables_run_id,
            judged=None if judged is None else JudgedDetail.model_validate(judged.to_dict()),
            average_over=None if self.average_over == DEFAULT_AVERAGE_OVER else self.average_over,
            judged_only=True if self.judged_only else None,
        )

    def to_record(self, privacy: PrivacyMode = PrivacyMode.FULL, *, tables_run_id: str | None = None) -> RunRecord:
        """ADR-072 decision 4: the run as an ADR-060 result row (top-1 -> pass_rate,
        top-3 -> mean_score, grader ``retrieval_hit_rate``), under its series name."""
        overall = self.aggregates.overall
        slices = [
            _slice(kind, value, summary)
            for kind, group in (
                ("form", self.aggregates.by_form),
                ("hard_class", self.aggregates.by_hard_class),
            )
            for value, summary in group.items()
        ]
        return record_of(
            self,
            privacy,
            grader=GRADER_ID,
            rates=(overall.top1_rate, overall.top3_rate),
            counts=(overall.questions, overall.scored, overall.errors),
            details=self.details(privacy, tables_run_id=tables_run_id),
            slices=slices,
            manifest=self.manifest,
        )


def _columns_of_scored(scored: ScoredAnswers) -> QuestionColumns:
    """The details' columns straight from the scoring arrays: no Python object per question
    or per document beyond the lists the JSON is written from, and in those each distinct
    value once (:func:`_shared_floats`).  The evaluator's own values, already typed, so
    constructed without re-validation (tests/test_details.py checks that they validate).

    The documents come first, while no list is built yet: the evaluator's are packed already
    and taken as they are; others are encoded here, their packed bytes the largest thing this
    makes, for a moment."""
    documents = scored.kept_documents.columns(scored.documents)
    ok = scored.ok
    failed = np.flatnonzero(~ok).tolist()
    depth: list[int | None] = scored.reached.tolist()
    top1: list[bool | None] = scored.top1.tolist()
    top3: list[bool | None] = scored.top3.tolist()
    for i in failed:  # an error has no depth and no verdict
        depth[i] = top1[i] = top3[i] = None
    metrics = {name: _shared_floats(values) for name, values in scored.metrics.items()}
    judged_at: dict[str, list[float | None]] | None = None
    unjudged_ranks: list[list[int]] | None = None
    ends: dict[str, list[float | None]] | None = None
    if scored.judged_at:
        judged_at = {name: _shared_floats(values) for name, values in scored.judged_at.items()}
    if scored.unjudged_relevant:
        ends = {name: _shared_floats(values) for name, values in scored.unjudged_relevant.items()}
    if scored.unjudged is not None:
        ranks = scored.unjudged.codes.tolist()
        bounds = scored.unjudged.offsets.tolist()
        unjudged_ranks = [ranks[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)]
    return QuestionColumns.model_construct(
        id=scored.question_ids.tolist(),
        form=scored.forms,
        hard_class=scored.hard_classes,
        depth=depth,
        top1_hit=top1,
        top3_hit=top3,
        latency_ms=_rounded_ms(scored.latency_ms),
        status=["ok" if error is None else "error" for error in scored.errors],
        error=list(scored.errors),
        metrics=metrics,
        documents=documents,
        judged_at=judged_at,
        unjudged_ranks=unjudged_ranks,
        unjudged_relevant=ends,
    )


def _shared_floats(values: np.ndarray) -> list[float | None]:
    """``values`` as a list, NaN as None, with one float object per distinct value: a metric
    of a large run takes a few distinct values (1 / rank, hit or miss), and a list sharing them
    costs 8 bytes a question, not 32.  Values are told apart by their bits (0.0 and -0.0 stay
    two), so the JSON written from the list is what it was."""
    column = np.ascontiguousarray(values, dtype=np.float64)
    distinct, first, inverse = np.unique(column.view(np.int64), return_index=True, return_inverse=True)
    shared = np.empty(distinct.size, dtype=object)
    listed: list[float | None] = column[first].tolist()
    for k in np.flatnonzero(np.isnan(column[first])).tolist():
        listed[k] = None
    shared[:] = listed
    result: list[float | None] = shared[inverse.reshape(-1)].tolist()
    return result


def _rounded_ms(latency_ms: Sequence[float]) -> list[float]:
    """Latencies rounded by Python's correctly rounded ``round`` (as records have them), each
    latency object once: a batch's questions share one.  Keyed by identity, not by value, so
    that values equal but not alike (``0.0`` and ``-0.0``, ``1`` and ``1.0``) and NaN round as
    themselves; ``values`` holds every object, so no identity is reused meanwhile.  When every
    rounded latency is a float, equal ones (by their bits) then share one object too."""
    values = list(latency_ms)
    by_object: dict[int, float] = {}
    for ms in values:
        if id(ms) not in by_object:
            by_object[id(ms)] = round(ms, 3)
    rounded = [by_object[id(ms)] for ms in values]
    del values, by_object
    if not rounded or set(map(type, rounded)) != {float}:
        return rounded
    column = np.asarray(rounded, dtype=np.float64)
    _, first, inverse = np.unique(column.view(np.int64), return_index=True, return_inverse=True)
    shared = np.empty(first.size, dtype=object)
    shared[:] = [rounded[i] for i in first.tolist()]
    result: list[float] = shared[inverse.reshape(-1)].tolist()
    return result


def _records(results: Sequence[QuestionResult], depth: int, coverage: bool = False) -> list[QuestionDetail]:
    """Results read back from a hits table, as the details' records (with their judged@k
    where ``coverage``)."""
    return [
        QuestionDetail.model_construct(
            id=r.question_id,
            form=r.form,
            hard_class=r.hard_class,
            documents=list(r.documents[:depth]),
            depth=r.depth if r.scored else None,
            top1_hit=r.top1_hit if r.scored else None,
            top3_hit=r.top3_hit if r.scored else None,
            latency_ms=round(r.latency_ms, 3),
            status=r.status.value,
            error=r.error,
            metrics=dict(r.metrics),
            judged_at=dict(r.judged_at) if coverage else None,
            unjudged_ranks=list(r.unjudged_ranks) if coverage else None,
            unjudged_relevant=dict(r.unjudged_relevant) if coverage and r.unjudged_relevant else None,
        )
        for r in results
    ]


def _slice(kind: str, value: str, summary: RateSummary) -> SliceRates:
    return SliceRates(kind, value, summary.questions, summary.scored, summary.top1_rate, summary.top3_rate)
