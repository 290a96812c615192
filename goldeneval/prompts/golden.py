"""Golden prompt sets (ADR-060, decision 1): prompts with deterministic assertions.

A golden prompt carries an id, the prompt, an optional system prompt, deterministic
assertions (``exact``, ``contains``, ``contains-any``, ``contains-all``, ``starts-with``,
``levenshtein``, ``regex``, ``json_schema``; each with ``negate`` and a ``weight``) and an
optional reference answer.  Files are YAML, JSON or JSONL; the models
below are the single source of the format: the published JSON Schema
(``goldeneval/prompts/schema/golden-prompt-set.schema.json``) is generated from them.  A bad
file — an invalid regex, an unknown assertion type — fails at load time naming the file, the
prompt (position and id) and the field.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from goldeneval.core.errors import InputError, SetFileError, error_problem, one_line
from goldeneval.core.set_files import parse_document, parse_jsonl_set, read_text
from goldeneval.core.set_models import NonBlankText, SetItem, SetModel, published_schema, unique_ids, validate_items
from goldeneval.prompts.code_assertions import check_identity, check_reference
from goldeneval.prompts.rubrics import RUBRICS
from goldeneval.prompts.safe_regex import check_pattern

__all__ = [
    "PROMPT_DIGEST_VERSION",
    "PROMPT_SET_SUFFIXES",
    "Assertion",
    "AssertionType",
    "GoldenPrompt",
    "GoldenPromptSet",
    "JsonType",
    "PromptSetError",
    "load_prompt_set",
    "prompt_set_digest",
    "prompt_set_json_schema",
]

PROMPT_SET_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")
PROMPT_DIGEST_VERSION = "prompts-v1"


class PromptSetError(SetFileError):
    """A golden prompt set cannot be loaded: the message names the file, the prompt and the field."""

    item = "prompt"


class AssertionType(StrEnum):
    EXACT = "exact"
    """The answer, trimmed, equals ``value``."""
    CONTAINS = "contains"
    """The answer contains ``value``."""
    CONTAINS_ANY = "contains-any"
    """The answer contains at least one of ``values``."""
    CONTAINS_ALL = "contains-all"
    """The answer contains every one of ``values``."""
    STARTS_WITH = "starts-with"
    """The answer, trimmed, starts with ``value``."""
    LEVENSHTEIN = "levenshtein"
    """The answer is within ``max_distance`` edits of ``value`` (or at least ``min_ratio`` similar)."""
    REGEX = "regex"
    """``value`` (a regular expression, Python syntax) matches somewhere in the answer, within a time bound."""
    JSON_SCHEMA = "json_schema"
    """The answer is a JSON object with the ``required`` keys and the ``properties`` types."""
    CODE = "code"
    """``value`` names a Python check (a ``goldeneval.assertions`` id or ``package.module:function``)
    that takes the answer and returns ``bool`` or ``(bool, message)``."""


class JsonType(StrEnum):
    STRING = "string"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    ARRAY = "array"
    OBJECT = "object"
    NULL = "null"


class Assertion(BaseModel):
    """One deterministic check of an answer; no model call, no tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: AssertionType = Field(
        description="exact, contains, contains-any, contains-all, starts-with, levenshtein, regex, json_schema or code."
    )
    value: str | None = Field(
        default=None,
        description="exact/contains/starts-with/levenshtein: the text; regex: the pattern; code: a "
        "goldeneval.assertions id or package.module:function. "
        "Not used by contains-any, contains-all and json_schema.",
    )
    values: list[str] = Field(default_factory=list, description="contains-any/contains-all: the texts.")
    max_distance: int | None = Field(
        default=None, ge=0, description="levenshtein: the most single-character edits the answer may be from value."
    )
    min_ratio: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
        description="levenshtein: the least normalised similarity, 1 - distance / length of the longer text.",
    )
    case_sensitive: bool = Field(
        default=False, description="Every text comparison (and regex) is case-sensitive; else case-insensitive."
    )
    required: list[str] = Field(default_factory=list, description="json_schema: keys the JSON object must have.")
    properties: dict[str, JsonType] = Field(
        default_factory=dict, description="json_schema: the JSON type of each key (checked when the key is present)."
    )
    negate: bool = Field(default=False, description="Pass when the check fails.")
    weight: float = Field(default=1.0, gt=0, le=1000, allow_inf_nan=False, description="Weight in the prompt's score.")

    @model_validator(mode="after")
    def _fields_fit_the_type(self) -> Assertion:
        many = self.type in (AssertionType.CONTAINS_ANY, AssertionType.CONTAINS_ALL)
        if self.values and not many:
            raise ValueError(f"{self.type.value} does not take 'values' (contains-any and contains-all do)")
        if (self.max_distance is not None or self.min_ratio is not None) and self.type is not AssertionType.LEVENSHTEIN:
            raise ValueError(f"{self.type.value} does not take 'max_distance' or 'min_ratio' (levenshtein does)")
        if many:
            if self.value is not None or self.required or self.properties:
                raise ValueError(f"{self.type.value} takes 'values' (a list of texts), not 'value'")
            if not self.values or any(not text for text in self.values):
                raise ValueError(f"{self.type.value} needs 'values': a non-empty list of non-empty texts")
            return self
        if self.type is AssertionType.LEVENSHTEIN and (self.max_distance is None) == (self.min_ratio is None):
            raise ValueError("levenshtein needs exactly one of 'max_distance' or 'min_ratio'")
        if self.type is AssertionType.JSON_SCHEMA:
            if self.value is not None:
                raise ValueError("json_schema takes 'required' and 'properties', not 'value'")
            if not self.required and not self.properties:
                raise ValueError("json_schema needs 'required' keys or 'properties' types")
            return self
        if self.required or self.properties:
            raise ValueError(f"{self.type.value} takes 'value', not 'required' or 'properties'")
        if self.value is None or self.value == "":
            raise ValueError(f"{self.type.value} needs a non-empty 'value'")
        if self.type is AssertionType.REGEX:
            try:
                check_pattern(self.value)
            except ValueError as exc:
                raise ValueError(f"invalid regular expression {one_line(self.value, 60)!r}: {exc}") from None
        if self.type is AssertionType.CODE:
            check_reference(self.value)  # the form only: listing sets must import nobody's module
        return self

    def digest_record(self) -> dict[str, Any]:
        """The assertion as the set digest sees it.  Fields added after ``prompts-v1``
        (``values``, ``max_distance``, ``min_ratio``) appear only when set, so a set without
        them keeps its digest, and its stored baselines stay comparable."""
        record = self.model_dump(mode="json")
        for name in ("values", "max_distance", "min_ratio"):
            if record[name] in (None, []):
                del record[name]
        if self.type is AssertionType.CODE and self.value is not None:
            record["code"] = check_identity(self.value)  # an edited check changes what the set measures
        return record

    def describe(self) -> str:
        """A short label, e.g. ``not contains 'x'`` (quotes the set: full privacy only)."""
        prefix = "not " if self.negate else ""
        if self.type is AssertionType.JSON_SCHEMA:
            keys = sorted({*self.required, *self.properties})
            return f"{prefix}json_schema({', '.join(keys)})"
        if self.values:
            return f"{prefix}{self.type.value} {one_line(', '.join(map(repr, self.values)), 60)}"
        if self.type is AssertionType.LEVENSHTEIN:
            bound = (
                f"distance <= {self.max_distance}" if self.max_distance is not None else f"ratio >= {self.min_ratio:g}"
            )
            return f"{prefix}levenshtein({bound}) {one_line(self.value or '', 60)!r}"
        return f"{prefix}{self.type.value} {one_line(self.value or '', 60)!r}"


def _known_judge_rubric(value: str | None) -> str | None:
    if value is not None and value not in RUBRICS:
        raise ValueError(f"unknown judge rubric {value!r} (known: {', '.join(sorted(RUBRICS))})")
    return value


class GoldenPrompt(SetItem):
    """One golden prompt."""

    prompt: NonBlankText = Field(min_length=1, description="The user message sent to the model.")
    system: str | None = Field(default=None, description="An optional system prompt.")
    assertions: tuple[Assertion, ...] = Field(default=(), description="Deterministic checks of the answer.")
    reference: str | None = Field(
        default=None,
        description="A reference answer: the judge sees it; without assertions, the deterministic "
        "grader scores token F1 against it.",
    )
    tags: tuple[str, ...] = Field(default=(), description="Free-form labels.")
    rubric: Annotated[str | None, AfterValidator(_known_judge_rubric)] = Field(
        default=None,
        description="The judge's rubric for this prompt (correctness, faithfulness or relevance), overriding "
        "the run's. Only the llm_judge grader reads it.",
    )

    @model_validator(mode="after")
    def _gradable(self) -> GoldenPrompt:
        if not self.assertions and not (self.reference and self.reference.strip()):
            raise ValueError("a prompt needs at least one assertion or a reference answer")
        return self


class GoldenPromptSet(SetModel):
    """A named list of golden prompts."""

    id: NonBlankText = Field(min_length=1, max_length=200, description="Unique among all prompt sets.")
    corpus: str | None = Field(
        default=None,
        description="A corpus for retrieval-augmented models (goldeneval.extractive), relative to the set file.",
    )
    prompts: Annotated[tuple[GoldenPrompt, ...], unique_ids("prompt")] = Field(min_length=1)


def prompt_set_json_schema() -> dict[str, Any]:
    """The JSON Schema of a YAML/JSON golden prompt set file, generated from the models."""
    return published_schema(GoldenPromptSet, "golden-prompt-set")


# --------------------------------------------------------------------------- digest


def _nfc(value: str | None) -> str | None:
    return None if value is None else unicodedata.normalize("NFC", value)


def _assertion_records(prompt_set: GoldenPromptSet, prompt: GoldenPrompt) -> list[dict[str, Any]]:
    """The prompt's assertions as the digest sees them; a code check that cannot be imported
    (only now, when its set is evaluated) is invalid input naming the prompt and the field."""
    records = []
    for position, assertion in enumerate(prompt.assertions):
        try:
            records.append(assertion.digest_record())
        except ValueError as exc:
            raise InputError(
                f"prompt set {prompt_set.id!r}: prompt {prompt.id!r}: field 'assertions.{position}': {exc}"
            ) from None
    return records


def prompt_set_digest(prompt_set: GoldenPromptSet) -> str:
    """``prompts-v1:sha256:<hex>`` over every prompt's id, prompt, system prompt, assertions
    and reference (the labels of a prompt set), and its judge rubric when it names one;
    independent of prompt order, blind to tags and the description."""
    records = sorted(
        (
            [
                _nfc(p.id),
                _nfc(p.prompt),
                _nfc(p.system),
                _assertion_records(prompt_set, p),
                _nfc(p.reference),
                *([p.rubric] if p.rubric is not None else []),  # absent when unset: older digests hold
            ]
            for p in prompt_set.prompts
        ),
        key=lambda record: str(record[0]),
    )
    encoded = json.dumps({"version": PROMPT_DIGEST_VERSION, "prompts": records}, ensure_ascii=False, sort_keys=True)
    return f"{PROMPT_DIGEST_VERSION}:sha256:{hashlib.sha256(encoded.encode('utf-8')).hexdigest()}"


# --------------------------------------------------------------------------- loading


def _read(path: Path) -> Any:
    suffix = path.suffix.lower()
    if suffix not in PROMPT_SET_SUFFIXES:
        raise PromptSetError(path, f"unsupported file type {suffix!r}; use one of {', '.join(PROMPT_SET_SUFFIXES)}")
    text = read_text(path, PromptSetError)
    if suffix != ".jsonl":
        return parse_document(path, suffix, text, PromptSetError)
    return parse_jsonl_set(path, text, "prompts", PromptSetError, header_must_be_object=False)


def _field(loc: tuple[int | str, ...]) -> str:
    return one_line(".".join(str(part) for part in loc), 60) or "(prompt)"


def _quoted_id(raw_id: str) -> str:
    return one_line(raw_id, 60)


def _problem(exc: ValidationError) -> tuple[str, str]:
    error = exc.errors()[0]
    message = error_problem(error, {"missing": "missing required field"})
    if error["type"] not in ("missing", "extra_forbidden") and "input" in error and error["loc"]:
        message += f" (got {one_line(repr(error['input']), 80)})"
    return _field(error["loc"]), one_line(message, 200)


def load_prompt_set(path: str | Path) -> GoldenPromptSet:
    """Load and validate one golden prompt set file (YAML, JSON or JSONL).

    JSONL holds one prompt per line with an optional first line ``{"set": {"id": ...}}``
    (else the file name is the id).  A relative ``corpus`` is resolved against the file.
    """
    path = Path(path)
    raw = _read(path)
    if not isinstance(raw, Mapping):
        raise PromptSetError(path, f"expected a mapping with 'id' and 'prompts', found {type(raw).__name__}")
    raw_prompts = raw.get("prompts")
    if not isinstance(raw_prompts, list) or not raw_prompts:
        raise PromptSetError(path, "must be a non-empty list of prompts", field="prompts")
    prompts = list(
        validate_items(path, raw_prompts, GoldenPrompt, PromptSetError, describe=_problem, quote_id=_quoted_id)
    )
    header = {key: value for key, value in raw.items() if key != "prompts"}
    try:
        loaded = GoldenPromptSet.model_validate({**header, "prompts": prompts})
    except ValidationError as exc:
        field, problem = _problem(exc)
        raise PromptSetError(path, problem, field=field) from None
    return loaded.with_corpus_beside(path)
