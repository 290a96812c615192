"""Every declared metric against pytrec-eval-terrier (trec_eval), question by question, to
1e-9: on a real run (SciFact test split, 300 queries, the built-in lexical retriever), on a
generated graded collection at two relevance levels, and on random rankings with duplicate
chunks and tied grades (hypothesis).

trec_eval sorts a run by score, then by document id, so the distinct ranking is handed over
with strictly decreasing scores to keep its order.  MRR@k is trec_eval's ``recip_rank`` on
the ranking cut at depth k.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from goldeneval.core.corpus import load_corpus
from goldeneval.retrieval.beir import load_beir_set
from goldeneval.retrieval.evaluation import evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm
from goldeneval.retrieval.metrics import METRIC_KINDS, WHOLE_RANKING_KINDS, Metric, parse_metrics
from goldeneval.retrieval.retrievers.base import document_id_mapper
from goldeneval.retrieval.retrievers.lexical import LexicalRetriever
from goldeneval.retrieval.run import RetrievalRun
from goldeneval.retrieval.scoring import score_question

CUTOFFS = (1, 3, 5, 10, 100)
EVERY_METRIC = parse_metrics(
    [f"{kind.key}@{k}" for kind in METRIC_KINDS.values() if kind.takes_cutoff for k in CUTOFFS]
    + [kind.key for kind in METRIC_KINDS.values() if not kind.takes_cutoff and kind.key not in WHOLE_RANKING_KINDS]
)
"""Every metric at every cutoff, to depth 100; bpref and infAP, which measure to depth 1000,
are checked on their own run (:func:`scifact_whole_run`)."""
TOLERANCE = 1e-9


def _trec_measure(metric: Metric) -> str:
    return "recip_rank" if metric.kind.key == "mrr" else metric.trec_eval


def trec_eval_values(
    rankings: Mapping[str, Sequence[str]], qrels: dict[str, dict[str, int]], metric: Metric, level: int = 1
) -> dict[str, float]:
    """trec_eval's value of ``metric`` per query, for the distinct rankings as given."""
    depth = metric.k if metric.kind.key == "mrr" else None  # recip_rank has no cutoff of its own
    run = {
        qid: {doc: float(len(ranking) - rank) for rank, doc in enumerate(ranking[:depth])}
        for qid, ranking in rankings.items()
    }
    measure = _trec_measure(metric)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {measure}, relevance_level=level)
    results = evaluator.evaluate({qid: docs for qid, docs in run.items() if docs})
    # trec_eval leaves out a query with an empty ranking; every measure of it is 0
    return {qid: results.get(qid, {}).get(measure, 0.0) for qid in qrels}


def differences(run: RetrievalRun, qrels: dict[str, dict[str, int]], level: int = 1) -> dict[str, object]:
    rankings = {r.question_id: r.documents for r in run.results if r.question_id in qrels}
    found: dict[str, object] = {}
    for metric in run.metrics:
        expected = trec_eval_values(rankings, qrels, metric, level)
        for r in run.results:
            if r.question_id in qrels and abs(r.metrics[metric.name] - expected[r.question_id]) > TOLERANCE:
                found[f"{metric.name} {r.question_id}"] = (r.metrics[metric.name], expected[r.question_id])
    return found


class _Replay:
    def __init__(self, rankings: dict[str, list[str]]) -> None:
        self.rankings = rankings

    def retrieve(self, question: str, limit: int) -> list[str]:
        return self.rankings[question][:limit]


# --------------------------------------------------------------------------- SciFact


@pytest.fixture(scope="module")
def scifact_run(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> RetrievalRun:
    corpus = load_corpus(scifact_dir)
    golden = load_beir_set(scifact_dir, "test", corpus)
    retriever = LexicalRetriever(corpus, tmp_path_factory.mktemp("cache"))
    return evaluate_retrieval(golden, retriever, "goldeneval.lexical", hit_cutoffs=(), metrics=EVERY_METRIC)


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_the_real_run_scores_every_scifact_question_to_depth_100(scifact_run: RetrievalRun) -> None:
    assert len(scifact_run.results) == 300
    assert scifact_run.complete
    assert scifact_run.depth == 100
    depths = [r.depth for r in scifact_run.results]
    assert max(depths) == 100
    # BM25 ranks only documents sharing a term with the query: a few rankings end early
    assert sum(depth == 100 for depth in depths) >= 290
    assert set(scifact_run.short) == {r.question_id for r in scifact_run.results if r.depth < 100}


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_every_metric_equals_trec_eval_per_question_on_scifact(scifact_run: RetrievalRun) -> None:
    qrels = {r.question_id: dict.fromkeys(r.expected, 1) for r in scifact_run.results}
    with_cutoff = sum(kind.takes_cutoff for kind in METRIC_KINDS.values())
    without = len(METRIC_KINDS) - with_cutoff - len(WHOLE_RANKING_KINDS)
    assert len(scifact_run.metrics) == with_cutoff * len(CUTOFFS) + without
    assert differences(scifact_run, qrels) == {}


@pytest.fixture(scope="module")
def scifact_whole_run(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> RetrievalRun:
    corpus = load_corpus(scifact_dir)
    golden = load_beir_set(scifact_dir, "test", corpus)
    retriever = LexicalRetriever(corpus, tmp_path_factory.mktemp("cache"))
    metrics = parse_metrics(sorted(WHOLE_RANKING_KINDS))
    return evaluate_retrieval(golden, retriever, "goldeneval.lexical", hit_cutoffs=(), metrics=metrics)


@pytest.mark.slow  # the lexical retriever asked 1000 deep for 300 questions
def test_bpref_and_infap_equal_trec_eval_per_question_on_scifact_to_depth_1000(
    scifact_whole_run: RetrievalRun,
) -> None:
    assert scifact_whole_run.depth == 1000
    qrels = {r.question_id: dict.fromkeys(r.expected, 1) for r in scifact_whole_run.results}
    assert differences(scifact_whole_run, qrels) == {}


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_top1_and_top3_hits_equal_trec_eval_success(scifact_run: RetrievalRun) -> None:
    for r in scifact_run.results:
        assert (float(r.top1_hit), float(r.top3_hit)) == (r.metrics["hit@1"], r.metrics["hit@3"]), r.question_id


@pytest.mark.slow  # its module fixture's run is over the limit; whichever test comes first pays it (#44)
def test_lexical_lands_on_the_published_bm25s_figures(scifact_run: RetrievalRun) -> None:
    # ../shared/datasets/README.md: bm25s title+text, stopwords + Snowball, k1=1.5 b=0.75.
    assert round(scifact_run.aggregates.metrics["ndcg@10"], 4) == 0.6863
    assert round(scifact_run.aggregates.metrics["recall@100"], 4) == 0.9127


# --------------------------------------------------------------------------- graded


def graded_collection(seed: int, questions: int = 60, documents: int = 400) -> tuple[GoldenQuestionSet, _Replay]:
    """Questions with 1-8 judged documents graded 1-3 (ties common), rankings of 0-150 raw
    chunk ids over the documents (duplicates after collapse), some without any judged one."""
    rng = random.Random(seed)
    items, rankings = [], {}
    for i in range(questions):
        judged = rng.sample(range(documents), rng.randint(1, 8))
        grades = {f"d{d}": rng.choice((1, 1, 2, 3)) for d in judged}
        text = f"question {i}"
        items.append(
            GoldenQuestion(id=f"q{i}", text=text, form=QuestionForm.MATCH, expected=list(grades), grades=grades)
        )
        pool = judged + rng.sample(range(documents), 60)
        rankings[text] = [f"d{rng.choice(pool)}#{rng.randint(0, 2)}" for _ in range(rng.randint(0, 150))]
    return GoldenQuestionSet(id=f"graded-{seed}", questions=tuple(items)), _Replay(rankings)


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("seed", [1, 2])
def test_every_metric_equals_trec_eval_on_a_graded_collection(seed: int, level: int) -> None:
    golden, retriever = graded_collection(seed)
    run = evaluate_retrieval(
        golden, retriever, "replay", hit_cutoffs=(), metrics=EVERY_METRIC, relevance_level=level, timeout_s=None
    )
    qrels = {q.id: q.judgements for q in golden.questions}
    assert any(q.grades for q in golden.questions)
    assert differences(run, qrels, level) == {}


# --------------------------------------------------------------------------- properties

_documents = st.sampled_from([f"d{i}" for i in range(12)])


@settings(max_examples=150, deadline=None)
@given(
    raw=st.lists(st.builds(lambda d, c: f"{d}#{c}", _documents, st.integers(0, 3)), max_size=40),
    grades=st.dictionaries(_documents, st.integers(1, 3), min_size=1, max_size=6),
    level=st.integers(1, 3),
)
@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_random_rankings_with_duplicates_and_tied_grades_agree_with_trec_eval(
    raw: list[str], grades: dict[str, int], level: int
) -> None:
    question = GoldenQuestion(id="q", text="t", form=QuestionForm.MATCH, expected=list(grades), grades=grades)
    metrics = parse_metrics(
        [f"{k}@{c}" for k in ("hit", "mrr", "recall", "precision", "ndcg", "map") for c in (1, 4, 20)]
    )
    metrics += parse_metrics("rprec")
    result = score_question(question, raw, 1.0, document_id_mapper(), metrics, relevance_level=level)
    assert len(set(result.documents)) == len(result.documents)
    for metric in metrics:
        expected = trec_eval_values({"q": result.documents}, {"q": question.judgements}, metric, level)["q"]
        assert abs(result.metrics[metric.name] - expected) <= TOLERANCE, (metric.name, result.documents)
