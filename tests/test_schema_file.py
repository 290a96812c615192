"""The published JSON Schema of golden set files: generated from the models, checked in, and
in agreement with the loader about what a valid file is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml

import goldeneval
from goldeneval.retrieval.golden import golden_set_json_schema

SCHEMA_PATH = Path(goldeneval.__file__).parent / "retrieval" / "schema" / "golden-question-set.schema.json"
REGENERATE = "goldeneval schema > goldeneval/retrieval/schema/golden-question-set.schema.json"

VALID_YAML = """\
id: transit-mini
description: Two questions about fares.
corpus: corpus
questions:
  - id: fare-child
    text: How much is a ticket for my daughter?
    form: GAP
    expected: [fares/child-tickets, fares/family-pass]
    hard_class: near-duplicate
    answer_gist: Children under 15 pay the reduced fare.
  - id: lost-cat
    text: Has anyone found my cat?
    form: MATCH
    expected: []
"""


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def test_the_checked_in_schema_equals_the_one_generated_from_the_models() -> None:
    generated = json.dumps(golden_set_json_schema(), indent=2) + "\n"

    assert SCHEMA_PATH.read_text(encoding="utf-8") == generated, (
        f"{SCHEMA_PATH} is out of date with goldeneval/golden.py; regenerate it with: {REGENERATE}"
    )


def test_the_schema_is_a_valid_draft_2020_12_schema(schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)

    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_a_valid_yaml_set_satisfies_the_schema(schema: dict[str, Any]) -> None:
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(VALID_YAML)))

    assert errors == []


def test_the_schema_rejects_an_unknown_form(schema: dict[str, Any]) -> None:
    invalid = yaml.safe_load(VALID_YAML.replace("form: GAP", "form: MAYBE"))

    with pytest.raises(jsonschema.ValidationError) as caught:
        jsonschema.Draft202012Validator(schema).validate(invalid)

    assert list(caught.value.absolute_path) == ["questions", 0, "form"]
