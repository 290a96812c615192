"""Graded relevance from set files and BEIR qrels to graded nDCG, the qrels export and the
label digest; questions a source leaves unjudged are reported with every run (issue 9)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.core.errors import GoldenSetError
from goldeneval.retrieval.beir import load_beir_set
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm, load_golden_set
from goldeneval.retrieval.labels import label_digest
from tests.test_beir_import import write_beir

GRADED = {
    "id": "graded",
    "questions": [
        {"id": "q1", "text": "alpha", "form": "MATCH", "expected": ["a", "b"], "grades": {"a": 3}},
        {"id": "q2", "text": "beta", "form": "GAP", "expected": ["c"]},
    ],
}


def test_a_set_file_grades_expected_documents_and_the_rest_have_grade_one(write_set: Any) -> None:
    golden = load_golden_set(write_set("graded.yaml", GRADED))
    assert [q.judgements for q in golden.questions] == [{"a": 3, "b": 1}, {"c": 1}]


@pytest.mark.parametrize(
    ("grades", "problem"),
    [
        ({"a": 0}, "grade of 'a' must be at least 1 (expected means relevant), got 0"),
        ({"z": 2}, "names documents that are not expected: z"),
        ({"a": "high"}, "Input should be a valid integer"),
        ({"a": True}, "Input should be a valid integer"),
    ],
    ids=["zero", "not-expected", "a-word", "a-boolean"],
)
def test_a_bad_grade_names_the_file_the_question_and_the_field(write_set: Any, grades: Any, problem: str) -> None:
    content = json.loads(json.dumps(GRADED))
    content["questions"][0]["grades"] = grades
    path = write_set("graded.yaml", content)
    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: question #1 (id 'q1'): field 'grades")
    assert problem in message


def _question(**fields: Any) -> GoldenQuestion:
    return GoldenQuestion(id="q", text="t", form=QuestionForm.MATCH, expected=frozenset({"a", "b"}), **fields)


def _digest(question: GoldenQuestion) -> str:
    return label_digest(GoldenQuestionSet(id="s", questions=(question,)))


def test_grade_one_is_the_default_and_a_binary_set_keeps_its_labels_v1_digest() -> None:
    """The digest of a set without grades is what docs/label-digest.md specified before
    grades existed: five values per question, nothing appended."""
    record = ["q", "t", "MATCH", None, ["a", "b"]]
    encoded = json.dumps({"version": "labels-v1", "questions": [record]}, ensure_ascii=False, separators=(",", ":"))
    before = f"labels-v1:sha256:{hashlib.sha256(encoded.encode('utf-8')).hexdigest()}"
    assert _digest(_question()) == before
    assert _digest(_question(grades={"a": 1, "b": 1})) == before


def test_any_grade_change_changes_the_label_digest() -> None:
    digests = {_digest(_question()), _digest(_question(grades={"a": 2})), _digest(_question(grades={"a": 3}))}
    assert len(digests) == 3
    assert _digest(_question(grades={"b": 2})) != _digest(_question(grades={"a": 2}))


def test_beir_scores_become_grades_and_queries_judged_only_zero_are_listed_as_unjudged(tmp_path: Path) -> None:
    golden = load_beir_set(write_beir(tmp_path / "tinyfact"))
    assert {q.id: q.judgements for q in golden.questions}["q-match"] == {"d1": 1, "d2": 2}
    assert golden.unjudged == ("q-none",)


def test_qrels_carry_the_grades(tmp_path: Path, write_set: Any) -> None:
    out = tmp_path / "graded.qrels"
    result = CliRunner().invoke(
        main, ["export-qrels", "--set", str(write_set("graded.yaml", GRADED)), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text() == "q1 0 a 3\nq1 0 b 1\nq2 0 c 1\n"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_run_reports_the_unjudged_questions_of_its_source_in_the_table_and_the_json(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tinyfact")
    args = ["retrieval", "--set", str(folder), "--retriever", "goldeneval.lexical", "--no-progress"]
    args += ["--store", str(tmp_path / "results.duckdb"), "--cache-dir", str(tmp_path / "cache")]
    table = CliRunner().invoke(main, args)
    assert table.exit_code == 0, table.output
    assert "Left out of the set: 1 questions of its source without a relevant judgement: q-none" in table.output
    document = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).output)
    assert document["measurement"]["unjudged"] == {"count": 1, "ids": ["q-none"]}
    assert document["measurement"]["questions"] == 4
