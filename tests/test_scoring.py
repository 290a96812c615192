"""Scoring protocol v1, rule by rule, on hand-computed cases (ADR-072 decision 3)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from goldeneval.core.forms import NO_HARD_CLASS
from goldeneval.retrieval.evaluation import evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm
from goldeneval.retrieval.metrics import parse_metrics
from goldeneval.retrieval.protocol import OVERFETCH_MULTIPLIER, TOP_K
from goldeneval.retrieval.results import QuestionResult, QuestionStatus, aggregate
from goldeneval.retrieval.retrievers.base import document_id_mapper
from goldeneval.retrieval.scoring import score_question

to_doc = document_id_mapper("#")


def question(
    expected: Sequence[str], *, qid: str = "q", form: str = "MATCH", hard_class: str | None = None
) -> GoldenQuestion:
    return GoldenQuestion(
        id=qid,
        text=f"text of {qid}",
        form=QuestionForm(form),
        expected=frozenset(expected),
        hard_class=hard_class,
    )


class ScriptedRetriever:
    """Returns a fixed ranking per question text and records the limits it was asked for."""

    def __init__(self, rankings: dict[str, Sequence[str] | Exception]) -> None:
        self.rankings = rankings
        self.limits: list[int] = []

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        self.limits.append(limit)
        answer = self.rankings[question]
        if isinstance(answer, Exception):
            raise answer
        return answer


def collapsed(returned_ids: Sequence[str]) -> tuple[str, ...]:
    """The distinct documents the one scoring path (goldeneval.retrieval.columnar) keeps of a ranking."""
    return score_question(question(["a"]), returned_ids, 0.0, to_doc).documents


def test_duplicates_collapse_to_their_first_occurrence() -> None:
    assert collapsed(["a", "b", "a", "c", "b", "d"]) == ("a", "b", "c", "d")


def test_chunk_ids_collapse_to_one_document_by_prefix() -> None:
    assert collapsed(["doc-1#0", "doc-1#3", "doc-2#1", "doc-1#9", "doc-3"]) == ("doc-1", "doc-2", "doc-3")


def test_top1_hit_needs_the_first_distinct_document_expected() -> None:
    result = score_question(question(["b"]), ["a", "b"], 1.0, to_doc)
    assert (result.top1_hit, result.top3_hit) == (False, True)


def test_top3_counts_three_distinct_documents_even_when_chunks_repeat() -> None:
    # Raw ranking: five chunks of x, then y, then the target z: z is the third distinct document.
    raw = ["x#1", "x#2", "x#3", "x#4", "x#5", "y#1", "z#1", "w#1"]
    result = score_question(question(["z"]), raw, 1.0, to_doc)
    assert result.top_documents == ("x", "y", "z")
    assert (result.top1_hit, result.top3_hit) == (False, True)


def test_a_target_fourth_among_distinct_documents_is_a_miss() -> None:
    result = score_question(question(["d"]), ["a", "b", "a", "c", "d"], 1.0, to_doc)
    assert (result.top1_hit, result.top3_hit) == (False, False)


def test_any_of_several_targets_is_a_hit() -> None:
    result = score_question(question(["c", "q"]), ["a", "b", "c"], 1.0, to_doc)
    assert (result.top1_hit, result.top3_hit) == (False, True)


def test_no_answer_question_hits_only_when_nothing_is_returned() -> None:
    empty = score_question(question([]), [], 1.0, to_doc)
    something = score_question(question([]), ["a"], 1.0, to_doc)
    assert (empty.top1_hit, empty.top3_hit) == (True, True)
    assert (something.top1_hit, something.top3_hit) == (False, False)


def test_no_answer_question_has_no_rank_metrics() -> None:
    assert score_question(question([]), [], 1.0, to_doc).metrics == {}


def test_an_empty_ranking_misses_a_question_with_targets() -> None:
    result = score_question(question(["a"]), [], 1.0, to_doc)
    assert (result.top1_hit, result.top3_hit) == (False, False)


ONE_QUESTION = GoldenQuestionSet(id="s", questions=(question(["a"]),))


def test_the_evaluator_asks_for_the_overfetched_depth_when_the_metrics_are_shallower() -> None:
    retriever = ScriptedRetriever({"text of q": ["a"]})
    evaluate_retrieval(ONE_QUESTION, retriever, "scripted", hit_cutoffs=(1, 3), metrics=parse_metrics("ndcg@10"))
    assert retriever.limits == [TOP_K * OVERFETCH_MULTIPLIER]


def test_the_evaluator_asks_for_the_deepest_cutoff() -> None:
    retriever = ScriptedRetriever({"text of q": [f"d{i}" for i in range(250)]})
    run = evaluate_retrieval(ONE_QUESTION, retriever, "scripted", hit_cutoffs=(1,), metrics=parse_metrics("recall@250"))
    assert retriever.limits == [250]
    assert (run.depth, run.results[0].depth, run.short) == (250, 250, ())


def test_chunks_that_collapse_below_the_depth_are_overfetched_again() -> None:
    """Each document three times in a row: 100 raw ids hold 34 documents, so the evaluator
    asks for 10x as many, and @100 metrics see 100 distinct documents."""
    chunks = [f"d{i}#{c}" for i in range(400) for c in range(3)]
    retriever = ScriptedRetriever({"text of q": chunks})
    run = evaluate_retrieval(ONE_QUESTION, retriever, "scripted", metrics=parse_metrics("recall@100"))
    assert retriever.limits == [100, 1000]
    assert run.results[0].documents == tuple(f"d{i}" for i in range(100))


def test_a_ranking_that_runs_out_is_not_asked_again_and_is_flagged_short() -> None:
    retriever = ScriptedRetriever({"text of q": ["a#0", "a#1", "b"]})
    run = evaluate_retrieval(ONE_QUESTION, retriever, "scripted", metrics=parse_metrics("ndcg@10,recall@100"))
    assert retriever.limits == [100]
    assert (run.results[0].depth, run.short) == (2, ("q",))


def test_the_protocol_looks_only_at_the_first_overfetched_ids() -> None:
    """ADR-072 asks for TOP_K x 10 raw ids: a target first seen past them is no top-3 hit,
    though the deeper ranking reaches it (and the rank metrics count it)."""
    raw = ["x#0"] * (TOP_K * OVERFETCH_MULTIPLIER) + ["a"]
    result = score_question(question(["a"]), raw, 1.0, to_doc, parse_metrics("hit@3"))
    assert (result.top3_hit, result.documents, result.metrics["hit@3"]) == (False, ("x", "a"), 1.0)


def test_a_retriever_error_is_an_error_not_a_miss() -> None:
    golden = GoldenQuestionSet(id="s", questions=(question(["a"], qid="ok"), question(["a"], qid="boom")))
    retriever = ScriptedRetriever({"text of ok": ["a"], "text of boom": RuntimeError("index offline")})
    run = evaluate_retrieval(golden, retriever, "scripted")
    failed = run.results[1]
    assert failed.status is QuestionStatus.ERROR
    assert failed.error == "RuntimeError: index offline"
    assert run.status == "incomplete"
    assert run.aggregates.overall.to_dict() == {
        "questions": 2,
        "scored": 1,
        "errors": 1,
        "top1_hits": 1,
        "top3_hits": 1,
        "top1_rate": 1.0,
        "top3_rate": 1.0,
    }


def test_a_slow_question_times_out_as_an_error() -> None:
    class Slow:
        def retrieve(self, question: str, limit: int) -> Sequence[str]:
            if question == "text of slow":
                import time

                time.sleep(2)
            return ["a"]

    golden = GoldenQuestionSet(id="s", questions=(question(["a"], qid="slow"), question(["a"], qid="fast")))
    run = evaluate_retrieval(golden, Slow(), "slow", timeout_s=0.2)
    assert [r.status for r in run.results] == [QuestionStatus.ERROR, QuestionStatus.OK]
    assert run.results[0].error == "timed out after 0.2 s"
    assert run.results[0].latency_ms >= 200


def test_a_ranking_that_is_not_a_list_of_strings_is_an_error() -> None:
    golden = GoldenQuestionSet(id="s", questions=(question(["a"]),))
    retriever = ScriptedRetriever({"text of q": [1, 2]})  # type: ignore[list-item]
    run = evaluate_retrieval(golden, retriever, "bad")
    assert run.results[0].error == "TypeError: retrieve() returned a non-string id 1"


def test_latency_is_recorded_per_question() -> None:
    golden = GoldenQuestionSet(id="s", questions=(question(["a"]),))
    run = evaluate_retrieval(golden, ScriptedRetriever({"text of q": ["a"]}), "x")
    assert run.results[0].latency_ms > 0


@pytest.fixture
def mixed_results() -> list[QuestionResult]:
    cases = [
        (question(["a"], qid="m1", form="MATCH", hard_class="normal"), ["a"]),  # hit, hit
        (question(["b"], qid="m2", form="MATCH", hard_class="prose-free"), ["a", "b"]),  # miss, hit
        (question(["z"], qid="g1", form="GAP", hard_class="normal"), ["a", "b", "c"]),  # miss, miss
        (question([], qid="g2", form="GAP"), []),  # no-answer hit, hit
    ]
    return [score_question(q, ranking, 1.0, to_doc) for q, ranking in cases]


def test_aggregates_give_rates_overall_by_form_and_by_hard_class(mixed_results: list[QuestionResult]) -> None:
    aggregates = aggregate(mixed_results)
    assert (aggregates.overall.top1_rate, aggregates.overall.top3_rate) == (0.5, 0.75)
    assert {k: (v.questions, v.top1_rate, v.top3_rate) for k, v in aggregates.by_form.items()} == {
        "GAP": (2, 0.5, 0.5),
        "MATCH": (2, 0.5, 1.0),
    }
    assert {k: (v.questions, v.top1_rate, v.top3_rate) for k, v in aggregates.by_hard_class.items()} == {
        NO_HARD_CLASS: (1, 1.0, 1.0),
        "normal": (2, 0.5, 0.5),
        "prose-free": (1, 0.0, 1.0),
    }


def test_rank_metric_means_skip_questions_without_targets(mixed_results: list[QuestionResult]) -> None:
    aggregates = aggregate(mixed_results)
    # mrr@10 over m1 (1.0), m2 (0.5), g1 (0.0); g2 has no targets and no metrics.
    assert aggregates.metrics["mrr@10"] == pytest.approx(0.5)
