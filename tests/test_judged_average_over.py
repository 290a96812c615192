"""``--average-over all-judged`` (issue 22's remaining item): trec_eval's averaging, over every
query of the qrels, a query judged only with grade 0 counting 0; the default unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goldeneval.core.privacy import PrivacyMode
from goldeneval.retrieval.evaluation import evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet
from goldeneval.retrieval.measurement import MEAN_OVER, MEAN_OVER_ALL_JUDGED
from goldeneval.retrieval.protocol import scoring_protocol
from goldeneval.retrieval.tables import hits_table, run_from_hits
from tests.conftest import CliWorkspace
from tests.test_trec_eval_cases import COLLECTION, FIXTURES, MEASURES, evaluate, outcome, pytrec


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_all_judged_averages_as_trec_eval_over_every_query_of_the_qrels(tmp_path: Path) -> None:
    document = outcome(tmp_path, COLLECTION, FIXTURES / "ties.run", "--average-over", "all-judged")
    reference = pytrec(COLLECTION, FIXTURES / "ties.run")
    assert set(reference) == {"q1", "q2", "q3"}
    measurement = document["measurement"]
    assert measurement["average_over"] == "all-judged"
    assert measurement["questions"] == 3  # q1, q2 and q3 (judged only with grade 0, counting 0)
    checked = 0
    for metric in measurement["metrics"]:
        assert metric["mean_over"] == MEAN_OVER_ALL_JUDGED
        if metric["name"] in MEASURES:
            every = [reference[q][MEASURES[metric["name"]]] for q in reference]
            assert metric["value"] == pytest.approx(sum(every) / len(every), abs=1e-9)
            checked += 1
    assert checked == len(MEASURES)
    assert document["run"]["benchmark_fingerprint"] is not None


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_default_is_unchanged_and_the_two_rules_are_two_benchmarks(tmp_path: Path) -> None:
    default = outcome(tmp_path, COLLECTION, FIXTURES / "ties.run")
    assert "average_over" not in default["measurement"]
    assert all(metric["mean_over"] == MEAN_OVER for metric in default["measurement"]["metrics"])
    trec = evaluate(tmp_path, COLLECTION, FIXTURES / "ties.run", "--average-over", "all-judged")
    document = json.loads(trec.stdout)
    assert document["verdict"]["state"] == "mismatch"
    assert "scoring protocol changed" in document["verdict"]["reason"]
    assert scoring_protocol(1, "all-judged") == "retrieval-hit-rate/v1(average_over=all-judged)"
    assert scoring_protocol(2, "all-judged") == "retrieval-hit-rate/v1(relevance_level=2,average_over=all-judged)"
    assert scoring_protocol(2) == "retrieval-hit-rate/v1(relevance_level=2)"


def test_a_bad_rule_is_a_usage_error(tmp_path: Path) -> None:
    result = evaluate(tmp_path, COLLECTION, FIXTURES / "ties.run", "--average-over", "everything")
    assert result.exit_code == 2
    assert "--average-over" in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_no_answer_question_with_judged_negatives_scores_0_under_all_judged(cli_workspace: CliWorkspace) -> None:
    questions: list[dict[str, Any]] = [
        {"id": "q1", "text": "alpha", "form": "MATCH", "expected": ["a"]},
        {"id": "q2", "text": "beta", "form": "GAP", "expected": [], "not_relevant": ["n"]},
        {"id": "q3", "text": "gamma", "form": "GAP", "expected": []},
    ]
    cli_workspace.write_set(questions)
    rankings = {"alpha": ["a"], "beta": ["n"], "gamma": ["x"]}
    default = json.loads(cli_workspace.evaluate(rankings, "--format", "json").stdout)
    assert default["measurement"]["no_answer"]["ids"] == ["q2", "q3"]
    assert default["aggregates"]["metrics"]["ndcg@10"] == 1.0
    trec = json.loads(cli_workspace.evaluate(rankings, "--format", "json", "--average-over", "all-judged").stdout)
    assert trec["measurement"]["no_answer"]["ids"] == ["q3"]  # q3 has no judgment at all: in no qrels
    assert trec["measurement"]["questions"] == 2
    assert trec["aggregates"]["metrics"]["ndcg@10"] == 0.5
    q2 = next(q for q in trec["questions"] if q["id"] == "q2")
    assert q2["metrics"]["ndcg@10"] == 0.0 and q2["metrics"]["recall@10"] == 0.0


def test_the_hits_table_keeps_the_rule() -> None:
    golden_set = GoldenQuestionSet(
        id="s",
        questions=(
            GoldenQuestion(id="q1", text="alpha", form="MATCH", expected={"a"}),
            GoldenQuestion(id="q2", text="beta", form="GAP", expected=frozenset(), not_relevant={"n"}),
        ),
        unjudged=("q9",),
    )

    class Fixed:
        def retrieve(self, question: str, limit: int) -> list[str]:
            return ["a"] if question == "alpha" else ["n"]

    run = evaluate_retrieval(golden_set, Fixed(), "fixed", average_over="all-judged")
    assert run.aggregates.metrics["ndcg@10"] == pytest.approx(1 / 3)  # q1 1, q2 0, q9 0
    rebuilt = run_from_hits(hits_table(run, PrivacyMode.FULL, "dagster-run"))
    assert rebuilt.average_over == "all-judged"
    assert rebuilt.aggregates.metrics == run.aggregates.metrics
    assert rebuilt.benchmark_fingerprint == run.benchmark_fingerprint
    assert rebuilt.details().average_over == "all-judged"
    plain = evaluate_retrieval(golden_set, Fixed(), "fixed")
    assert plain.aggregates.metrics["ndcg@10"] == 1.0
    assert "average_over" not in plain.details().to_json()


def test_a_chunk_separator_is_kept_through_the_hits_table() -> None:
    """A run read back from its hits table keeps its protocol: the separator is in the table's
    identity when it is not the default."""
    question = GoldenQuestion(id="q1", text="alpha", form="MATCH", expected={"a"})
    golden_set = GoldenQuestionSet(id="s", questions=(question,))

    class Chunks:
        def retrieve(self, question: str, limit: int) -> list[str]:
            return ["a::2", "b::1"]

    for separator, protocol in (("::", 'retrieval-hit-rate/v1(chunk_separator="::")'), ("#", "retrieval-hit-rate/v1")):
        run = evaluate_retrieval(golden_set, Chunks(), "chunks", chunk_separator=separator)
        assert run.details().protocol == protocol
        assert run.aggregates.overall.top1_hits == (1 if separator == "::" else 0)
        rebuilt = run_from_hits(hits_table(run, PrivacyMode.FULL, "dagster-run"))
        assert rebuilt.details().protocol == protocol
        assert rebuilt.benchmark_fingerprint == run.benchmark_fingerprint
