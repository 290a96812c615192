"""Scoring a whole run at once: protocol v1's hits (:mod:`goldeneval.retrieval.protocol`) and
the rank metrics (:mod:`goldeneval.retrieval.metrics`), over the run's coded arrays.

:func:`score_answers` takes the run as :mod:`goldeneval.retrieval.encoding` codes it, scores
it in one pass of the columnar core (:mod:`goldeneval.retrieval.columnar`), adds the measures
that read judged negatives (:mod:`goldeneval.retrieval.incomplete`) and judged@k, and hands
back a :class:`~goldeneval.retrieval.scored.ScoredAnswers`: the per-question results the
store, the report and the Dagster tables read.  :func:`score_question` is the same
computation for one question.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from goldeneval.retrieval import columnar
from goldeneval.retrieval.encoding import CodedRun, code_run, compact_strings
from goldeneval.retrieval.golden import GoldenQuestion, QuestionForm
from goldeneval.retrieval.incomplete import INCOMPLETE_KINDS, condensed, if_unjudged_relevant, judgment_metrics
from goldeneval.retrieval.metrics import (
    DEFAULT_AVERAGE_OVER,
    DEFAULT_RELEVANCE_LEVEL,
    AverageOver,
    Metric,
)
from goldeneval.retrieval.protocol import TOP_K, judged_cutoffs, judged_name, raw_limit, run_metrics
from goldeneval.retrieval.results import QuestionResult, aggregate_columns
from goldeneval.retrieval.scored import ExpectedDocuments, KeptDocuments, ScoredAnswers

__all__ = ["score_answers", "score_question"]

_FORM_VALUES = {form: form.value for form in QuestionForm}
"""Each form's value, looked up without the enum's descriptor (once per question)."""


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
    ``metrics`` (default: :func:`~goldeneval.retrieval.protocol.run_metrics`) to its distinct
    documents, kept to ``depth`` (default: all of them): :func:`score_answers` for a run of one."""
    (result,) = score_answers(
        [question],
        [returned_ids],
        [None],
        [latency_ms],
        to_document,
        metrics,
        depth=depth,
        relevance_level=relevance_level,
    ).results
    return result


def score_answers(
    questions: Sequence[GoldenQuestion],
    returned: Sequence[Sequence[str]],
    errors: Sequence[str | None],
    latency_ms: Sequence[float],
    to_document: Callable[[str], str],
    metrics: Sequence[Metric] | None = None,
    *,
    depth: int | None = None,
    relevance_level: int = DEFAULT_RELEVANCE_LEVEL,
    coded: CodedRun | None = None,
    average_over: AverageOver = DEFAULT_AVERAGE_OVER,
    left_out: int = 0,
    judged_only: bool = False,
) -> ScoredAnswers:
    """Score a whole run: question ``i`` returned the raw ranking ``returned[i]`` in
    ``latency_ms[i]``, or failed with ``errors[i]`` (an error, never a miss).

    Raw ids are dictionary-coded once and each distinct raw id is mapped to its document once,
    so ``to_document`` runs per distinct id, not per returned id; everything after that is
    :func:`goldeneval.retrieval.columnar.score` over the whole run.  ``coded``: the run already coded
    by :func:`~goldeneval.retrieval.encoding.code_run` (the evaluator codes it to decide its over-fetch).
    ``average_over="all-judged"`` takes each metric's mean as trec_eval does, over every query
    of the qrels: a scored question judged only with grade 0 (no expected document, judged
    negatives) scores 0 on every metric, and ``left_out`` more queries (the set's source
    judged them only with grade 0, so the set left them out) add a 0 each.
    bpref and infAP read the judged negatives (:mod:`goldeneval.retrieval.incomplete`);
    ``judged_only`` computes every rank metric on the condensed lists (trec_eval ``-J``),
    never the hits.
    """
    metrics = run_metrics() if metrics is None else metrics
    n = len(questions)
    if not len(returned) == len(errors) == len(latency_ms) == n:
        raise ValueError("questions, returned, errors and latency_ms must have one entry per question")
    coded = coded or code_run(questions, returned, to_document)
    ok = np.fromiter((error is None for error in errors), dtype=np.bool_, count=n)
    ranked = [metric for metric in metrics if metric.kind.key not in INCOMPLETE_KINDS]
    scores = columnar.score(
        coded.rankings,
        coded.judgements,
        ranked,
        rel_level=relevance_level,
        ok=ok,
        depth_limit=depth,
        protocol_head=raw_limit(),
        defined="judged",
    )
    values: Mapping[str, np.ndarray] = _judgment_measures(
        coded, metrics, ranked, scores.metrics, relevance_level, ok, depth, judged_only
    )
    kept = coded.kept(depth)
    if not ok.all():  # an error keeps no documents, whatever it returned before failing
        kept = _without(kept, ~ok)
    forms = [_FORM_VALUES[form] for form in map(operator.attrgetter("form"), questions)]
    hard_classes = list(map(operator.attrgetter("hard_class"), questions))
    extra_zeros = 0
    if average_over == "all-judged":
        values = _judged_only_negatives_zero(values, questions, ok)
        extra_zeros = left_out
    aggregates = aggregate_columns(scores.ok, scores.top1, scores.top3, forms, hard_classes, values, extra_zeros)
    shares: dict[str, np.ndarray] = {}
    unjudged = None
    ends: Mapping[str, np.ndarray] = {}
    if coded.judged is not None:
        cutoffs = judged_cutoffs(metrics)
        seen = kept if depth is not None and depth >= cutoffs[-1] else coded.kept(None)
        if seen is not kept and not ok.all():
            seen = _without(seen, ~ok)
        mask = columnar.judged_mask(seen, coded.judged)
        shares = {judged_name(k): columnar.judged_at(seen, coded.judged, mask, k, ok) for k in cutoffs}
        unjudged = columnar.unjudged_ranks(seen, mask, TOP_K)
        if not judged_only:  # condensed lists hold no unjudged document: nothing to bound
            whole = coded.kept(depth)
            ends = if_unjudged_relevant(
                whole, coded.judgements, coded.judged, metrics, rel_level=relevance_level, ok=ok, depth=depth
            )
            if average_over == "all-judged":
                ends = _judged_only_negatives_zero(ends, questions, ok)
    return ScoredAnswers(
        question_ids=compact_strings([question.id for question in questions]),
        expected=ExpectedDocuments(coded.judgements.offsets, coded.judgements.codes, coded.documents),
        returned=returned,
        errors=errors,
        latency_ms=latency_ms,
        ok=scores.ok,
        top1=scores.top1,
        top3=scores.top3,
        metrics=values,
        kept_documents=KeptDocuments.of(kept),
        documents=coded.documents,
        forms=forms,
        hard_classes=hard_classes,
        aggregates=aggregates,
        judged_at=shares,
        unjudged=unjudged,
        unjudged_relevant=ends,
    )


def _judgment_measures(
    coded: CodedRun,
    metrics: Sequence[Metric],
    ranked: Sequence[Metric],
    values: Mapping[str, np.ndarray],
    relevance_level: int,
    ok: np.ndarray,
    depth: int | None,
    judged_only: bool,
) -> dict[str, np.ndarray]:
    """Every metric's values, in the order asked: the rank metrics as :func:`columnar.score`
    gave them, bpref and infAP from the judged documents of every distinct document kept; with
    ``judged_only``, all of them on the condensed lists (as trec_eval -J reads every measure)."""
    incomplete = {metric.name: metric.kind.key for metric in metrics if metric.kind.key in INCOMPLETE_KINDS}
    if not incomplete and not judged_only:
        return dict(values)
    lists = coded.kept(depth)  # the ranking the run stores and exports: a replay reads the same
    if judged_only:
        lists = condensed(lists, coded.judgements, coded.judged)
        if ranked:
            values = columnar.score(
                lists, coded.judgements, ranked, rel_level=relevance_level, ok=ok, depth_limit=depth, defined="judged"
            ).metrics
    extra = judgment_metrics(lists, coded.judgements, coded.judged, incomplete, rel_level=relevance_level, ok=ok)
    return {metric.name: values[metric.name] if metric.name in values else extra[metric.name] for metric in metrics}


def _judged_only_negatives_zero(
    metrics: Mapping[str, np.ndarray], questions: Sequence[GoldenQuestion], ok: np.ndarray
) -> Mapping[str, np.ndarray]:
    """trec_eval's scores of a query judged only with grade 0: 0 on every metric (its
    relevant documents number 0).  Such a question (no expected document, judged negatives)
    is undefined by default; under ``all-judged`` its metrics are 0 where it was scored."""
    only_negative = np.fromiter(
        (not q.expected and bool(q.not_relevant) for q in questions), dtype=np.bool_, count=len(questions)
    )
    zero = only_negative & ok
    if not zero.any():
        return metrics
    return {name: np.where(zero, 0.0, values) for name, values in metrics.items()}


def _without(rankings: columnar.Rankings, dropped: np.ndarray) -> columnar.Rankings:
    """``rankings`` with the rankings where ``dropped`` emptied."""
    lengths = np.where(dropped, 0, np.diff(rankings.offsets))
    keep = np.repeat(~dropped, np.diff(rankings.offsets))
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return columnar.Rankings(offsets, rankings.codes[keep])
