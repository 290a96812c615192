"""A YAML set file read before is taken from the run's cache folder (``remembered_parses``),
exactly as it parsed, and never under ``metadata_only`` privacy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from goldeneval.core import set_files
from goldeneval.core.errors import GoldenSetError
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.set_files import remembered_parses
from goldeneval.retrieval import golden, pipeline
from goldeneval.retrieval.golden import GoldenQuestionSet
from goldeneval.retrieval.spec import RunSpec

SET = {
    "id": "tiny",
    "questions": [
        {"id": "q1", "text": "When does the night bus run?", "form": "MATCH", "expected": ["d1"]},
        {"id": "q2", "text": "Tram hours", "form": "GAP", "expected": [], "hard_class": "normal"},
    ],
}


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every YAML text PyYAML itself parsed."""
    seen: list[str] = []
    real = set_files.load_yaml  # type: ignore[attr-defined]  # the name set_files parses YAML through

    def counting(text: str) -> Any:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(set_files, "load_yaml", counting)
    return seen


@pytest.fixture
def set_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(SET, sort_keys=False), encoding="utf-8")
    return path


def load_golden_set(path: Path) -> GoldenQuestionSet:
    """The set read from its file: the in-process memo of loaded sets forgotten first."""
    golden._LOADED.clear()
    return golden.load_golden_set(path)


def load_golden_set_uncached(path: Path) -> GoldenQuestionSet:
    with remembered_parses(Path("/nonexistent"), PrivacyMode.METADATA_ONLY):
        return load_golden_set(path)


def _kept(cache: Path) -> list[Path]:
    return sorted((cache / "parsed-yaml").glob("*.json"))


def test_a_file_read_before_is_not_parsed_again_and_loads_the_same_set(
    set_file: Path, tmp_path: Path, parses: list[str]
) -> None:
    cache = tmp_path / "cache"
    with remembered_parses(cache, PrivacyMode.FULL) as keep:
        first = load_golden_set(set_file)
        keep("tiny")
    with remembered_parses(cache, PrivacyMode.FULL) as keep:
        second = load_golden_set(set_file)
        keep("tiny")
    assert len(parses) == 1
    assert first == second == load_golden_set(set_file)  # outside the block: parsed as ever
    assert len(parses) == 2
    [kept] = _kept(cache)
    assert json.loads(kept.read_text(encoding="utf-8"))["document"] == SET


def test_only_the_evaluated_sets_file_is_kept(set_file: Path, tmp_path: Path) -> None:
    """A registry reads every set it knows to find one; the others' questions are not kept."""
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump({**SET, "id": "other"}), encoding="utf-8")
    cache = tmp_path / "cache"
    with remembered_parses(cache, PrivacyMode.FULL) as keep:
        load_golden_set(other)
        load_golden_set(set_file)
        keep("tiny")
    [kept] = _kept(cache)
    assert json.loads(kept.read_text(encoding="utf-8"))["document"]["id"] == "tiny"


def test_a_changed_file_is_parsed_again(set_file: Path, tmp_path: Path, parses: list[str]) -> None:
    cache = tmp_path / "cache"
    with remembered_parses(cache, PrivacyMode.FULL) as keep:
        load_golden_set(set_file)
        set_file.write_text(set_file.read_text(encoding="utf-8").replace("Tram hours", "Tram times"), encoding="utf-8")
        changed = load_golden_set(set_file)
        keep("tiny")
    assert len(parses) == 2 and changed.questions[1].text == "Tram times"
    assert len(_kept(cache)) == 2


def test_nothing_is_kept_or_read_under_metadata_only(set_file: Path, tmp_path: Path, parses: list[str]) -> None:
    cache = tmp_path / "cache"
    with remembered_parses(cache, PrivacyMode.FULL) as keep:
        load_golden_set(set_file)
        keep("tiny")
    with remembered_parses(cache, PrivacyMode.METADATA_ONLY) as keep:
        load_golden_set(set_file)
        load_golden_set(set_file)
        keep("tiny")
    assert len(parses) == 3
    other = tmp_path / "other-cache"
    with remembered_parses(other, PrivacyMode.METADATA_ONLY) as keep:
        load_golden_set(set_file)
        keep("tiny")
    assert not other.exists()


@pytest.mark.parametrize(
    "text",
    ["id: doc\nwhen: 2026-12-04\n", "id: doc\n1: one\n", "id: doc\nratio: .nan\n"],
    ids=["date", "integer-key", "nan"],
)
def test_a_document_json_would_change_is_not_kept(tmp_path: Path, parses: list[str], text: str) -> None:
    path = tmp_path / "doc.yaml"
    path.write_text(text, encoding="utf-8")
    with remembered_parses(tmp_path / "cache", PrivacyMode.FULL) as keep:
        first = set_files.parse_document(path, ".yaml", text, GoldenSetError)
        keep("doc")
    with remembered_parses(tmp_path / "cache", PrivacyMode.FULL) as keep:
        second = set_files.parse_document(path, ".yaml", text, GoldenSetError)
        keep("doc")
    assert len(parses) == 2 and str(first) == str(second)
    assert _kept(tmp_path / "cache") == []


def test_a_file_that_does_not_parse_is_refused_as_ever_and_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("id: x\nid: y\n", encoding="utf-8")
    for _ in range(2):
        with (
            remembered_parses(tmp_path / "cache", PrivacyMode.FULL) as keep,
            pytest.raises(GoldenSetError, match="dup"),
        ):
            keep("x")
            load_golden_set(path)
    assert _kept(tmp_path / "cache") == []


@pytest.mark.parametrize(
    "damage",
    ['{"text_sha256": "x", "docu', "[]", '{"text_sha256": "not-its-key", "document": []}', "[" * 100_000],
    ids=["truncated", "not-an-entry", "another-key", "nested-too-deeply"],
)
def test_a_damaged_cache_entry_is_parsed_again_and_written_whole(
    set_file: Path, tmp_path: Path, parses: list[str], damage: str
) -> None:
    cache = tmp_path / "cache"
    with remembered_parses(cache, PrivacyMode.FULL) as keep:
        load_golden_set(set_file)
        keep("tiny")
    [kept] = _kept(cache)
    kept.write_text(damage, encoding="utf-8")
    with remembered_parses(cache, PrivacyMode.FULL) as keep:
        assert load_golden_set(set_file) == load_golden_set_uncached(set_file)
        keep("tiny")
    assert len(parses) == 3
    assert json.loads(kept.read_text(encoding="utf-8")) == {"text_sha256": kept.stem, "document": SET}


def test_a_runs_set_is_read_through_the_cache_of_its_specification(
    set_file: Path, tmp_path: Path, parses: list[str]
) -> None:
    spec = RunSpec(set_ref=str(set_file), retriever_id="goldeneval.lexical", series="s", cache_dir=tmp_path / "c")
    assert pipeline.load_golden_set(spec) == pipeline.load_golden_set(spec)
    assert len(parses) == 1 and len(_kept(tmp_path / "c")) == 1
