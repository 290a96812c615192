"""The one wording of a pydantic validation error (``goldeneval.core.errors``): every door that
turns one into a message calls it, so a problem reads the same from a set, a suite file's
``storage:`` section, a provenance declaration and a retriever's option."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest
import yaml

from goldeneval.core.errors import InputError, error_problem, invalid_input, validation_problem
from goldeneval.suite import load_suite
from goldeneval.suite_storage import load_storage


class _Model(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")

    name: str
    depth: int = 1

    @pydantic.field_validator("depth")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be at least 1")
        return value


def _error(**values: object) -> pydantic.ValidationError:
    with pytest.raises(pydantic.ValidationError) as caught:
        _Model.model_validate(values)
    return caught.value


def test_a_validators_message_is_given_without_pydantics_prefix() -> None:
    error = _error(name="x", depth=0).errors()[0]
    assert error["msg"] == "Value error, must be at least 1"
    assert error_problem(error) == "must be at least 1"


def test_a_plain_wording_stands_for_its_error_type_and_only_for_it() -> None:
    plain = {"missing": "missing required field"}
    assert error_problem(_error().errors()[0], plain) == "missing required field"
    assert error_problem(_error().errors()[0]) == "Field required"
    assert error_problem(_error(name="x", depth=0).errors()[0], plain) == "must be at least 1"


def test_the_field_is_dotted_within_the_section_the_value_sits_in() -> None:
    assert validation_problem(_error(name="x", depht=2)) == ("depht", "Extra inputs are not permitted")
    assert validation_problem(_error(name="x", depht=2), ("storage",)) == (
        "storage.depht",
        "Extra inputs are not permitted",
    )
    found = invalid_input(_error(name="x", depth=0), "spec.yaml")
    assert isinstance(found, InputError)
    assert str(found) == "spec.yaml: field 'depth': must be at least 1"


def test_a_suite_file_problem_is_given_whole_with_its_hint_after_a_long_value(tmp_path: Path) -> None:
    name = "r" * 320
    suite = tmp_path / "goldeneval.yaml"
    suite.write_text(
        yaml.safe_dump({"sets": ["transit-sample"], "retrievers": {name: {"id": "goldeneval.lexical"}}}),
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        load_suite(suite)
    assert name in str(caught.value)
    assert str(caught.value).endswith("starting with a letter or digit")
    storage = tmp_path / "storage.yaml"
    storage.write_text(yaml.safe_dump({"storage": {"tabels": "x"}}), encoding="utf-8")
    with pytest.raises(InputError, match=r"field 'storage\.tabels': Extra inputs are not permitted"):
        load_storage(storage)
