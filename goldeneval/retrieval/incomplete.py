"""Measures made for incomplete judgments: bpref, infAP and condensed lists (trec_eval ``-J``).

The rank metrics of :mod:`goldeneval.retrieval.columnar` read only the documents judged
relevant: an unjudged document counts as not relevant.  These read the judged *non*-relevant
ones too (a set's ``not_relevant`` documents, grade 0, and documents graded below the
relevance level), so that an unjudged document does not count at all.  Each is trec_eval 9.x's
measure of the same name on one question's distinct-document ranking, as far as the run
measured it (to trec_eval's depth, 1000: :func:`goldeneval.retrieval.metrics.measurement_depth`
asks that deep for these and for condensed lists), and
``tests/test_metrics_incomplete.py`` holds them equal to pytrec_eval per question:

``bpref`` (Buckley & Voorhees, SIGIR 2004; trec_eval ``bpref``)
    With R relevant and N judged non-relevant documents, each retrieved relevant document
    adds ``1 - min(n, R) / min(N, R)``, where n is the number of judged non-relevant
    documents ranked above it (1 when n is 0); the sum is divided by R.  Unjudged documents
    are passed over.
``infap`` (Yilmaz & Aslam, CIKM 2006; trec_eval ``infAP``)
    Each retrieved relevant document at 0-based position j adds 1 at j = 0, else
    ``1/(j+1) + j/(j+1) * (d/j) * ((r + e) / (d + 2e))``, where d is the number of judged
    documents above it, r the relevant ones among them and e = 0.00001; the sum is divided by
    R.  Every document above counts in j, judged or not: an unjudged document lowers the
    estimate as a non-relevant one would, scaled by the judged share above.
``-J`` (:func:`condensed`, ``--judged-only``)
    Every rank metric computed on the *condensed list*: each ranking without its unjudged
    documents (Sakai, SIGIR 2007), as ``trec_eval -J`` does.  Top-1 and top-3 hits, which the
    gate reads, are never condensed.

Bounds under unjudged documents (:func:`if_unjudged_relevant`): every metric is computed
with each unjudged document counted not relevant; the same metric with each unjudged document
of its top k counted relevant is the other end of how far judging them could move it.  For
hit, MRR, precision and recall that end is the largest value any judgment could give; for
nDCG, MAP, R-precision and infAP (whose ideal or R grows with the relevant documents) it is
the value of that one case, not a bound of every mix.

As for every rank metric, a question with no document judged above 0 has no value (NaN)
unless ``average_over`` is ``all-judged``, and one with nothing at the relevance level scores
0 (trec_eval's value).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from goldeneval.retrieval.columnar import BoolArray, FloatArray, Int64Array, Judgements, Rankings, score
from goldeneval.retrieval.metrics import Metric

__all__ = [
    "INCOMPLETE_KINDS",
    "INFAP_EPSILON",
    "UNJUDGED",
    "condensed",
    "grades_in",
    "if_unjudged_relevant",
    "judgment_metrics",
]

UNJUDGED = -1
"""The grade :func:`grades_in` gives a ranked document that carries no judgment."""
INFAP_EPSILON = 0.00001
"""trec_eval's ``INFAP_EPSILON``: keeps the judged-relevant share defined with nothing judged above."""


def _rows(rankings: Rankings) -> Int64Array:
    return np.repeat(np.arange(len(rankings), dtype=np.int64), rankings.lengths)


def _positions(rankings: Rankings) -> Int64Array:
    """The 0-based position of each ranked document within its question's ranking."""
    return np.arange(rankings.codes.size, dtype=np.int64) - np.repeat(rankings.offsets[:-1], rankings.lengths)


def _find(rankings: Rankings, judgements: Judgements) -> Int64Array:
    """For each ranked document, the index of its question's judgement of it, or -1: one sorted
    search of ``question * V + code`` keys, as :func:`goldeneval.retrieval.columnar.judged_mask`."""
    if rankings.codes.size == 0 or judgements.codes.size == 0:
        return np.full(rankings.codes.size, -1, dtype=np.int64)
    width = int(max(rankings.codes.max(), judgements.codes.max())) + 1
    keys = _rows(rankings) * width + rankings.codes.astype(np.int64)
    judged_rows = np.repeat(np.arange(len(judgements), dtype=np.int64), np.diff(judgements.offsets))
    judged_keys = judged_rows * width + judgements.codes.astype(np.int64)
    order = np.argsort(judged_keys, kind="stable")
    ordered = judged_keys[order]
    at = np.searchsorted(ordered, keys)
    at[at == ordered.size] = 0
    found: Int64Array = np.where(ordered[at] == keys, order[at], -1)
    return found


def grades_in(rankings: Rankings, relevant: Judgements, judged: Judgements | None) -> Int64Array:
    """The grade of each ranked document for its question: its grade in ``relevant`` (the
    documents judged above 0), else 0 when ``judged`` (every judged document) holds it, else
    :data:`UNJUDGED`.  ``judged`` None: nothing is judged but the relevant documents."""
    at = _find(rankings, relevant)
    grades: Int64Array = np.where(at >= 0, relevant.grades[np.maximum(at, 0)], UNJUDGED)
    if judged is not None:
        negative = (at < 0) & (_find(rankings, judged) >= 0)
        grades[negative] = 0
    return grades


def _counts(relevant: Judgements, judged: Judgements | None, rel_level: int) -> tuple[Int64Array, Int64Array]:
    """R (judged documents at or above the level) and N (judged below it) per question."""
    n = len(relevant)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(relevant.offsets))
    at_level = relevant.grades >= rel_level
    r = np.bincount(rows[at_level], minlength=n)
    below = np.bincount(rows[~at_level], minlength=n)
    negatives = np.diff(judged.offsets) - np.diff(relevant.offsets) if judged is not None else 0
    return r, below + negatives


def _before(rows: Int64Array, flags: BoolArray, offsets: Int64Array) -> Int64Array:
    """For each ranked document, how many documents above it in its ranking have ``flags``."""
    running = np.cumsum(flags, dtype=np.int64) - flags
    start = np.concatenate(([0], np.cumsum(flags, dtype=np.int64)))[offsets[:-1]]
    before: Int64Array = running - start[rows]
    return before


def _bpref(rankings: Rankings, grades: Int64Array, r: Int64Array, n_nonrel: Int64Array, rel_level: int) -> FloatArray:
    rows = _rows(rankings)
    is_relevant = grades >= rel_level
    nonrel_above = _before(rows, (grades >= 0) & ~is_relevant, rankings.offsets)
    q = rows[is_relevant]
    above = nonrel_above[is_relevant]
    cap = np.minimum(n_nonrel[q], r[q])
    share = np.divide(np.minimum(above, r[q]), cap, out=np.zeros(q.size), where=cap > 0)
    added = np.where(above > 0, 1.0 - share, 1.0)
    total = np.bincount(q, weights=added, minlength=len(rankings))
    values: FloatArray = np.divide(total, r, out=np.zeros(len(rankings)), where=r > 0)
    return values


def _infap(rankings: Rankings, grades: Int64Array, r: Int64Array, n_nonrel: Int64Array, rel_level: int) -> FloatArray:
    del n_nonrel
    rows = _rows(rankings)
    is_relevant = grades >= rel_level
    relevant_above = _before(rows, is_relevant, rankings.offsets)[is_relevant].astype(np.float64)
    judged_above = _before(rows, grades >= 0, rankings.offsets)[is_relevant].astype(np.float64)
    j = _positions(rankings)[is_relevant].astype(np.float64)
    safe_j = np.maximum(j, 1.0)
    estimate = 1.0 / (j + 1.0) + (j / (j + 1.0)) * (judged_above / safe_j) * (
        (relevant_above + INFAP_EPSILON) / (judged_above + 2 * INFAP_EPSILON)
    )
    added = np.where(j == 0, 1.0, estimate)
    total = np.bincount(rows[is_relevant], weights=added, minlength=len(rankings))
    values: FloatArray = np.divide(total, r, out=np.zeros(len(rankings)), where=r > 0)
    return values


_Kernel = Callable[[Rankings, Int64Array, Int64Array, Int64Array, int], FloatArray]
_KERNELS: Mapping[str, _Kernel] = {"bpref": _bpref, "infap": _infap}
INCOMPLETE_KINDS = frozenset(_KERNELS)
"""The metric families computed here rather than by :func:`goldeneval.retrieval.columnar.score`."""


def judgment_metrics(
    kept: Rankings,
    relevant: Judgements,
    judged: Judgements | None,
    names: Mapping[str, str],
    *,
    rel_level: int,
    ok: BoolArray,
) -> dict[str, FloatArray]:
    """``name -> values`` for each metric of ``names`` (name -> family key in
    :data:`INCOMPLETE_KINDS`) over the collapsed rankings ``kept``; NaN, as every rank metric,
    for a question without a relevant judgement (``average_over="all-judged"`` makes it 0, as
    trec_eval scores it) or with ``ok`` False."""
    grades = grades_in(kept, relevant, judged)
    r, n_nonrel = _counts(relevant, judged, rel_level)
    defined = (np.diff(relevant.offsets) > 0) & ok
    return {
        name: np.where(defined, _KERNELS[key](kept, grades, r, n_nonrel, rel_level), np.nan)
        for name, key in names.items()
    }


def condensed(kept: Rankings, relevant: Judgements, judged: Judgements | None) -> Rankings:
    """``kept`` (collapsed rankings) without the documents that carry no judgment: the
    condensed lists trec_eval ``-J`` scores."""
    keep = grades_in(kept, relevant, judged) != UNJUDGED
    offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum(np.bincount(_rows(kept)[keep], minlength=len(kept)), out=offsets[1:])
    return Rankings(offsets, kept.codes[keep])


def _with_relevant(
    relevant: Judgements, judged: Judgements | None, kept: Rankings, added: BoolArray, grade: int
) -> tuple[Judgements, Judgements | None]:
    """``relevant`` and ``judged`` with the documents of ``kept`` where ``added`` judged
    relevant at ``grade``: merged per question by one stable sort."""
    n = len(relevant)
    rows = _rows(kept)[added]
    codes = kept.codes[added].astype(np.int64)

    def merged(base: Judgements, grades: Int64Array) -> Judgements:
        base_rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(base.offsets))
        order = np.argsort(np.concatenate((base_rows, rows)), kind="stable")
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.diff(base.offsets) + np.bincount(rows, minlength=n), out=offsets[1:])
        all_codes = np.concatenate((base.codes.astype(np.int64), codes))[order]
        return Judgements(offsets, all_codes, np.concatenate((base.grades, grades))[order])

    extra = np.full(codes.size, grade, dtype=np.int64)
    return merged(relevant, extra), None if judged is None else merged(judged, extra)


def if_unjudged_relevant(
    kept: Rankings,
    relevant: Judgements,
    judged: Judgements | None,
    metrics: Sequence[Metric],
    *,
    rel_level: int,
    ok: BoolArray,
    depth: int | None,
) -> dict[str, FloatArray]:
    """Each metric of ``metrics`` per question as it would be if every unjudged document in
    its top k (the whole kept ranking for a metric without a cutoff) were judged relevant, at
    the relevance level's grade: the other end, beside the metric itself (every unjudged
    document not relevant), of how far judging them could move it.  R grows by the documents
    so judged, as it would.  NaN where the metric is."""
    grades = grades_in(kept, relevant, judged)
    unjudged = grades == UNJUDGED
    position = _positions(kept)
    values: dict[str, FloatArray] = {}
    by_cutoff: dict[int | None, list[Metric]] = {}
    for metric in metrics:
        by_cutoff.setdefault(metric.k, []).append(metric)
    defined = (np.diff(relevant.offsets) > 0) & ok
    for k, group in by_cutoff.items():
        added = unjudged if k is None else unjudged & (position < k)
        more, more_judged = _with_relevant(relevant, judged, kept, added, rel_level)
        incomplete = {m.name: m.kind.key for m in group if m.kind.key in INCOMPLETE_KINDS}
        ranked = [m for m in group if m.kind.key not in INCOMPLETE_KINDS]
        if ranked:
            scored = score(kept, more, ranked, rel_level=rel_level, ok=ok, depth_limit=depth, defined="judged")
            values.update({name: np.where(defined, column, np.nan) for name, column in scored.metrics.items()})
        if incomplete:
            values.update(judgment_metrics(kept, more, more_judged, incomplete, rel_level=rel_level, ok=defined))
    return {metric.name: values[metric.name] for metric in metrics}
