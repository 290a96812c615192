"""Per-question metrics against pytrec-eval-terrier (trec_eval) on a real run: SciFact test
split, 300 queries, the built-in lexical retriever.  Equal to 1e-9, question by question.

trec_eval sorts a run by score, then by document id, so the distinct ranking is handed over
with strictly decreasing scores to keep its order.  MRR@10 is trec_eval's ``recip_rank`` on
the ranking cut at depth 10; hit@k is ``success_k``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytrec_eval

from goldeneval.beir import load_beir_set
from goldeneval.corpus import load_corpus
from goldeneval.evaluation import RetrievalRun, evaluate_retrieval
from goldeneval.metrics import METRIC_DEPTH
from goldeneval.retrievers.lexical import LexicalRetriever

HIT_CUTOFFS = (1, 3, 5, 10)
TREC_NAMES = {
    **{f"hit@{k}": f"success_{k}" for k in HIT_CUTOFFS},
    "mrr@10": "recip_rank",
    "recall@10": "recall_10",
    "ndcg@10": "ndcg_cut_10",
}


@pytest.fixture(scope="module")
def scifact_run(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> RetrievalRun:
    corpus = load_corpus(scifact_dir)
    golden = load_beir_set(scifact_dir, "test", corpus)
    retriever = LexicalRetriever(corpus, tmp_path_factory.mktemp("cache"))
    return evaluate_retrieval(golden, retriever, "goldeneval.lexical", hit_cutoffs=HIT_CUTOFFS)


@pytest.fixture(scope="module")
def trec_values(scifact_run: RetrievalRun) -> dict[str, dict[str, float]]:
    qrels = {r.question_id: dict.fromkeys(r.expected, 1) for r in scifact_run.results}
    run = {
        r.question_id: {doc: float(METRIC_DEPTH - rank) for rank, doc in enumerate(r.documents[:METRIC_DEPTH])}
        for r in scifact_run.results
    }
    measures = {"success.1,3,5,10", "recip_rank", "recall.10", "ndcg_cut.10"}
    values: dict[str, dict[str, float]] = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    return values


def test_the_real_run_scores_every_scifact_question(scifact_run: RetrievalRun) -> None:
    assert len(scifact_run.results) == 300
    assert scifact_run.complete


@pytest.mark.parametrize("metric", sorted(TREC_NAMES))
def test_each_metric_equals_trec_eval_per_question(
    metric: str, scifact_run: RetrievalRun, trec_values: dict[str, dict[str, float]]
) -> None:
    differences = {
        r.question_id: (r.metrics[metric], trec_values[r.question_id][TREC_NAMES[metric]])
        for r in scifact_run.results
        if abs(r.metrics[metric] - trec_values[r.question_id][TREC_NAMES[metric]]) > 1e-9
    }
    assert differences == {}


def test_top1_and_top3_hits_equal_trec_eval_success(
    scifact_run: RetrievalRun, trec_values: dict[str, dict[str, float]]
) -> None:
    for r in scifact_run.results:
        assert (float(r.top1_hit), float(r.top3_hit)) == (
            trec_values[r.question_id]["success_1"],
            trec_values[r.question_id]["success_3"],
        ), r.question_id


def test_lexical_ndcg_at_10_lands_on_the_published_bm25s_figure(scifact_run: RetrievalRun) -> None:
    # ../shared/datasets/README.md: bm25s title+text, stopwords + Snowball, k1=1.5 b=0.75: 0.6863.
    assert scifact_run.aggregates.metrics["ndcg@10"] == pytest.approx(0.6863, abs=0.002)
