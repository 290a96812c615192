"""Running a golden set against a retriever: ask every question to the measurement depth
(:func:`goldeneval.retrieval.asking.ask_to_depth`, which codes the answers as they come back),
score the whole run at once (:func:`goldeneval.retrieval.scoring.score_answers`) and hand back
the :class:`~goldeneval.retrieval.run.RetrievalRun`.

Like ADR-072's ``RetrievalEvaluationService`` it neither persists nor compares, which
keeps it testable without a database.  Latency comes from a monotonic clock; a retriever
exception or a per-question timeout makes that question an ``error`` and the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime

from goldeneval.core.provenance import Provenance, retriever_provenance
from goldeneval.core.spec import DEFAULT_TIMEOUT_S
from goldeneval.retrieval.asking import ask_to_depth
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet
from goldeneval.retrieval.labels import label_digest
from goldeneval.retrieval.metrics import (
    DEFAULT_AVERAGE_OVER,
    DEFAULT_METRICS,
    DEFAULT_RELEVANCE_LEVEL,
    AverageOver,
    Metric,
    measurement_depth,
)
from goldeneval.retrieval.protocol import DEFAULT_HIT_CUTOFFS, TOP_K, run_metrics
from goldeneval.retrieval.retrievers.base import DEFAULT_CHUNK_SEPARATOR, Retriever, document_id_mapper
from goldeneval.retrieval.run import RetrievalRun
from goldeneval.retrieval.scoring import score_answers

__all__ = ["DEFAULT_TIMEOUT_S", "Progress", "evaluate_retrieval"]


Progress = Callable[[Sequence[GoldenQuestion]], Iterable[GoldenQuestion]]
"""Wraps the questions as they are asked (a progress bar); gets the whole list, so it knows the total."""


def evaluate_retrieval(
    golden_set: GoldenQuestionSet,
    retriever: Retriever,
    retriever_id: str,
    *,
    series: str | None = None,
    chunk_separator: str | None = DEFAULT_CHUNK_SEPARATOR,
    to_document: Callable[[str], str] | None = None,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    hit_cutoffs: Sequence[int] = DEFAULT_HIT_CUTOFFS,
    metrics: Sequence[Metric] = DEFAULT_METRICS,
    relevance_level: int = DEFAULT_RELEVANCE_LEVEL,
    average_over: AverageOver = DEFAULT_AVERAGE_OVER,
    judged_only: bool = False,
    provenance: Provenance | None = None,
    progress: Progress | None = None,
    workers: int = 1,
    batch_size: int | None = None,
) -> RetrievalRun:
    """Ask ``retriever`` every question of ``golden_set`` and score the answers.

    ``series`` is the name the run is stored under (default: ``retriever_id``).
    ``chunk_separator`` cuts each returned id to its document id (the protocol names a
    separator other than the default); ``to_document``, a mapping of the caller's own, replaces it.
    ``metrics`` are reported beside ``hit@k`` for each of ``hit_cutoffs``; the deepest of
    them is the measurement depth (see :func:`ask_to_depth`); ``average_over`` says which
    questions their means are over (trec_eval's ``all-judged`` counts the set's ``unjudged``);
    ``judged_only`` computes them on condensed lists (trec_eval -J), never the hits.
    ``provenance`` defaults to what the retriever declares (unknown when it cannot say).
    ``workers`` calls run at once and ``batch_size`` questions go to one ``retrieve_batch``
    call when the retriever has one (:mod:`goldeneval.retrieval.asking`); neither changes a result.
    """
    declared = provenance if provenance is not None else retriever_provenance(retriever, retriever_id)
    mapper = to_document or document_id_mapper(chunk_separator)
    reported = run_metrics(hit_cutoffs, metrics)
    depth = measurement_depth(reported, TOP_K, judged_only=judged_only)
    started_at = datetime.now(UTC)
    questions = golden_set.questions
    digest = label_digest(golden_set)  # before asking: its encoding of the set comes and goes while little is held
    answers, coded = ask_to_depth(
        retriever,
        questions,
        depth,
        mapper,
        timeout_s=timeout_s,
        workers=workers,
        batch_size=batch_size,
        progress=_ticker(progress, questions),
    )
    scored = score_answers(
        questions,
        coded.raw,  # the raw rankings as the coded arrays hold them
        answers.errors,
        answers.latency_ms,
        mapper,
        reported,
        depth=depth,
        relevance_level=relevance_level,
        coded=coded,
        average_over=average_over,
        left_out=len(golden_set.unjudged),
        judged_only=judged_only,
    ).with_packed_documents()  # the run's codes become the packed documents: ``coded`` is not read again
    del answers, coded
    return RetrievalRun(
        set_id=golden_set.id,
        series=series or retriever_id,
        retriever_id=retriever_id,
        results=scored,
        aggregates=scored.aggregates,
        started_at=started_at,
        provenance=declared,
        label_digest=digest,
        hit_cutoffs=tuple(hit_cutoffs),
        metric_names=tuple(metric.name for metric in reported),
        relevance_level=relevance_level,
        unjudged=golden_set.unjudged,
        judged_cutoffs=scored.judged_cutoffs,
        average_over=average_over,
        chunk_separator=chunk_separator,
        judged_only=judged_only,
    )


def _ticker(progress: Progress | None, questions: Sequence[GoldenQuestion]) -> Callable[[int], None] | None:
    """``progress`` (which wraps the question list, like tqdm) as a callback told how many
    more questions were answered; the wrapped iterator is drained at the last question."""
    if progress is None:
        return None
    steps = iter(progress(questions))
    left = len(questions)

    def tick(n: int) -> None:
        nonlocal left
        for _ in range(n):
            next(steps, None)
        left -= n
        if left <= 0:
            for _ in steps:  # let the wrapper see the end (tqdm closes its bar there)
                pass

    return tick
