"""Reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

    score(d) = sum over rankings i of  w_i / (k + rank_i(d))

with ``rank_i(d)`` the 1-based position of ``d`` in ranking ``i`` (a document a ranking
does not hold adds nothing), ``k = 60`` as in the paper, and all weights 1 unless given.
Equal scores are ordered by id, so the fused ranking is deterministic.

Implemented here rather than taken from ranx, whose first ``fuse`` call compiles its
kernels for about 30 s; ``tests/test_fusion.py`` holds the two equal on real SciFact runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from goldeneval.core.errors import RetrieverError

__all__ = ["DEFAULT_RRF_K", "reciprocal_rank_fusion"]

DEFAULT_RRF_K = 60.0


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    *,
    k: float = DEFAULT_RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fused (id, score) pairs, best first.  A repeated id counts at its first position."""
    if not math.isfinite(k) or k < 0:
        raise RetrieverError(f"reciprocal rank fusion: k must be a finite number >= 0, got {k!r}")
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings):
        raise RetrieverError(f"reciprocal rank fusion: {len(weights)} weights given for {len(rankings)} rankings")
    if any(not math.isfinite(w) or w < 0 for w in weights):
        raise RetrieverError(f"reciprocal rank fusion: weights must be finite and >= 0, got {weights}")
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[str] = set()
        for rank, doc_id in enumerate(ranking, start=1):
            if doc_id in seen:
                continue
            seen.add(doc_id)
            scores[doc_id] = scores.get(doc_id, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
