"""Golden prompt sets: files, the published JSON Schema, the registry, the digest, and bad
files that fail at load time naming the file, the prompt and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml

from goldeneval.core.errors import DuplicateIdError, InputError
from goldeneval.prompts.golden import (
    GoldenPromptSet,
    PromptSetError,
    load_prompt_set,
    prompt_set_digest,
    prompt_set_json_schema,
)
from goldeneval.prompts.registry import PROMPT_SETS_PATH_ENV, PromptSetRegistry, resolve_prompt_set
from goldeneval.prompts.smoke import SMOKE_SET_PATH

SCHEMA_PATH = (
    Path(__file__).resolve().parents[1] / "goldeneval" / "prompts" / "schema" / "golden-prompt-set.schema.json"
)
GOOD: dict[str, Any] = {
    "id": "mini",
    "prompts": [
        {"id": "p1", "prompt": "Capital of France?", "assertions": [{"type": "contains", "value": "Paris"}]},
        {"id": "p2", "prompt": "Summarise.", "reference": "A short summary."},
    ],
}


def _write(tmp_path: Path, name: str, content: Any) -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    elif name.endswith(".json"):
        path.write_text(json.dumps(content), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["mini.yaml", "mini.json"])
def test_a_set_file_loads(tmp_path: Path, name: str) -> None:
    loaded = load_prompt_set(_write(tmp_path, name, GOOD))
    assert [p.id for p in loaded.prompts] == ["p1", "p2"]


def test_a_jsonl_file_takes_its_id_from_the_header_line(tmp_path: Path) -> None:
    lines = [json.dumps({"set": {"id": "lines"}}), *(json.dumps(p) for p in GOOD["prompts"])]
    loaded = load_prompt_set(_write(tmp_path, "x.jsonl", "\n".join(lines) + "\n"))
    assert (loaded.id, len(loaded.prompts)) == ("lines", 2)


def _prompt(**fields: Any) -> dict[str, Any]:
    return {"id": "p9", "prompt": "Q?", **fields}


@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        (
            _prompt(assertions=[{"type": "regex", "value": "(unclosed"}]),
            "prompt #1 (id 'p9'): field 'assertions.0': invalid regular expression '(unclosed': "
            "missing ) at position 9",
        ),
        (
            _prompt(assertions=[{"type": "similar", "value": "x"}]),
            "prompt #1 (id 'p9'): field 'assertions.0.type': Input should be 'exact', 'contains', 'contains-any', "
            "'contains-all', 'starts-with', 'levenshtein', 'regex', 'json_schema' or 'code' (got 'similar')",
        ),
        (_prompt(assertions=[{"type": "contains"}]), "field 'assertions.0': contains needs a non-empty 'value'"),
        (
            _prompt(assertions=[{"type": "json_schema"}]),
            "field 'assertions.0': json_schema needs 'required' keys or 'properties' types",
        ),
        (
            _prompt(assertions=[{"type": "json_schema", "properties": {"a": "float"}}]),
            "field 'assertions.0.properties.a': Input should be 'string', 'number', 'integer', 'boolean', "
            "'array', 'object' or 'null'",
        ),
        (
            _prompt(assertions=[{"type": "exact", "value": "x", "weight": 0}]),
            "field 'assertions.0.weight': Input should be greater than 0",
        ),
        (_prompt(), "prompt #1 (id 'p9'): field '(prompt)': a prompt needs at least one assertion or a reference"),
        ({"id": "p9"}, "prompt #1 (id 'p9'): field 'prompt': missing required field"),
        (_prompt(reference="r", colour="red"), "field 'colour': Extra inputs are not permitted"),
    ],
    ids=[
        "bad-regex",
        "unknown-type",
        "no-value",
        "empty-schema",
        "bad-json-type",
        "zero-weight",
        "ungradable",
        "no-prompt",
        "extra-field",
    ],
)
def test_a_bad_prompt_fails_at_load_naming_file_prompt_and_field(
    tmp_path: Path, prompt: dict[str, Any], message: str
) -> None:
    path = _write(tmp_path, "bad.yaml", {"id": "bad", "prompts": [prompt]})
    with pytest.raises(PromptSetError) as caught:
        load_prompt_set(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_a_duplicate_prompt_id_names_both_positions(tmp_path: Path) -> None:
    prompts = [GOOD["prompts"][0], GOOD["prompts"][0]]
    path = _write(tmp_path, "dup.yaml", {"id": "dup", "prompts": prompts})
    with pytest.raises(
        PromptSetError, match=r"prompt #2 \(id 'p1'\): field 'id': duplicate prompt id \(first used by prompt #1\)"
    ):
        load_prompt_set(path)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "dup.json",
            '{"id": "s", "id": "t", "prompts": []}',
            "duplicate key 'id'; the keys of a JSON object must be unique",
        ),
        ("dup.jsonl", '{"id": "p1", "id": "p2", "prompt": "x"}\n', "line 1: duplicate key 'id'"),
        ("deep.json", "[" * 100_000 + "]" * 100_000, "cannot read the JSON: it is nested too deeply"),
        ("latin1.yaml", None, "not valid UTF-8 (byte 0xe9 at offset 4); save the file as UTF-8"),
    ],
    ids=["json-duplicate-key", "jsonl-duplicate-key", "json-too-deep", "not-utf8"],
)
def test_a_prompt_set_file_is_read_as_question_set_files_are(
    tmp_path: Path, name: str, text: str | None, message: str
) -> None:
    """One reader for every kind's set files (goldeneval.core.set_files): the same refusals."""
    path = tmp_path / name
    if text is None:
        path.write_bytes(b"id: \xe9t\xe9\n")
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(PromptSetError) as caught:
        load_prompt_set(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_the_registry_fails_fast_on_a_duplicate_set_id_naming_both_sources(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = _write(tmp_path / "a", "one.yaml", GOOD)
    second = _write(tmp_path / "b", "two.yaml", GOOD)
    with pytest.raises(DuplicateIdError) as caught:
        PromptSetRegistry.discover([tmp_path / "a", tmp_path / "b"], include_entry_points=False)
    assert str(caught.value) == f"golden prompt set id 'mini' is declared twice: in {first} and in {second}"


def test_the_smoke_set_is_registered_under_the_entry_point_group() -> None:
    registry = PromptSetRegistry.discover()
    assert "goldeneval.smoke" in registry.ids()
    assert registry.source("goldeneval.smoke").startswith("entry point 'goldeneval.smoke'")


def test_folders_come_from_the_environment_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, "mini.yaml", GOOD)
    monkeypatch.setenv(PROMPT_SETS_PATH_ENV, str(tmp_path))
    assert resolve_prompt_set("mini").id == "mini"


def test_an_unknown_set_id_lists_the_known_ones() -> None:
    with pytest.raises(InputError, match=r"unknown golden prompt set 'nope': .*known: .*goldeneval\.smoke"):
        resolve_prompt_set("nope")


def test_the_digest_ignores_order_and_tags_but_not_an_assertion() -> None:
    loaded = GoldenPromptSet.model_validate(GOOD)
    reordered = GoldenPromptSet.model_validate({**GOOD, "prompts": GOOD["prompts"][::-1]})
    tagged = GoldenPromptSet.model_validate(
        {**GOOD, "prompts": [{**GOOD["prompts"][0], "tags": ["x"]}, GOOD["prompts"][1]]}
    )
    negated = GoldenPromptSet.model_validate(
        {
            **GOOD,
            "prompts": [
                {**GOOD["prompts"][0], "assertions": [{"type": "contains", "value": "Paris", "negate": True}]},
                GOOD["prompts"][1],
            ],
        }
    )
    assert prompt_set_digest(loaded) == prompt_set_digest(reordered) == prompt_set_digest(tagged)
    assert prompt_set_digest(loaded) != prompt_set_digest(negated)
    assert prompt_set_digest(loaded).startswith("prompts-v1:sha256:")


def test_the_published_schema_is_the_generated_one() -> None:
    stored = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert stored == prompt_set_json_schema(), (
        "regenerate: goldeneval prompt-schema > goldeneval/prompts/schema/golden-prompt-set.schema.json"
    )


def test_the_schema_accepts_the_smoke_set() -> None:
    document = yaml.safe_load(SMOKE_SET_PATH.read_text(encoding="utf-8"))
    jsonschema.validate(document, prompt_set_json_schema())
