"""A golden set is validated once per process for the same content (issue 26: a Dagster job
read the same 10,000-question set seven times); an edited file is read and validated again."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from goldeneval.core.errors import GoldenSetError
from goldeneval.retrieval.golden import load_golden_set


def _write(path: Path, expected: list[str]) -> Path:
    question = {"id": "q1", "text": "apple orchard", "form": "MATCH", "expected": expected}
    path.write_text(yaml.safe_dump({"id": "memo", "corpus": "corpus", "questions": [question]}), encoding="utf-8")
    return path


def test_the_same_content_is_validated_once_and_an_edit_is_seen(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.yaml", ["apples"])
    first = load_golden_set(path)
    assert load_golden_set(path) is first
    assert first.corpus == str((tmp_path / "corpus").resolve())
    _write(path, ["pears"])
    edited = load_golden_set(path)
    assert edited is not first and edited.questions[0].expected == frozenset({"pears"})


def test_the_same_content_in_another_folder_is_its_own_set(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = load_golden_set(_write(tmp_path / "a" / "s.yaml", ["apples"]))
    b = load_golden_set(_write(tmp_path / "b" / "s.yaml", ["apples"]))
    assert a.corpus != b.corpus  # relative corpus paths resolve against each file


def test_a_bad_file_fails_every_time_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("id: x\nquestions: []\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(GoldenSetError):
            load_golden_set(path)
