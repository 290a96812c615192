"""The judgments file: append-only lines, a later line superseding, torn lines skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldeneval.judgments.judgments import (
    JudgmentLine,
    JudgmentsError,
    Source,
    append_lines,
    pool_lines,
    read_judgments,
)

POOLED = JudgmentLine(question="q1", document="d1", sources=(Source(source="goldeneval.lexical", rank=1),))


def _judged(grade: int | None, assessor: str = "ann", document: str = "d1") -> JudgmentLine:
    return JudgmentLine(
        question="q1", document=document, grade=grade, assessor=assessor, judged_at="2026-01-01T00:00:00Z"
    )


def test_each_line_is_one_json_object_with_the_documented_fields(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    append_lines(path, [POOLED, _judged(2)])
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[1] == {
        "question": "q1",
        "document": "d1",
        "grade": 2,
        "assessor": "ann",
        "judged_at": "2026-01-01T00:00:00Z",
        "sources": [],
        "question_text": None,
    }
    assert lines[0]["sources"] == [{"source": "goldeneval.lexical", "rank": 1}]


def test_appending_never_rewrites_earlier_lines(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    append_lines(path, [POOLED, _judged(0)])
    before = path.read_bytes()
    append_lines(path, [_judged(3)])
    assert path.read_bytes().startswith(before)


def test_a_later_line_for_the_same_question_document_and_assessor_supersedes(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    append_lines(path, [POOLED, _judged(0), _judged(1, "bob"), _judged(3)])
    assert read_judgments(path).grades == {("q1", "d1", "ann"): 3, ("q1", "d1", "bob"): 1}


def test_a_judgment_with_a_null_grade_takes_the_grade_back(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    append_lines(path, [POOLED, _judged(2), _judged(None)])
    read = read_judgments(path)
    assert read.grades == {}
    assert list(read.pairs) == [("q1", "d1")]


def test_a_torn_last_line_is_ignored_with_a_warning_and_loses_nothing_given(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    append_lines(path, [POOLED, _judged(2)])
    with path.open("ab") as handle:  # a crash in the middle of the next write
        handle.write(_judged(1, "bob").to_json_line().encode()[:25])
    read = read_judgments(path)
    assert read.grades == {("q1", "d1", "ann"): 2}
    assert read.warnings == (f"{path}: line 3 is not complete JSON (a write cut short?); ignored",)


def test_an_append_after_a_torn_line_starts_on_a_line_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    append_lines(path, [POOLED, _judged(2)])
    with path.open("ab") as handle:
        handle.write(b'{"question": "q1", "docu')
    append_lines(path, [_judged(1, "bob")])
    read = read_judgments(path)
    assert read.grades == {("q1", "d1", "ann"): 2, ("q1", "d1", "bob"): 1}
    assert len(read.warnings) == 1


def test_a_complete_line_that_is_no_judgment_is_invalid_input_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(POOLED.to_json_line() + '{"question": "q1", "document": "d1", "grade": -1}\n')
    with pytest.raises(JudgmentsError, match=r"j\.jsonl: line 2: field 'grade': "):
        read_judgments(path)


def test_a_missing_file_is_an_error_unless_allowed(tmp_path: Path) -> None:
    with pytest.raises(JudgmentsError, match="judgments file not found"):
        read_judgments(tmp_path / "none.jsonl")
    assert read_judgments(tmp_path / "none.jsonl", missing_ok=True).pairs == {}


def test_pool_lines_are_written_only_for_new_pairs_and_for_new_sources(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    append_lines(path, [POOLED])
    existing = read_judgments(path)
    again = Source(source="goldeneval.lexical", rank=1)
    dense = Source(source="goldeneval.dense", rank=4)
    lines = pool_lines(existing, {("q1", "d1"): [again, dense], ("q1", "d2"): [dense]}, {"q1": "text"})
    assert [(line.document, [s.source for s in line.sources]) for line in lines] == [
        ("d1", ["goldeneval.lexical", "goldeneval.dense"]),
        ("d2", ["goldeneval.dense"]),
    ]
    assert pool_lines(existing, {("q1", "d1"): [again]}, {}) == []
