"""Rank metrics on hand-computed cases; the SciFact cross-check lives in test_metrics_crosscheck."""

from __future__ import annotations

import math

import pytest

from goldeneval.metrics import ndcg_at, rank_metrics, recall_at, reciprocal_rank_at

RELEVANT = frozenset({"b", "d"})
RANKING = ("a", "b", "c", "d", "e")


def test_reciprocal_rank_is_one_over_the_first_relevant_rank() -> None:
    assert reciprocal_rank_at(RANKING, RELEVANT, 10) == 0.5


def test_reciprocal_rank_is_zero_past_the_cutoff() -> None:
    assert reciprocal_rank_at(RANKING, RELEVANT, 1) == 0.0


def test_recall_counts_relevant_documents_within_the_cutoff() -> None:
    assert recall_at(RANKING, RELEVANT, 3) == 0.5
    assert recall_at(RANKING, RELEVANT, 10) == 1.0


def test_ndcg_uses_binary_gains_and_a_log2_discount() -> None:
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at(RANKING, RELEVANT, 10) == pytest.approx(dcg / ideal, abs=1e-15)


def test_hit_at_k_for_each_configured_cutoff() -> None:
    values = rank_metrics(RANKING, RELEVANT, (1, 2, 4))
    assert (values["hit@1"], values["hit@2"], values["hit@4"]) == (0.0, 1.0, 1.0)
