"""judged@k (issue 23): the share of each ranking that carries a judgment, in the scores, the
table, the JSON, the store and the hits table; the verdict's coverage note; ``--min-judged``."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from goldeneval.core.errors import StoreError
from goldeneval.core.gate import RegressionThresholds
from goldeneval.core.privacy import PrivacyMode
from goldeneval.retrieval import columnar
from goldeneval.retrieval.details import parse_details_json, retrieval_details
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm
from goldeneval.retrieval.measurement import judged_values
from goldeneval.retrieval.scoring import score_answers
from goldeneval.retrieval.tables import hits_table, run_from_hits
from goldeneval.store import ResultStore, StoredRun
from goldeneval.suite import ThresholdsConfig
from tests.conftest import CliWorkspace

NEGATIVE_QUESTIONS: list[dict[str, Any]] = [
    {"id": "q1", "text": "alpha", "form": "MATCH", "expected": ["a"], "not_relevant": ["n1", "n2"]},
    {"id": "q2", "text": "beta", "form": "GAP", "expected": ["b"], "not_relevant": ["n3"]},
    {"id": "q3", "text": "gamma", "form": "GAP", "expected": [], "not_relevant": ["n4"]},
    {"id": "q4", "text": "delta", "form": "MATCH", "expected": ["d"]},
]
JUDGED = {"alpha": ["a", "n1", "n2"], "beta": ["b", "n3", "x"], "gamma": ["n4"], "delta": ["d", "n1", "y"]}
"""judged@3: q1 1, q2 2/3 (x), q3 1, q4 1/3 (n1 is judged for q1 only, y for nobody): 0.75."""
UNJUDGED = {
    "alpha": ["u1", "a", "u2"],
    "beta": ["b", "n3", "x"],
    "gamma": ["u3", "n4"],
    "delta": ["u4", "u5", "u6", "d"],
}
"""judged@3: q1 1/3, q2 2/3, q3 1/2, q4 0 (its d falls to rank 4: newly failing)."""
JUDGED_AT_3 = 0.75
UNJUDGED_AT_3 = (1 / 3 + 2 / 3 + 1 / 2 + 0) / 4


def _judged_at_reference(ranking: list[str], judged: set[str], k: int) -> float:
    """ir_measures' JudgedEvaluator, written out: of the first min(k, len) documents, the share judged."""
    top = ranking[:k]
    return sum(doc in judged for doc in top) / len(top)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_judged_at_equals_the_ir_measures_definition_on_random_runs() -> None:
    generator = random.Random(23)
    for _ in range(200):
        vocabulary = [f"d{i}" for i in range(generator.randint(1, 30))]
        n = generator.randint(1, 12)
        rankings = [generator.sample(vocabulary, generator.randint(0, len(vocabulary))) for _ in range(n)]
        judged = [set(generator.sample(vocabulary, generator.randint(0, len(vocabulary)))) for _ in range(n)]
        coded = columnar.encode(rankings, [sorted(j) for j in judged])
        kept = columnar.collapse(coded.rankings)
        mask = columnar.judged_mask(kept, coded.judgements)
        for k in (1, 3, 10):
            values = columnar.judged_at(kept, coded.judgements, mask, k)
            for i in range(n):
                if not rankings[i] or not judged[i]:
                    assert math.isnan(values[i])  # ir_measures leaves such a query out
                else:
                    assert values[i] == pytest.approx(_judged_at_reference(rankings[i], judged[i], k), abs=1e-12)
        ranks = columnar.unjudged_ranks(kept, mask, 3)
        for i in range(n):
            expected = [r for r, doc in enumerate(rankings[i][:3], start=1) if doc not in judged[i]]
            assert ranks.row(i).tolist() == expected


def _stored(store: ResultStore, run_id: str) -> StoredRun:
    stored = store.get_run(run_id)
    assert stored is not None
    return stored


def _questions() -> list[GoldenQuestion]:
    return [GoldenQuestion.model_validate(q) for q in NEGATIVE_QUESTIONS]


def test_scoring_reports_judged_at_over_distinct_documents_and_leaves_errors_out() -> None:
    questions = _questions()
    returned = [["a", "a#2", "n1", "u1"], ["x", "b"], ["n4"], ["d"]]
    scored = score_answers(questions, returned, [None, None, None, "boom"], [1.0] * 4, lambda raw: raw.split("#")[0])
    shares = scored.judged_at["judged@3"]
    assert shares[:3].tolist() == pytest.approx([2 / 3, 1 / 2, 1.0])
    assert math.isnan(shares[3])  # an error has no share
    assert scored.results[0].unjudged_ranks == (3,)
    assert scored.results[0].judged_at["judged@1"] == 1.0
    assert "judged@3" not in scored.results[3].judged_at


def test_a_set_without_judged_negatives_reports_no_judged_at() -> None:
    question = GoldenQuestion(id="q", text="t", form=QuestionForm.MATCH, expected=frozenset({"a"}))
    scored = score_answers([question], [["a", "b"]], [None], [1.0], lambda raw: raw)
    assert scored.judged_at == {} and scored.unjudged is None


def _evaluate(workspace: CliWorkspace, rankings: dict[str, list[str]], *extra: str) -> Result:
    result = workspace.evaluate(rankings, *extra)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


@pytest.fixture
def negatives(cli_workspace: CliWorkspace) -> CliWorkspace:
    cli_workspace.write_set(NEGATIVE_QUESTIONS, set_id="negatives")
    return cli_workspace


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_table_shows_judged_at_per_question_overall_and_by_form(negatives: CliWorkspace) -> None:
    result = _evaluate(negatives, UNJUDGED)
    assert result.exit_code == 0, result.output
    table = result.output
    header = next(line for line in table.splitlines() if line.startswith("question"))
    assert "judged@3" in header
    q1 = next(line for line in table.splitlines() if line.startswith("q1 "))
    assert "0.333" in q1
    assert "Judged (label coverage, reported, not gated) over 4 questions:" in table
    judged = table.split("Judged (label coverage")[1]
    overall = next(line for line in judged.splitlines() if line.strip().startswith("all "))
    assert f"{UNJUDGED_AT_3:.3f}" in overall


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_set_without_judged_negatives_keeps_its_table_json_and_stored_details(cli_workspace: CliWorkspace) -> None:
    result = cli_workspace.evaluate({"alpha": ["a"], "beta": ["x"], "gamma": []}, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert "judged" not in document and "label_coverage" not in document["verdict"]
    assert all("judged_at" not in q and "unjudged_ranks" not in q for q in document["questions"])
    store = ResultStore(cli_workspace.store)
    raw = json.loads(_stored(store, store.list_runs()[0].id).details_json or "")
    assert raw["format_version"] == 4 and "judged" not in raw
    assert judged_values(parse_details_json(json.dumps(raw), "plain run")) == {}
    assert "judged_at" not in raw["questions"] and "unjudged_ranks" not in raw["questions"]
    text = cli_workspace.evaluate({"alpha": ["a"], "beta": ["x"], "gamma": []}).output
    assert "judged@" not in text and "Judged (label coverage" not in text


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_json_and_the_store_hold_judged_at_and_read_it_back(negatives: CliWorkspace) -> None:
    result = _evaluate(negatives, UNJUDGED, "--format", "json")
    document = json.loads(result.output)
    judged = document["judged"]
    assert judged["cutoffs"] == [1, 3, 5, 10, 100]  # 3 and every cutoff the run reports
    assert judged["questions"] == 4
    assert judged["overall"]["judged@3"] == pytest.approx(UNJUDGED_AT_3)
    assert judged["by_form"]["GAP"]["judged@3"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert "ir_measures" in judged["definition"]
    by_id = {q["id"]: q for q in document["questions"]}
    assert by_id["q1"]["judged_at"]["judged@3"] == pytest.approx(1 / 3)
    assert by_id["q4"]["unjudged_ranks"] == [1, 2, 3]
    stored = _stored(ResultStore(negatives.store), document["run"]["id"])
    details = retrieval_details(stored)
    assert details.format_version == 5
    assert details.judged_share() == pytest.approx(judged["overall"]["judged@3"])
    assert details.unjudged_top() == {"q1": ["u1", "u2"], "q2": ["x"], "q3": ["u3"], "q4": ["u4", "u5", "u6"]}
    assert parse_details_json(details.to_json_text(), "again") == details
    values = judged_values(details)
    assert values["judged/judged@3"] == pytest.approx(UNJUDGED_AT_3)
    assert values["form=GAP/judged@3"] == pytest.approx((2 / 3 + 1 / 2) / 2)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_judged_cutoffs_are_3_and_the_cutoffs_the_run_reports(negatives: CliWorkspace) -> None:
    document = json.loads(
        _evaluate(negatives, JUDGED, "--format", "json", "--hit-k", "2", "--metrics", "ndcg@7").output
    )
    assert document["judged"]["cutoffs"] == [2, 3, 7]
    assert document["judged"]["overall"]["judged@3"] == pytest.approx(JUDGED_AT_3)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_metadata_only_keeps_the_shares_but_no_document_id(negatives: CliWorkspace) -> None:
    _evaluate(negatives, JUDGED, "--privacy", "metadata_only")
    result = _evaluate(negatives, UNJUDGED, "--privacy", "metadata_only", "--format", "json")
    document = json.loads(result.output)
    assert document["judged"]["overall"]["judged@3"] < 1
    coverage = document["verdict"]["label_coverage"]
    assert coverage["newly_failing_unjudged"] == {}
    assert coverage["newly_unjudged_questions"] >= 1
    store = ResultStore(negatives.store)
    for stored in store.list_runs():
        text = _stored(store, stored.id).details_json or ""
        for doc in ("u1", "u2", "u3", "u4", "u5", "n1", "n3", "n4"):
            assert f'"{doc}"' not in text
    assert "u1" not in result.output and "u4" not in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_verdict_names_the_unjudged_documents_of_newly_failing_questions(negatives: CliWorkspace) -> None:
    baseline = _evaluate(negatives, JUDGED)
    assert baseline.exit_code == 0
    result = _evaluate(negatives, UNJUDGED, "--max-top1-drop", "1", "--max-top3-drop", "1")
    lines = result.output.splitlines()
    coverage = next(line for line in lines if "judged@3:" in line)
    assert f"{JUDGED_AT_3:.3f} -> {UNJUDGED_AT_3:.3f}" in coverage
    assert any("top-3 hold documents nobody judged" in line and "goldeneval pool" in line for line in lines)
    assert "--retriever fixed_rankings_plugin:build" in result.output
    # q4's expected document fell out of the top-3: newly failing, its unjudged top-3 named
    assert any(line.strip() == "newly failing q4: unjudged u4, u5, u6" for line in lines)
    assert not any(line.strip().startswith("newly failing q1:") for line in lines)


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_min_judged_makes_a_comparison_below_it_unknown_and_exit_6(negatives: CliWorkspace) -> None:
    # the baseline reaches its threshold (judged@3 0.75): a baseline below it fails the gate (issue 40)
    assert _evaluate(negatives, JUDGED, "--min-judged", "0.75", "--fail-on-regression").exit_code == 0
    result = _evaluate(negatives, UNJUDGED, "--min-judged", "0.9", "--fail-on-regression", "--format", "json")
    assert result.exit_code == 6, result.output
    verdict = json.loads(result.output)["verdict"]
    assert verdict["status"] == "unknown"
    assert verdict["reason"].startswith("labels incomplete for this run: judged@3 0.375 is below min_judged 0.9")
    assert verdict["changes"] == [] and verdict["paired"] == []
    assert verdict["label_coverage"]["judged_at_3"] == pytest.approx(UNJUDGED_AT_3)
    plain = _evaluate(negatives, UNJUDGED, "--min-judged", "0.9")
    assert plain.exit_code == 0
    assert "Not compared (unknown): labels incomplete for this run" in plain.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_first_run_below_min_judged_is_the_baseline_says_so_and_exits_6(negatives: CliWorkspace) -> None:
    result = _evaluate(negatives, JUDGED, "--min-judged", "0.9", "--fail-on-regression", "--format", "json")
    assert result.exit_code == 6, result.output
    document = json.loads(result.output)
    verdict = document["verdict"]
    assert verdict["status"] == "baseline" and verdict["state"] == "baseline"
    assert (
        "this run is the baseline; labels incomplete for this run: judged@3 0.750 is below min_judged 0.9"
        in (verdict["reason"])
    )
    assert verdict["labels_incomplete"]["judged_at_3"] == pytest.approx(JUDGED_AT_3)
    assert verdict["labels_incomplete"]["min_judged"] == 0.9
    # it was stored as the baseline: the next run is compared with it
    after = _evaluate(negatives, JUDGED, "--fail-on-regression", "--format", "json")
    assert after.exit_code == 0, after.output
    assert json.loads(after.output)["verdict"]["previous_run_id"] == document["run"]["id"]


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_first_run_below_min_judged_says_so_in_one_line_without_the_gate(negatives: CliWorkspace) -> None:
    result = _evaluate(negatives, JUDGED, "--min-judged", "0.9")
    assert result.exit_code == 0, result.output
    [line] = [line for line in result.output.splitlines() if line.startswith("Regression verdict:")]
    assert line.startswith("Regression verdict: baseline: first complete run")
    assert "judged@3 0.750 is below min_judged 0.9" in line
    assert "a baseline the labels cannot judge fails the gate" in line


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_first_run_reaching_min_judged_is_a_plain_baseline(negatives: CliWorkspace) -> None:
    result = _evaluate(negatives, JUDGED, "--min-judged", "0.75", "--fail-on-regression", "--format", "json")
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.output)["verdict"]
    assert verdict["status"] == "baseline" and "labels_incomplete" not in verdict
    assert "labels incomplete" not in verdict["reason"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_min_judged_reached_leaves_the_numeric_verdict(negatives: CliWorkspace) -> None:
    _evaluate(negatives, JUDGED)
    result = _evaluate(negatives, JUDGED, "--min-judged", "0.75", "--fail-on-regression")
    assert result.exit_code == 0, result.output
    assert "Regression verdict: pass" in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_min_judged_on_a_set_without_judged_negatives_is_unknown(cli_workspace: CliWorkspace) -> None:
    rankings = {"alpha": ["a"], "beta": ["b"], "gamma": []}
    cli_workspace.evaluate(rankings)
    result = cli_workspace.evaluate(rankings, "--min-judged", "0.5", "--fail-on-regression")
    assert result.exit_code == 6
    assert "labels incomplete for this run: judged@3 was not measured" in result.output


@pytest.mark.parametrize("value", ["1.5", "-0.1", "nan"])
def test_a_bad_min_judged_is_a_usage_error(cli_workspace: CliWorkspace, value: str) -> None:
    result = cli_workspace.evaluate({"alpha": ["a"], "beta": ["b"], "gamma": []}, "--min-judged", value)
    assert result.exit_code == 2
    assert "--min-judged" in result.output
    assert not cli_workspace.store.exists()


def test_the_suite_field_sets_the_same_threshold() -> None:
    assert ThresholdsConfig(min_judged=0.9).min_judged == 0.9
    with pytest.raises(ValueError, match="min_judged"):
        ThresholdsConfig(min_judged=1.5)
    with pytest.raises(ValueError, match="min_judged must lie between 0 and 1"):
        RegressionThresholds(min_judged=2.0)


def test_the_hits_table_carries_judged_at_back_into_the_record(tmp_path: Path) -> None:
    golden_set = GoldenQuestionSet(id="negatives", questions=tuple(_questions()))
    from goldeneval.retrieval.evaluation import evaluate_retrieval

    class Fixed:
        def retrieve(self, question: str, limit: int) -> list[str]:
            return UNJUDGED[question][:limit]

    run = evaluate_retrieval(golden_set, Fixed(), "fixed")
    for privacy in PrivacyMode:
        rebuilt = run_from_hits(hits_table(run, privacy, "dagster-run"))
        assert rebuilt.judged == run.judged
        details = rebuilt.details(privacy)
        assert details.judged == run.details(privacy).judged
        assert details.columns.judged_at == run.details(privacy).columns.judged_at
        assert details.columns.unjudged_ranks == run.details(privacy).columns.unjudged_ranks
    plain = evaluate_retrieval(
        GoldenQuestionSet(id="p", questions=(GoldenQuestion(id="q", text="alpha", form="MATCH", expected={"a"}),)),
        Fixed(),
        "fixed",
    )
    table = hits_table(plain, PrivacyMode.FULL, "dagster-run")
    assert "judged_at" not in table.column_names and "unjudged_ranks" not in table.column_names
    assert run_from_hits(table).judged is None


def test_old_format_4_details_still_read() -> None:
    golden_set = GoldenQuestionSet(
        id="p", questions=(GoldenQuestion(id="q", text="alpha", form=QuestionForm.MATCH, expected=frozenset({"a"})),)
    )
    from goldeneval.retrieval.evaluation import evaluate_retrieval

    class Fixed:
        def retrieve(self, question: str, limit: int) -> list[str]:
            return ["a"]

    text = evaluate_retrieval(golden_set, Fixed(), "fixed").details().to_json_text()
    details = parse_details_json(text, "old run")
    assert details.format_version == 4 and details.judged is None
    assert details.judged_share() is None and details.unjudged_top() is None
    raw = json.loads(text)
    raw["judged"] = {"cutoffs": [3], "measured": 1, "overall": {"judged@3": 1.0}, "by_form": {}}
    with pytest.raises(StoreError, match=r"forged run: .*format 4 holds no judged@k"):
        parse_details_json(json.dumps(raw), "forged run")
