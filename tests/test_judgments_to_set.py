"""``goldeneval judgments to-set``: a golden set file from the judgments."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.core.corpus import load_corpus
from goldeneval.judgments.judgments import JudgmentLine, append_lines
from goldeneval.retrieval.golden import GoldenQuestionSet, load_golden_set
from goldeneval.sample import SAMPLE_DIR

SAMPLE_SET = SAMPLE_DIR / "golden.yaml"


def _judge_as_labelled(path: Path, golden_set: GoldenQuestionSet, assessor: str = "ann") -> None:
    """Pool each question's expected documents and one document it does not expect; grade the
    expected ones with their labelled grade, the other 0."""
    ids = sorted(load_corpus(SAMPLE_DIR / "corpus").ids)
    pooled = [(q, d) for q in golden_set.questions for d in [*sorted(q.expected), _other(ids, q.expected)]]
    append_lines(path, [JudgmentLine(question=q.id, document=d) for q, d in pooled])
    append_lines(
        path, [JudgmentLine(question=q.id, document=d, grade=q.grade(d), assessor=assessor) for q, d in pooled]
    )


def _other(ids: list[str], expected: frozenset[str]) -> str:
    return next(d for d in ids if d not in expected)


def _to_set(path: Path, out: Path, *args: str, checked: bool = False) -> Result:
    """``judgments to-set`` of the sample set; unless ``checked``, with --allow-unknown-documents
    (most tests here judge made-up documents ``a``, ``b``, ``c``)."""
    allow = () if checked else ("--allow-unknown-documents",)
    return CliRunner().invoke(
        main, ["judgments", "to-set", str(path), "--out", str(out), "--set", str(SAMPLE_SET), *allow, *args]
    )


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_judgments_marking_exactly_the_labels_give_back_the_original_expected_documents(tmp_path: Path) -> None:
    original = load_golden_set(SAMPLE_SET)
    path, out = tmp_path / "j.jsonl", tmp_path / "judged.yaml"
    _judge_as_labelled(path, original)
    result = _to_set(path, out, "--no-answer-when-all-negative", checked=True)
    assert result.exit_code == 0, result.output
    rebuilt = load_golden_set(out)
    assert [(q.id, q.expected, q.judgements) for q in rebuilt.questions] == [
        (q.id, q.expected, q.judgements) for q in original.questions
    ]
    assert [(q.text, q.form, q.hard_class, q.answer_gist) for q in rebuilt.questions] == [
        (q.text, q.form, q.hard_class, q.answer_gist) for q in original.questions
    ]
    assert rebuilt.id == "transit-sample-judged"
    assert Path(rebuilt.corpus or "") == (SAMPLE_DIR / "corpus").resolve()
    assert f"wrote {len(original.questions)} questions to {out}" in result.output


def test_grades_above_one_are_written_as_grades(tmp_path: Path) -> None:
    path, out = tmp_path / "j.jsonl", tmp_path / "judged.yaml"
    append_lines(path, [JudgmentLine(question="q-001", document=d) for d in ("a", "b", "c")])
    append_lines(
        path,
        [
            JudgmentLine(question="q-001", document=d, grade=g, assessor="ann")
            for d, g in (("a", 3), ("b", 1), ("c", 0))
        ],
    )
    assert _to_set(path, out).exit_code == 0
    (question,) = load_golden_set(out).questions
    assert question.judgements == {"a": 3, "b": 1}


def test_a_question_judged_all_negative_is_left_out_with_a_notice_without_the_flag(tmp_path: Path) -> None:
    path, out = tmp_path / "j.jsonl", tmp_path / "judged.yaml"
    append_lines(path, [JudgmentLine(question=q, document="a") for q in ("q-001", "q-002")])
    append_lines(
        path, [JudgmentLine(question=q, document="a", grade=g, assessor="ann") for q, g in (("q-001", 0), ("q-002", 1))]
    )
    result = _to_set(path, out)
    assert result.exit_code == 0, result.output
    assert [q.id for q in load_golden_set(out).questions] == ["q-002"]
    assert (
        "goldeneval: notice: question 'q-001': every pooled document judged not relevant; left out "
        "(--no-answer-when-all-negative makes it a no-answer question)"
    ) in result.output
    assert _to_set(path, out, "--no-answer-when-all-negative").exit_code == 0
    assert [(q.id, q.expected) for q in load_golden_set(out).questions] == [
        ("q-001", frozenset()),
        ("q-002", frozenset({"a"})),
    ]


def test_a_question_none_relevant_with_unjudged_pairs_is_left_out_even_with_the_flag(tmp_path: Path) -> None:
    path, out = tmp_path / "j.jsonl", tmp_path / "judged.yaml"
    append_lines(path, [JudgmentLine(question="q-001", document=d) for d in ("a", "b")])
    append_lines(
        path,
        [
            JudgmentLine(question="q-002", document="a"),
            JudgmentLine(question="q-002", document="a", grade=1, assessor="ann"),
        ],
    )
    append_lines(path, [JudgmentLine(question="q-001", document="a", grade=0, assessor="ann")])
    result = _to_set(path, out, "--no-answer-when-all-negative")
    assert "question 'q-001': none relevant so far, 1 pair(s) unjudged; left out" in result.output
    assert [q.id for q in load_golden_set(out).questions] == ["q-002"]


def _two_assessors(path: Path) -> None:
    append_lines(path, [JudgmentLine(question="q-001", document=d) for d in ("a", "b", "c")])
    given = {"ann": (2, 1, 0), "bob": (2, 0, 0), "cy": (3, 1, 1)}
    for assessor, grades in given.items():
        append_lines(
            path,
            [
                JudgmentLine(question="q-001", document=d, grade=g, assessor=assessor)
                for d, g in zip("abc", grades, strict=True)
            ],
        )


def test_several_assessors_need_a_choice(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    _two_assessors(path)
    result = _to_set(path, tmp_path / "judged.yaml")
    assert result.exit_code == 3
    assert (
        "3 assessors judged these pairs (ann, bob, cy): choose one with --assessor NAME, or --merge majority"
        in result.output
    )


@pytest.mark.parametrize(
    ("args", "judgements"),
    [
        (["--assessor", "bob"], {"a": 2}),
        (["--assessor", "cy"], {"a": 3, "b": 1, "c": 1}),
        (["--merge", "majority"], {"a": 2, "b": 1}),
    ],
    ids=["bob", "cy", "majority"],
)
def test_an_assessor_or_the_majority_decides(tmp_path: Path, args: list[str], judgements: dict[str, int]) -> None:
    path, out = tmp_path / "j.jsonl", tmp_path / "judged.yaml"
    _two_assessors(path)
    result = _to_set(path, out, *args)
    assert result.exit_code == 0, result.output
    assert load_golden_set(out).questions[0].judgements == judgements


def test_an_unknown_assessor_is_invalid_input(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    _two_assessors(path)
    result = _to_set(path, tmp_path / "judged.yaml", "--assessor", "dee")
    assert result.exit_code == 3
    assert "assessor 'dee' judged nothing here (assessors: ann, bob, cy)" in result.output


def _one_judged_pair(path: Path, document: str, grade: int) -> None:
    append_lines(path, [JudgmentLine(question="q-001", document="fares/day-ticket")])
    append_lines(path, [JudgmentLine(question="q-001", document="fares/day-ticket", grade=1, assessor="ann")])
    append_lines(path, [JudgmentLine(question="q-001", document=document, grade=grade, assessor="ann")])


def test_a_grade_off_the_scale_is_invalid_input_naming_the_file_line_and_field(tmp_path: Path) -> None:
    path, out = tmp_path / "j.jsonl", tmp_path / "judged.yaml"
    _one_judged_pair(path, "fares/single-ticket", 7)
    result = _to_set(path, out, checked=True)
    assert result.exit_code == 3, result.output
    assert f"{path}: line 3: field 'grade': 7 is not on the scale 0,1,2,3" in result.output
    assert not out.exists()
    # a scale that holds 7 takes it
    assert _to_set(path, out, "--scale", "0,1,2,3,7", checked=True).exit_code == 0
    assert _to_set(path, tmp_path / "other.yaml", "--scale", "0,1").exit_code == 3  # the grade 1 fits; the 7 not


def test_a_superseded_grade_off_the_scale_no_longer_counts(tmp_path: Path) -> None:
    path, out = tmp_path / "j.jsonl", tmp_path / "judged.yaml"
    _one_judged_pair(path, "fares/single-ticket", 7)
    append_lines(path, [JudgmentLine(question="q-001", document="fares/single-ticket", grade=2, assessor="ann")])
    result = _to_set(path, out, checked=True)
    assert result.exit_code == 0, result.output


def test_a_graded_document_not_in_the_corpus_is_invalid_input_unless_allowed(tmp_path: Path) -> None:
    path, out = tmp_path / "j.jsonl", tmp_path / "judged.yaml"
    _one_judged_pair(path, "fares/never-pooled", 1)
    result = _to_set(path, out, checked=True)
    assert result.exit_code == 3, result.output
    assert f"{path}: line 3: field 'document': 'fares/never-pooled' is not in the corpus" in result.output
    assert "--allow-unknown-documents" in result.output
    assert not out.exists()
    allowed = _to_set(path, out, "--allow-unknown-documents", checked=True)
    assert allowed.exit_code == 0, allowed.output
    (question,) = load_golden_set(out).questions
    assert question.expected == {"fares/day-ticket", "fares/never-pooled"}


def test_the_corpus_checked_against_can_be_named(tmp_path: Path) -> None:
    path, out = tmp_path / "j.jsonl", tmp_path / "judged.yaml"
    _one_judged_pair(path, "fares/single-ticket", 1)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "fares/day-ticket", "title": "Day ticket", "text": "A day."}\n', encoding="utf-8")
    result = _to_set(path, out, "--corpus", str(corpus), checked=True)
    assert result.exit_code == 3
    assert "field 'document': 'fares/single-ticket' is not in the corpus" in result.output
