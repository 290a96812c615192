"""Scores of a whole run at once: ADR-072's hit rates and trec_eval's rank metrics, per question.

The scores read the core's CSR arrays (:mod:`goldeneval.retrieval.columnar.rows`) through the
scan (:mod:`goldeneval.retrieval.columnar.scan`), which locates the judged documents; each
metric is then a per-question reduction (``np.bincount``) over the located documents.  This is
the one implementation of the metrics: :func:`question_metrics` scores a single question with it
too.

Semantics, exactly
------------------
1. **Collapse.** Each ranking is reduced to its distinct documents, each at its *first*
   occurrence (scoring protocol v1, ADR-072 step 2).  Ranks below are 1-based ranks in this
   collapsed ranking.  ``depth`` is the number of distinct documents -- capped at
   ``depth_limit`` when one is given, which is all a caller needs to flag a ranking that is
   shorter than its deepest cutoff.
2. **Protocol v1 (ADR-072, see ``goldeneval.retrieval.scoring``).** The expected set is every judged
   document with grade > 0, whatever ``rel_level``.  ``top1``: the first distinct document is
   expected; ``top3``: one of the first three is -- among the first ``protocol_head`` raw ids
   when that is given (the over-fetch depth).  A question with an empty expected set is a hit
   (both) only when its raw ranking is empty.  A question with ``ok == False`` (the retriever
   errored or timed out) is neither: both are ``False``, every metric is NaN, and
   :meth:`ColumnarScores.means` leaves it out.
3. **Relevance.** A document is *relevant* when its grade is ``>= rel_level`` (default 1, like
   ``trec_eval -l``).  ``R`` is the number of relevant judged documents of a question.  Binary
   metrics use this; nDCG uses the grades themselves (gain = grade, ``trec_eval`` ``ndcg_cut``),
   so documents graded ``1 <= grade < rel_level`` still add gain.  Grades ``<= 0`` never count.
4. **Metrics** (per question, at cutoff ``1 <= k <= 1000``), each equal to ``trec_eval`` 9.x
   (the version pytrec-eval-terrier 0.5.11 bundles) on the collapsed ranking, handed over with
   strictly decreasing scores so that its score-then-docno order is the rank order:

   ===============  ==========================  ================================================
   name             trec_eval                   definition
   ===============  ==========================  ================================================
   ``hit@k``        ``success_k``               1 if a relevant document is in the top k, else 0
   ``mrr@k``        ``recip_rank`` (run cut k)  1 / rank of the first relevant document in the
                                                top k, else 0
   ``recall@k``     ``recall_k``                relevant documents in the top k / R
   ``precision@k``  ``P_k``                     relevant documents in the top k / k (always k)
   ``ndcg@k``       ``ndcg_cut_k``              sum of grade / log2(rank + 1) over the top k,
                                                divided by the same sum over all judged grades
                                                > 0 sorted descending (the ideal), cut at k
   ``map@k``        ``map_cut_k``               sum over relevant documents at rank r <= k of
                                                (relevant documents at ranks <= r) / r, / R
   ``rprec``        ``Rprec``                   relevant documents in the top R / R
   ===============  ==========================  ================================================

   Every metric is **NaN for a question with R == 0** (and for errored questions).  trec_eval
   leaves a query without judgements out of its output and scores one whose judgements are all
   non-relevant 0; by default both are undefined here, so every mean runs over the same
   questions.  (With ``rel_level > 1``, trec_eval still reports nDCG for a question whose judged
   documents all lie below the level; this core reports NaN, for the same reason.)
   ``score(..., defined="judged")`` follows trec_eval instead: NaN only without any judgement,
   and then every value equals trec_eval's for every question it reports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from goldeneval.retrieval.columnar.encoding import encode
from goldeneval.retrieval.columnar.rows import BoolArray, FloatArray, Int64Array, Judgements, Rankings
from goldeneval.retrieval.columnar.scan import new_scan, run_scan
from goldeneval.retrieval.metrics import DEFAULT_RELEVANCE_LEVEL, Metric, parse_metric

__all__ = ["PROTOCOL_DEPTH", "ColumnarScores", "question_metrics", "score"]

PROTOCOL_DEPTH = 3
"""Distinct documents the protocol's top-3 verdict looks at (``goldeneval.retrieval.protocol.TOP_K``)."""


@dataclass(frozen=True)
class ColumnarScores:
    """Per-question results of a run, one numpy array per quantity (index = question)."""

    ok: BoolArray
    """False for a question the retriever failed on: left out of every rate and mean."""
    top1: BoolArray
    top3: BoolArray
    depth: Int64Array
    """Distinct documents returned (capped at ``depth_limit`` when one was given)."""
    relevant: Int64Array
    """R: judged documents with grade >= rel_level."""
    metrics: Mapping[str, FloatArray]
    """``name -> values``; NaN where undefined (R == 0) or the question errored."""

    def shorter_than(self, k: int) -> BoolArray:
        """Scored questions whose ranking had fewer than ``k`` distinct documents (cutoff not filled)."""
        return self.ok & (self.depth < k)

    def means(self) -> dict[str, float | None]:
        """``top1``/``top3`` rates over scored questions and each metric's mean over the questions
        it is defined for; ``None`` where there is none."""
        scored = int(self.ok.sum())
        result: dict[str, float | None] = {
            "top1": float(self.top1.sum()) / scored if scored else None,
            "top3": float(self.top3.sum()) / scored if scored else None,
        }
        for name, values in self.metrics.items():
            defined = ~np.isnan(values)
            result[name] = float(values[defined].mean()) if defined.any() else None
        return result


def _discounts(k: int) -> FloatArray:
    """``1 / log2(rank + 1)`` for ranks 1..k, at index rank - 1."""
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


@dataclass
class _Located:
    """The judged documents with grade > 0 of a whole run, in question order, with the
    collapsed rank each was found at (0: not retrieved); every metric is a reduction of these."""

    n: int
    offsets: Int64Array
    question: Int64Array
    grade: Int64Array
    rank: Int64Array
    raw_position: Int64Array
    rel_level: int
    relevant: Int64Array = field(init=False)
    """R per question."""
    found: tuple[Int64Array, Int64Array, Int64Array, Int64Array] = field(init=False)
    """Question, rank, grade and raw position of each retrieved document with grade > 0."""
    hit_question: Int64Array = field(init=False)
    hit_rank: Int64Array = field(init=False)
    """Question and rank of each retrieved relevant document (question order)."""
    _within: dict[int, Int64Array] = field(default_factory=dict)
    _first: Int64Array | None = None
    _sorted: tuple[Int64Array, Int64Array, Int64Array] | None = None

    def __post_init__(self) -> None:
        retrieved = self.rank > 0
        self.found = (
            self.question[retrieved],
            self.rank[retrieved],
            self.grade[retrieved],
            self.raw_position[retrieved],
        )
        is_relevant = self.grade >= self.rel_level
        if is_relevant.all():
            self.relevant = np.diff(self.offsets)
            self.hit_question, self.hit_rank = self.found[0], self.found[1]
        else:
            self.relevant = np.bincount(self.question[is_relevant], minlength=self.n)
            hit = self.found[2] >= self.rel_level
            self.hit_question, self.hit_rank = self.found[0][hit], self.found[1][hit]

    @property
    def r(self) -> FloatArray:
        return np.maximum(self.relevant, 1).astype(np.float64)

    def within(self, k: int) -> Int64Array:
        """Relevant documents retrieved in the top ``k``, per question."""
        if k not in self._within:
            inside = self.hit_rank <= k
            self._within[k] = np.bincount(self.hit_question[inside], minlength=self.n)
        return self._within[k]

    def first_rank(self) -> Int64Array:
        """Rank of the first relevant document retrieved (a large number where none was)."""
        if self._first is None:
            first = np.full(self.n, np.iinfo(np.int64).max, dtype=np.int64)
            if self.hit_question.size:
                q = self.hit_question
                starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
                first[q[starts]] = np.minimum.reduceat(self.hit_rank, starts)
            self._first = first
        return self._first

    def by_rank(self) -> tuple[Int64Array, Int64Array, Int64Array]:
        """Retrieved relevant documents sorted by (question, rank), with their 1-based count
        within the question: the numerator of precision at their rank."""
        if self._sorted is None:
            order = np.lexsort((self.hit_rank, self.hit_question))
            q, r = self.hit_question[order], self.hit_rank[order]
            self._sorted = (q, r, np.arange(q.size) - np.searchsorted(q, q, side="left") + 1)
        return self._sorted

    def expected_within(self, k: int, head: int | None) -> BoolArray:
        """Protocol v1: a judged document (grade > 0) among the first ``k`` distinct documents of
        the first ``head`` raw ids.  Its collapsed rank is the same in the head as in the whole
        ranking, so it is in the head's top k when its rank is <= k and it first occurs there."""
        question, rank, _, position = self.found
        inside = rank <= k
        if head is not None:
            inside &= position < head
        return np.bincount(question[inside], minlength=self.n) > 0

    def dcg(self, k: int) -> FloatArray:
        """DCG@k: grade / log2(rank + 1) summed over the retrieved documents in the top k."""
        question, rank, grade, _ = self.found
        inside = rank <= k
        gain = grade[inside] * _discounts(k)[rank[inside] - 1]
        dcg = np.bincount(question[inside], weights=gain, minlength=self.n).astype(np.float64, copy=False)
        return dcg

    def ideal_dcg(self, k: int) -> FloatArray:
        """trec_eval's ideal DCG@k: the question's judged grades > 0, sorted descending, cut at k."""
        if self.grade.size == 0:
            return np.zeros(self.n)
        if int(self.grade.min()) == int(self.grade.max()):
            cumulative = np.concatenate(([0.0], np.cumsum(_discounts(k))))
            return float(self.grade[0]) * cumulative[np.minimum(np.diff(self.offsets), k)]
        order = np.lexsort((-self.grade, self.question))
        q, g = self.question[order], self.grade[order]
        position = np.arange(q.size) - np.searchsorted(q, q, side="left")
        inside = position < k
        gain = g[inside] * _discounts(k)[position[inside]]
        ideal = np.bincount(q[inside], weights=gain, minlength=self.n).astype(np.float64, copy=False)
        return ideal


def _hit(located: _Located, k: int) -> FloatArray:
    return (located.within(k) > 0).astype(np.float64)


def _mrr(located: _Located, k: int) -> FloatArray:
    first = located.first_rank()
    return np.where(first <= k, 1.0 / np.minimum(first, k + 1), 0.0)


def _recall(located: _Located, k: int) -> FloatArray:
    return located.within(k) / located.r


def _precision(located: _Located, k: int) -> FloatArray:
    return located.within(k) / float(k)


def _ndcg(located: _Located, k: int) -> FloatArray:
    dcg = located.dcg(k)
    ideal = located.ideal_dcg(k)
    return np.divide(dcg, ideal, out=np.zeros(located.n), where=ideal > 0)


def _map(located: _Located, k: int) -> FloatArray:
    q, r, seen = located.by_rank()
    inside = r <= k
    return np.bincount(q[inside], weights=seen[inside] / r[inside], minlength=located.n) / located.r


def _rprec(located: _Located, k: int) -> FloatArray:
    inside = located.hit_rank <= located.relevant[located.hit_question]
    return np.bincount(located.hit_question[inside], minlength=located.n) / located.r


_KERNELS: Mapping[str, Callable[[_Located, int], FloatArray]] = {
    "hit": _hit,
    "mrr": _mrr,
    "recall": _recall,
    "precision": _precision,
    "ndcg": _ndcg,
    "map": _map,
    "rprec": _rprec,
}


def score(
    rankings: Rankings,
    judgements: Judgements,
    metrics: Iterable[str | Metric] = ("hit@1", "hit@3", "mrr@10", "recall@10", "ndcg@10"),
    *,
    rel_level: int = 1,
    ok: BoolArray | None = None,
    depth_limit: int | None = None,
    protocol_head: int | None = None,
    defined: Literal["relevant", "judged"] = "judged",
) -> ColumnarScores:
    """Score a whole run: protocol v1 hits, ``depth`` and ``metrics`` per question (module docstring).

    ``ok`` (default all True) masks out errored questions.  ``depth_limit``: count distinct
    documents only up to this many -- enough to flag unfilled cutoffs, and cheaper, since the
    scan then stops at the deepest cutoff; ``None`` counts them all, reading every ranking whole.
    ``protocol_head``: take top-1/top-3 from the first this many raw ids only (ADR-072's
    over-fetch, ``goldeneval.retrieval.protocol.raw_limit()``), so that scanning deeper for the metrics
    never changes the gated hits; ``None``: the whole ranking.  ``defined``: ``"judged"``
    (default, as :mod:`goldeneval.retrieval.metrics` and trec_eval) makes a metric NaN only for a
    question without any judgement, scoring a judged question with nothing relevant 0 (and
    nDCG from the grades below ``rel_level``); ``"relevant"`` makes it NaN when R == 0.
    """
    n = len(rankings)
    if len(judgements) != n:
        raise ValueError(f"rankings cover {n} questions but judgements cover {len(judgements)}")
    if rel_level < 1:
        raise ValueError(f"rel_level must be 1 or more (found {rel_level}); grades <= 0 never count as relevant")
    if depth_limit is not None and depth_limit < 0:
        raise ValueError(f"depth_limit must be 0 or more (found {depth_limit})")
    if protocol_head is not None and protocol_head < 0:
        raise ValueError(f"protocol_head must be 0 or more (found {protocol_head})")
    if defined not in ("relevant", "judged"):
        raise ValueError(f"defined must be 'relevant' or 'judged' (found {defined!r})")
    wanted = [m if isinstance(m, Metric) else parse_metric(m) for m in metrics]
    elsewhere = [m.name for m in wanted if m.kind.key not in _KERNELS]
    if elsewhere:
        raise ValueError(
            f"{', '.join(elsewhere)}: read judged non-relevant documents; goldeneval.retrieval.incomplete computes them"
        )
    mask = np.ones(n, dtype=np.bool_) if ok is None else np.asarray(ok, dtype=np.bool_)
    if mask.shape != (n,):
        raise ValueError(f"ok must hold one flag per question ({n}), found shape {mask.shape}")

    # Only judged documents with grade > 0 count anywhere; locate them, nothing else.
    question = np.repeat(np.arange(n, dtype=np.int64), np.diff(judgements.offsets))
    grade, codes = judgements.grades, judgements.codes
    positive = grade > 0
    lookup_offsets = judgements.offsets
    if not positive.all():
        question, grade, codes = question[positive], grade[positive], codes[positive]
        lookup_offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(question, minlength=n), out=lookup_offsets[1:])

    lengths = rankings.lengths
    if depth_limit is None:
        target = lengths
    else:
        deepest = max([PROTOCOL_DEPTH, depth_limit, *(m.k for m in wanted if m.k is not None)])
        target = np.full(n, deepest, dtype=np.int64)
        if any(m.kind.key == "rprec" for m in wanted):
            np.maximum(target, np.bincount(question[grade >= rel_level], minlength=n), out=target)
    scan = new_scan(rankings, target, lookup_offsets, question, codes, None)
    run_scan(scan)
    depth = scan.depth if depth_limit is None else np.minimum(scan.depth, depth_limit)

    located = _Located(n, lookup_offsets, question, grade, scan.rank, scan.raw_position, rel_level)
    scored = located.relevant > 0 if defined == "relevant" else np.diff(judgements.offsets) > 0
    counted = scored & mask
    values = {m.name: np.where(counted, _KERNELS[m.kind.key](located, m.k or 0), np.nan) for m in wanted}
    # Protocol v1: the expected set is every judged document with grade > 0.
    nothing_expected = np.diff(lookup_offsets) == 0
    nothing_returned = lengths == 0
    top1 = np.where(nothing_expected, nothing_returned, located.expected_within(1, protocol_head)) & mask
    top3 = np.where(nothing_expected, nothing_returned, located.expected_within(PROTOCOL_DEPTH, protocol_head)) & mask
    return ColumnarScores(ok=mask, top1=top1, top3=top3, depth=depth, relevant=located.relevant, metrics=values)


def question_metrics(
    ranking: Sequence[str],
    judgements: Mapping[str, int],
    metrics: Iterable[Metric],
    relevance_level: int = DEFAULT_RELEVANCE_LEVEL,
) -> dict[str, float]:
    """Every metric of one question's distinct-document ``ranking``; empty when it has no
    judgements (undefined).  Computed by the one implementation, :func:`score`."""
    if not judgements:
        return {}
    coded = encode([list(ranking)], [list(judgements)], [list(judgements.values())])
    scores = score(coded.rankings, coded.judgements, list(metrics), rel_level=relevance_level, defined="judged")
    return {name: float(values[0]) for name, values in scores.metrics.items()}
