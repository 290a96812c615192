"""Judged@k: which ranked documents carry a judgment, and the share of them in each top k.

Apart from :mod:`goldeneval.retrieval.columnar.scores` because it reads every judged document
(grade 0 included) of the *collapsed* rankings, where the scores read only the relevant ones
of the raw rankings; both take the core's CSR arrays.
"""

from __future__ import annotations

import numpy as np

from goldeneval.retrieval.columnar.rows import BoolArray, FloatArray, Judgements, Rankings

__all__ = ["judged_at", "judged_mask", "unjudged_ranks"]


def judged_mask(kept: Rankings, judged: Judgements) -> BoolArray:
    """Whether each document of the collapsed rankings ``kept`` carries a judgment of its
    question in ``judged`` (any grade, 0 included), aligned with ``kept.codes``.

    One vectorised membership test of ``question * V + code`` keys (V: one more than the
    largest code), not a Python set per question: the judged keys (few) are sorted and each
    ranked key is binary-searched among them (``np.isin`` sorts both sides: 7x slower on
    100,000 questions x 100 documents)."""
    if len(kept) != len(judged):
        raise ValueError(f"rankings cover {len(kept)} questions but judgements cover {len(judged)}")
    if kept.codes.size == 0 or judged.codes.size == 0:
        return np.zeros(kept.codes.size, dtype=np.bool_)
    width = int(max(kept.codes.max(), judged.codes.max())) + 1
    rows = np.repeat(np.arange(len(kept), dtype=np.int64), kept.lengths)
    judged_rows = np.repeat(np.arange(len(judged), dtype=np.int64), np.diff(judged.offsets))
    keys = rows * width + kept.codes.astype(np.int64)
    judged_keys = np.sort(judged_rows * width + judged.codes.astype(np.int64))
    at = np.searchsorted(judged_keys, keys)
    at[at == judged_keys.size] = 0
    found: BoolArray = judged_keys[at] == keys
    return found


def judged_at(kept: Rankings, judged: Judgements, mask: BoolArray, k: int, ok: BoolArray | None = None) -> FloatArray:
    """ir_measures' ``Judged@k`` per question: of the first ``min(k, depth)`` distinct
    documents of ``kept`` (collapsed rankings), the share that carry a judgment (``mask``,
    from :func:`judged_mask`).  NaN where it is undefined, as ir_measures leaves such a query
    out: no judgment at all, an empty ranking, or ``ok`` False (an error)."""
    if k < 1:
        raise ValueError(f"k must be 1 or more (found {k})")
    lengths = kept.lengths
    position = np.arange(kept.codes.size, dtype=np.int64) - np.repeat(kept.offsets[:-1], lengths)
    rows = np.repeat(np.arange(len(kept), dtype=np.int64), lengths)
    counted = np.bincount(rows[mask & (position < k)], minlength=len(kept))
    shown = np.minimum(lengths, k)
    defined = (shown > 0) & (np.diff(judged.offsets) > 0)
    if ok is not None:
        defined &= np.asarray(ok, dtype=np.bool_)
    shares: FloatArray = np.divide(counted, shown, out=np.full(len(kept), np.nan), where=defined)
    return shares


def unjudged_ranks(kept: Rankings, mask: BoolArray, k: int) -> Rankings:
    """Per question, the 1-based ranks among its first ``k`` distinct documents that carry no
    judgment (``mask`` from :func:`judged_mask`), as CSR ``Rankings`` of ranks."""
    lengths = kept.lengths
    position = np.arange(kept.codes.size, dtype=np.int64) - np.repeat(kept.offsets[:-1], lengths)
    rows = np.repeat(np.arange(len(kept), dtype=np.int64), lengths)
    pick = ~mask & (position < k)
    offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[pick], minlength=len(kept)), out=offsets[1:])
    return Rankings(offsets, position[pick] + 1)
