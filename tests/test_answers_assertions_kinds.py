"""The assertions users expect (issue 24): ``contains-any``, ``contains-all``, ``starts-with`` and
``levenshtein`` (rapidfuzz), validated at load time like the others (one line naming the file,
the prompt and the field), in the published schema, and blind to the digest of older sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.prompts.assertions import check_assertion
from goldeneval.prompts.golden import (
    Assertion,
    PromptSetError,
    load_prompt_set,
    prompt_set_digest,
    prompt_set_json_schema,
)
from tests.chat_server import answer, chat_server, last_user_message


def _check(answer_text: str, **fields: Any) -> tuple[bool, str]:
    outcome = check_assertion(Assertion.model_validate(fields), answer_text)
    return outcome.passed, outcome.message or ""


@pytest.mark.parametrize(
    ("fields", "text", "passed", "message"),
    [
        ({"type": "contains-any", "values": ["Seine", "Loire"]}, "On the  LOIRE.", True, "found 'Loire'"),
        ({"type": "contains-any", "values": ["Seine", "Loire"]}, "The Rhine.", False, "none found"),
        ({"type": "contains-any", "values": ["Seine"], "case_sensitive": True}, "the seine", False, "none found"),
        ({"type": "contains-all", "values": ["Paris", "Seine"]}, "Paris lies on the Seine.", True, "all found"),
        ({"type": "contains-all", "values": ["Paris", "Seine", "Rhine"]}, "Paris, Seine", False, "missing 'Rhine'"),
        ({"type": "contains-all", "values": ["Paris"], "negate": True}, "Paris", False, "all found"),
        ({"type": "starts-with", "value": "Yes"}, "  yes, it is.", True, "starts so"),
        ({"type": "starts-with", "value": "Yes"}, "Well, yes.", False, "starts 'Well, yes.'"),
        ({"type": "starts-with", "value": "Yes", "case_sensitive": True}, "yes", False, "starts 'yes'"),
        ({"type": "levenshtein", "value": "Paris", "max_distance": 1}, "Pariss", True, "distance 1"),
        ({"type": "levenshtein", "value": "Paris", "max_distance": 1}, "Parisian", False, "distance 3"),
        ({"type": "levenshtein", "value": "colour", "min_ratio": 0.8}, "Color", True, "ratio 0.833 (distance 1)"),
        ({"type": "levenshtein", "value": "colour", "min_ratio": 0.9}, "color", False, "ratio 0.833 (distance 1)"),
        ({"type": "levenshtein", "value": "Paris", "max_distance": 0, "case_sensitive": True}, "paris", False,
         "distance 1"),
    ],
)  # fmt: skip
def test_each_kind_checks_what_it_says(fields: dict[str, Any], text: str, passed: bool, message: str) -> None:
    got, said = _check(text, **fields)
    assert got is passed
    assert said.endswith(f": {message}"), said


def _bad(tmp_path: Path, assertion: dict[str, Any]) -> str:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"id": "bad", "prompts": [{"id": "p1", "prompt": "Q?", "assertions": [assertion]}]}))
    with pytest.raises(PromptSetError) as caught:
        load_prompt_set(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: prompt #1 (id 'p1'): field 'assertions.0"), message
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("assertion", "problem"),
    [
        ({"type": "contains-any"}, "contains-any needs 'values': a non-empty list of non-empty texts"),
        ({"type": "contains-all", "values": ["a", ""]}, "contains-all needs 'values': a non-empty list"),
        ({"type": "contains-any", "value": "a"}, "contains-any takes 'values' (a list of texts), not 'value'"),
        ({"type": "contains", "value": "a", "values": ["b"]}, "contains does not take 'values'"),
        ({"type": "starts-with"}, "starts-with needs a non-empty 'value'"),
        ({"type": "levenshtein", "value": "a"}, "levenshtein needs exactly one of 'max_distance' or 'min_ratio'"),
        ({"type": "levenshtein", "value": "a", "max_distance": 1, "min_ratio": 0.5}, "exactly one of"),
        ({"type": "levenshtein", "value": "a", "min_ratio": 1.5}, "less than or equal to 1"),
        ({"type": "levenshtein", "value": "a", "max_distance": -1}, "greater than or equal to 0"),
        ({"type": "exact", "value": "a", "max_distance": 1}, "exact does not take 'max_distance' or 'min_ratio'"),
        ({"type": "contains-any", "values": "Seine"}, "Input should be a valid list"),
    ],
)
def test_a_bad_assertion_fails_at_load_in_one_line(tmp_path: Path, assertion: dict[str, Any], problem: str) -> None:
    assert problem in _bad(tmp_path, assertion)


def test_the_schema_knows_the_new_kinds_and_matches_the_checked_in_file() -> None:
    schema = prompt_set_json_schema()
    stored = json.loads(
        (Path(__file__).resolve().parents[1] / "goldeneval/prompts/schema/golden-prompt-set.schema.json").read_text()
    )
    assert stored == schema
    kinds = schema["$defs"]["AssertionType"]["enum"]
    assert {"contains-any", "contains-all", "starts-with", "levenshtein"} <= set(kinds)
    document = {
        "id": "s",
        "prompts": [
            {"id": "a", "prompt": "q", "assertions": [{"type": "contains-any", "values": ["x", "y"]}]},
            {"id": "b", "prompt": "q", "assertions": [{"type": "levenshtein", "value": "x", "min_ratio": 0.9}]},
        ],
    }
    jsonschema.validate(document, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**document, "prompts": [{"id": "c", "prompt": "q", "assertions": [{"type": "fuzzy"}]}]},
                            schema)  # fmt: skip


def test_a_set_without_the_new_fields_keeps_its_digest(tmp_path: Path) -> None:
    """Adding the fields must not make every stored baseline a mismatch: the digest of a set
    that uses none of them is the one prompts-v1 always gave (recomputed here by hand)."""
    import hashlib

    path = tmp_path / "old.yaml"
    prompts = [{"id": "p", "prompt": "Q?", "assertions": [{"type": "contains", "value": "x"}]}]
    path.write_text(yaml.safe_dump({"id": "old", "prompts": prompts}))
    old_record = {"type": "contains", "value": "x", "case_sensitive": False, "required": [], "properties": {},
                  "negate": False, "weight": 1.0}  # fmt: skip
    encoded = json.dumps(
        {"version": "prompts-v1", "prompts": [["p", "Q?", None, [old_record], None]]},
        ensure_ascii=False,
        sort_keys=True,
    )
    expected = f"prompts-v1:sha256:{hashlib.sha256(encoded.encode('utf-8')).hexdigest()}"
    assert prompt_set_digest(load_prompt_set(path)) == expected


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_new_kinds_grade_through_the_cli(tmp_path: Path) -> None:
    prompts = [
        {"id": "any", "prompt": "A river?", "assertions": [{"type": "contains-any", "values": ["Seine", "Loire"]}]},
        {"id": "all", "prompt": "Two rivers?", "assertions": [{"type": "contains-all", "values": ["Seine", "Loire"]}]},
        {"id": "yes", "prompt": "Is it?", "assertions": [{"type": "starts-with", "value": "yes"}]},
        {
            "id": "near",
            "prompt": "Spell it",
            "assertions": [{"type": "levenshtein", "value": "Paris", "max_distance": 1}],
        },
    ]
    replies = {"A river?": "The Loire.", "Two rivers?": "The Seine only.", "Is it?": "Yes.", "Spell it": "Parris"}
    set_path = tmp_path / "kinds.yaml"
    set_path.write_text(yaml.safe_dump({"id": "kinds", "prompts": prompts}))
    with chat_server(default=lambda body: answer(replies[last_user_message(body)])) as server:
        result = CliRunner().invoke(
            main,
            ["prompts", "--set", str(set_path), "--model", "goldeneval.openai",
             "--model-option", f"base_url={server.base_url}", "--model-option", "model=tiny",
             "--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "c"), "--no-progress",
             "--format", "json"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    passed = {p["id"]: p["passed"] for p in json.loads(result.stdout)["prompts"]}
    assert passed == {"any": True, "all": False, "yes": True, "near": True}
