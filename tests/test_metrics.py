"""The metric registry and each metric on hand-computed cases; the differential check
against trec_eval lives in test_metrics_crosscheck."""

from __future__ import annotations

import math

import pytest

from goldeneval.retrieval.columnar import question_metrics
from goldeneval.retrieval.metrics import (
    DEFAULT_METRICS,
    MAX_CUTOFF,
    METRIC_KINDS,
    measurement_depth,
    parse_metric,
    parse_metrics,
)

RANKING = ("a", "b", "c", "d", "e")
BINARY = {"b": 1, "d": 1}
GRADED = {"b": 1, "d": 3, "z": 2}


def values(judgements: dict[str, int], names: str, level: int = 1) -> dict[str, float]:
    return question_metrics(RANKING, judgements, parse_metrics(names), level)


def test_reciprocal_rank_is_one_over_the_first_relevant_rank_within_the_cutoff() -> None:
    assert values(BINARY, "mrr@10,mrr@1") == {"mrr@10": 0.5, "mrr@1": 0.0}


def test_recall_and_precision_count_relevant_documents_within_the_cutoff() -> None:
    assert values(BINARY, "recall@3,recall@10") == {"recall@3": 0.5, "recall@10": 1.0}
    # precision divides by k even where the ranking is shorter (trec_eval's P_k)
    assert values(BINARY, "p@2,precision@10") == {"precision@2": 0.5, "precision@10": 0.2}


def test_binary_ndcg_uses_a_log2_discount() -> None:
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 / math.log2(2) + 1 / math.log2(3)
    assert values(BINARY, "ndcg@10")["ndcg@10"] == pytest.approx(dcg / ideal, abs=1e-15)


def test_graded_ndcg_takes_the_grade_as_gain_and_the_ideal_from_every_judged_grade() -> None:
    dcg = 1 / math.log2(3) + 3 / math.log2(5)
    ideal = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert values(GRADED, "ndcg@10")["ndcg@10"] == pytest.approx(dcg / ideal, abs=1e-15)


def test_map_and_r_precision() -> None:
    # relevant b (rank 2) and d (rank 4): precisions 1/2 and 2/4
    assert values(BINARY, "map@10,map@3,rprec") == {"map@10": 0.5, "map@3": 0.25, "rprec": 0.5}


def test_the_relevance_level_moves_binary_metrics_only() -> None:
    at_two = values(GRADED, "hit@1,hit@5,recall@10,rprec,ndcg@10", level=2)
    assert (at_two["hit@1"], at_two["hit@5"], at_two["recall@10"], at_two["rprec"]) == (0.0, 1.0, 0.5, 0.0)
    assert at_two["ndcg@10"] == values(GRADED, "ndcg@10")["ndcg@10"]


def test_a_judged_question_with_nothing_at_the_level_scores_zero_as_trec_eval_does() -> None:
    assert set(values({"b": 1}, "recall@10,map@10,rprec,hit@5", level=2).values()) == {0.0}


def test_a_question_without_judgements_has_no_metrics() -> None:
    assert question_metrics(RANKING, {}, DEFAULT_METRICS) == {}


@pytest.mark.parametrize(
    ("text", "name"),
    [("NDCG@10", "ndcg@10"), ("p@5", "precision@5"), ("R-precision", "rprec"), ("success@3", "hit@3")],
)
def test_metric_names_are_canonical(text: str, name: str) -> None:
    assert parse_metric(text).name == name


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("ndcg", "needs a cutoff"),
        ("rprec@10", "takes no cutoff"),
        ("recall@0", "from 1 to 1000"),
        (f"recall@{MAX_CUTOFF + 1}", "from 1 to 1000"),
        ("recall@ten", "from 1 to 1000"),
        ("gmap", "unknown metric 'gmap'"),
        (" , ", "at least one metric"),
    ],
)
def test_bad_metric_names_are_refused_with_the_reason(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_metrics(text)


def test_duplicates_are_kept_once_in_order() -> None:
    assert [m.name for m in parse_metrics("ndcg@10,recall@5,NDCG@10")] == ["ndcg@10", "recall@5"]


def test_the_depth_is_the_deepest_cutoff() -> None:
    assert measurement_depth(parse_metrics("ndcg@10,recall@100,rprec"), 3) == 100
    assert measurement_depth(parse_metrics("rprec"), 3) == 3


def test_every_kind_is_declared_with_a_definition_and_a_trec_eval_name() -> None:
    for kind in METRIC_KINDS.values():
        assert kind.definition and kind.trec_eval and kind.citation, kind.key
