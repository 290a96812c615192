"""A loaded set's questions share what most of them hold alike (issue 26: a question took
1.5 KB, half of it pydantic's set of given field names), and nothing anyone can see changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldeneval.retrieval.golden import GoldenQuestion, load_golden_set


def _write_jsonl(path: Path, n: int) -> Path:
    lines = []
    for i in range(n):
        question: dict[str, object] = {"id": f"q{i}", "text": f"question {i}", "form": "MATCH", "expected": [f"d{i}"]}
        if i % 2:
            question["hard_class"] = "synonym"
        lines.append(json.dumps(question))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".yaml"])
def test_questions_share_field_names_empty_negatives_and_hard_classes(tmp_path: Path, suffix: str) -> None:
    source = _write_jsonl(tmp_path / "s.jsonl", 6)
    if suffix == ".yaml":  # the checked path (YAML) shares them too
        rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
        source = tmp_path / "s.yaml"
        source.write_text(json.dumps({"id": "s", "questions": rows}), encoding="utf-8")
    questions = load_golden_set(source).questions
    odd, even = questions[1::2], questions[0::2]
    assert len({id(q.model_fields_set) for q in odd}) == 1
    assert len({id(q.model_fields_set) for q in even}) == 1
    assert odd[0].model_fields_set == {"id", "text", "form", "expected", "hard_class"}
    assert even[0].model_fields_set == {"id", "text", "form", "expected"}
    assert len({id(q.not_relevant) for q in questions}) == 1 and questions[0].not_relevant == frozenset()
    assert len({id(q.hard_class) for q in odd}) == 1
    # Equal to a question validated on its own: sharing changes no value.
    alone = GoldenQuestion.model_validate(
        {"id": "q1", "text": "question 1", "form": "MATCH", "expected": ["d1"], "hard_class": "synonym"}
    )
    assert questions[1] == alone and questions[1].model_fields_set == alone.model_fields_set


def test_a_copy_with_an_update_leaves_the_shared_names_alone(tmp_path: Path) -> None:
    questions = load_golden_set(_write_jsonl(tmp_path / "s.jsonl", 4)).questions
    copied = questions[0].model_copy(update={"answer_gist": "why"})
    assert "answer_gist" in copied.model_fields_set
    assert all("answer_gist" not in q.model_fields_set for q in questions)
    with pytest.raises(Exception, match="frozen"):
        questions[0].text = "changed"  # type: ignore[misc]
    assert all("text" in q.model_fields_set for q in questions)
