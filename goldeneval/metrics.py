"""Rank metrics over one question's distinct document ranking, with binary relevance.

Beyond ADR-072 (reported, not gated): hit@k, MRR@k, Recall@k and nDCG@k.  Their
definitions are trec_eval's (``success``, ``recip_rank`` on a depth-k run, ``recall``,
``ndcg_cut``); ``tests/test_metrics_crosscheck.py`` holds them equal to pytrec-eval to 1e-9.
They are undefined for a question without relevant documents, as in trec_eval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["METRIC_DEPTH", "rank_metrics"]

METRIC_DEPTH = 10
"""Cutoff of MRR, Recall and nDCG."""


def hit_at(ranking: Sequence[str], relevant: frozenset[str], k: int) -> float:
    return 1.0 if any(doc in relevant for doc in ranking[:k]) else 0.0


def reciprocal_rank_at(ranking: Sequence[str], relevant: frozenset[str], k: int) -> float:
    for rank, doc in enumerate(ranking[:k], start=1):
        if doc in relevant:
            return 1.0 / rank
    return 0.0


def recall_at(ranking: Sequence[str], relevant: frozenset[str], k: int) -> float:
    return sum(1 for doc in ranking[:k] if doc in relevant) / len(relevant)


def ndcg_at(ranking: Sequence[str], relevant: frozenset[str], k: int) -> float:
    dcg = sum(1.0 / math.log2(rank + 1) for rank, doc in enumerate(ranking[:k], 1) if doc in relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return dcg / ideal


def rank_metrics(ranking: Sequence[str], relevant: frozenset[str], hit_cutoffs: Sequence[int]) -> dict[str, float]:
    """All metrics of one question; empty when ``relevant`` is empty (undefined)."""
    if not relevant:
        return {}
    values = {f"hit@{k}": hit_at(ranking, relevant, k) for k in hit_cutoffs}
    values[f"mrr@{METRIC_DEPTH}"] = reciprocal_rank_at(ranking, relevant, METRIC_DEPTH)
    values[f"recall@{METRIC_DEPTH}"] = recall_at(ranking, relevant, METRIC_DEPTH)
    values[f"ndcg@{METRIC_DEPTH}"] = ndcg_at(ranking, relevant, METRIC_DEPTH)
    return values
