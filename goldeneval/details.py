"""The typed, versioned record of a retrieval run's details: what the store's ``details``
column holds.

The evaluator writes it (:meth:`goldeneval.evaluation.RetrievalRun.details`); the report,
the regression verdict, the comparison, the TREC export and retention read it.  Every model
forbids unknown keys and most fields are required, so renaming a field on one side fails
loudly (a validation error naming the field) instead of quietly reading "no shared
questions".

Format versions:

* 1 — the shape stored by goldeneval before the record was typed (no ``format_version``
  key; the first stores also kept a ``corpus_revision``, now a column; the Dagster assets
  added ``tables_run_id``).  Read as is.
* 2 — adds ``format_version``, ``retriever_id`` (the retriever behind the series name) and
  ``tables_run_id`` as declared fields.
* 3 — measurement depth: ``metrics`` (the names reported), ``relevance_level``,
  ``measurement_depth``, ``unjudged`` (question ids the set's source left out), and per
  question ``depth`` (distinct documents reached); ``documents`` keep the ranking to the
  measurement depth instead of 10.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from goldeneval.errors import StoreError
from goldeneval.privacy import content_free_error, withheld
from goldeneval.prompts.details import PromptDetails

__all__ = [
    "DETAILS_FORMAT_VERSION",
    "AggregatesDetail",
    "QuestionDetail",
    "RateDetail",
    "RetrievalDetails",
    "RunDetails",
    "parse_details",
    "parse_details_json",
]

DETAILS_FORMAT_VERSION = 3


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class QuestionDetail(_Record):
    """One question of a stored run: what the evaluator measured, never its text."""

    id: str
    form: str
    hard_class: str | None
    documents: list[str] | None = Field(default=None, exclude_if=withheld)
    """Distinct returned document ids, best first, to the measurement depth (format 1 and 2:
    at most 10); None in ``metadata_only``."""
    depth: int | None = None
    """Distinct documents the ranking reached; None for an error and before format 3."""
    top1_hit: bool | None
    """None when the question errored (errors have no verdict)."""
    top3_hit: bool | None
    latency_ms: float
    status: Literal["ok", "error"]
    error: str | None
    metrics: dict[str, float]

    @property
    def scored(self) -> bool:
        return self.status == "ok"

    def without_content(self) -> QuestionDetail:
        """The ``metadata_only`` form: no document ids, an error reduced to its class."""
        return self.model_copy(update={"documents": None, "error": content_free_error(self.error)})

    def to_json(self) -> dict[str, Any]:
        """As the store and ``--format json`` hold it: ``documents`` absent when withheld."""
        return self.model_dump(mode="json")


class RateDetail(_Record):
    """Hit counts and rates of a group of questions (overall, one form, one hard class)."""

    questions: int
    scored: int
    errors: int
    top1_hits: int
    top3_hits: int
    top1_rate: float | None
    top3_rate: float | None


class AggregatesDetail(_Record):
    overall: RateDetail
    by_form: dict[str, RateDetail]
    by_hard_class: dict[str, RateDetail]
    metrics: dict[str, float]


class RetrievalDetails(_Record):
    """The ``details`` of a run whose grader is ``retrieval_hit_rate``."""

    format_version: int = Field(default=1, ge=1, le=DETAILS_FORMAT_VERSION)
    protocol: str
    top_k: int
    overfetch_multiplier: int
    hit_cutoffs: list[int]
    metrics: list[str] | None = None
    """Names of the rank metrics reported (format 3); before, hit@k plus the @10 metrics."""
    relevance_level: int = 1
    measurement_depth: int | None = None
    unjudged: list[str] = Field(default_factory=list)
    aggregates: AggregatesDetail
    questions: list[QuestionDetail]
    retriever_id: str | None = None
    """The retriever id behind the series name; None for runs stored before it was recorded."""
    tables_run_id: str | None = None
    """The Dagster run whose Parquet tables this run was built from (retention deletes them)."""
    corpus_revision: str | None = Field(default=None, exclude=True)
    """Format 1 only (schema-1 stores); the provenance column holds it.  Read, never written."""

    def hits(self, column: Literal["top1_hit", "top3_hit"]) -> dict[str, bool]:
        """Per question id, the verdict of the scored questions (errors have none)."""
        found: dict[str, bool] = {}
        for question in self.questions:
            value = getattr(question, column)
            if value is not None:
                found[question.id] = bool(value)
        return found

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def to_json_text(self) -> str:
        """:meth:`to_json` as one JSON string, serialised without a Python object per value
        (what the store writes: a 100,000-question run is not held as dicts and a string)."""
        return self.model_dump_json()

    def to_dataframe(self) -> Any:
        """One row per question (pandas), metrics as ``metric:<name>`` columns: for notebooks."""
        import pandas as pd  # type: ignore[import-untyped]

        rows = []
        for question in self.questions:
            row = question.model_dump(exclude={"metrics"})
            row.update({f"metric:{name}": value for name, value in question.metrics.items()})
            rows.append(row)
        return pd.DataFrame(rows)


RunDetails = RetrievalDetails | PromptDetails
"""The details of any stored run: retrieval runs have no ``kind`` key, prompt and answer runs
have ``kind: prompts`` / ``kind: answers`` (:mod:`goldeneval.prompts.details`)."""


def parse_details_json(text: str | bytes, where: str) -> RunDetails:
    """:func:`parse_details` of the stored JSON text, parsed and validated in one pass (no
    Python dict per value: a 100,000-question run reads several times faster)."""
    try:
        return RetrievalDetails.model_validate_json(text)
    except ValidationError:
        # Prompt and answer details (``kind``), or invalid details: the dispatching path,
        # which also words the error.
        return parse_details(json.loads(text), where)


def parse_details(raw: Any, where: str) -> RunDetails:
    """Validate stored details, dispatching on ``kind``; a mismatch names the run and the field."""
    try:
        if isinstance(raw, dict) and raw.get("kind") in ("prompts", "answers"):
            return PromptDetails.model_validate(raw)
        return RetrievalDetails.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "(details)"
        raise StoreError(f"{where}: details field {field!r}: {error['msg']}") from None
