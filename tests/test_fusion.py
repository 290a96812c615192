"""Reciprocal rank fusion: exact values worked out by hand, and equality with ranx's
``fuse(method="rrf")`` on a real pair of runs (SciFact lexical and dense, on a subset of
the corpus so that encoding it stays quick)."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeneval.core.corpus import Corpus, load_corpus
from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.beir import load_beir_set
from goldeneval.retrieval.golden import GoldenQuestionSet
from goldeneval.retrieval.retrievers.dense import DenseRetriever
from goldeneval.retrieval.retrievers.fusion import reciprocal_rank_fusion
from goldeneval.retrieval.retrievers.hybrid import HybridRetriever
from goldeneval.retrieval.retrievers.lexical import LexicalRetriever

SUBSET_QUERIES = 30
SUBSET_OTHER_DOCUMENTS = 300
DEPTH = 50


def test_rrf_scores_are_the_sum_of_reciprocal_ranks_plus_k() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "d"]], k=60)
    assert fused == [
        ("b", 1 / 62 + 1 / 61),
        ("a", 1 / 61),
        ("d", 1 / 62),
        ("c", 1 / 63),
    ]


def test_rrf_weights_scale_each_ranking_contribution() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b"], ["b", "a"]], k=1, weights=[2.0, 0.5]))
    assert fused == {"a": 2 / 2 + 0.5 / 3, "b": 2 / 3 + 0.5 / 2}


def test_rrf_orders_equal_scores_by_id() -> None:
    assert reciprocal_rank_fusion([["y"], ["x"]]) == [("x", 1 / 61), ("y", 1 / 61)]


def test_rrf_counts_a_repeated_id_at_its_first_position_only() -> None:
    assert reciprocal_rank_fusion([["a", "a", "b"]], k=0) == [("a", 1.0), ("b", 1 / 3)]


def test_rrf_needs_one_weight_per_ranking() -> None:
    with pytest.raises(RetrieverError, match="1 weights given for 2 rankings"):
        reciprocal_rank_fusion([["a"], ["b"]], weights=[1.0])


def test_rrf_rejects_a_negative_k() -> None:
    with pytest.raises(RetrieverError, match="k must be a finite number >= 0, got -1"):
        reciprocal_rank_fusion([["a"]], k=-1)


@pytest.fixture(scope="module")
def scifact_subset(scifact_dir: Path) -> tuple[Corpus, GoldenQuestionSet]:
    """The first 30 test queries, their targets and 300 other documents of SciFact."""
    full = load_corpus(scifact_dir)
    golden = load_beir_set(scifact_dir, "test", full)
    questions = golden.questions[:SUBSET_QUERIES]
    targets = set().union(*(q.expected for q in questions))
    others = [doc for doc in full if doc.id not in targets][:SUBSET_OTHER_DOCUMENTS]
    corpus = Corpus(tuple(doc for doc in full if doc.id in targets) + tuple(others))
    return corpus, golden.model_copy(update={"questions": questions})


@pytest.mark.scifact
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:unsafe cast from uint64 to int64")  # inside ranx's numba kernel
def test_rrf_equals_ranx_on_scifact_lexical_and_dense_runs(
    scifact_subset: tuple[Corpus, GoldenQuestionSet], tmp_path: Path
) -> None:
    from ranx import Run, fuse  # imported here: ranx compiles its kernels on first use (~30 s)

    corpus, golden = scifact_subset
    hybrid = HybridRetriever(LexicalRetriever(corpus, tmp_path), DenseRetriever(corpus, tmp_path, progress=False))
    lexical_run: dict[str, dict[str, float]] = {}
    dense_run: dict[str, dict[str, float]] = {}
    ours: dict[str, dict[str, float]] = {}
    for question in golden.questions:
        lexical, dense = hybrid.rankings(question.text, DEPTH)
        lexical_run[question.id] = {doc: float(DEPTH - rank) for rank, doc in enumerate(lexical)}
        dense_run[question.id] = {doc: float(DEPTH - rank) for rank, doc in enumerate(dense)}
        ours[question.id] = dict(reciprocal_rank_fusion([lexical, dense], k=60))
    assert all(lexical_run.values()) and all(len(r) == DEPTH for r in dense_run.values())
    assert any(list(lexical_run[q])[:10] != list(dense_run[q])[:10] for q in ours)  # a real fusion

    theirs = fuse(
        [Run.from_dict(lexical_run), Run.from_dict(dense_run)], norm=None, method="rrf", params={"k": 60}
    ).to_dict()

    assert theirs.keys() == ours.keys()
    for query_id, scores in ours.items():
        assert theirs[query_id].keys() == scores.keys(), query_id
        for doc_id, score in scores.items():
            assert theirs[query_id][doc_id] == pytest.approx(score, rel=1e-12, abs=0), (query_id, doc_id)
