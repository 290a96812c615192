"""The typed, versioned record of a retrieval run's details: what the store's ``details``
column holds.

The evaluator writes it (:meth:`goldeneval.retrieval.run.RetrievalRun.details`); the report,
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
* 4 — columnar: ``questions`` is one object of columns (:class:`QuestionColumns`), one
  entry per question in set order, instead of a list of records; the documents are
  dictionary-coded (:class:`DocumentColumns`).  A 100,000-question run with 100 documents a
  question is written and read without a Python object per question or per document.
  :meth:`RetrievalDetails.question_rows` gives the records of any format.
* 5 — format 4 and judged@k, written only for a run of a set that records judged negatives
  (every other run is still written as format 4): ``judged`` (:class:`JudgedDetail`, the
  means overall and by form) and per question ``judged_at`` (the shares) and
  ``unjudged_ranks`` (which of the top-3 documents carry no judgment: ranks, never ids).
  Any format may also hold ``average_over: all-judged`` (trec_eval's averaging) and
  ``judged_only: true`` (condensed lists, trec_eval -J); the defaults are absent, so a run
  that does not ask for them is stored as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import Annotated, Any, Literal, Self

import numpy as np
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, model_validator

from goldeneval.core.forms import NO_HARD_CLASS
from goldeneval.core.kinds import UNKEYED_KIND, DetailsKind, stored_details_error
from goldeneval.core.records import Completion, StoredRun
from goldeneval.core.regression import COVERAGE_CUTOFF
from goldeneval.core.stats import Verdicts
from goldeneval.retrieval.details.base import DetailRecord, absent
from goldeneval.retrieval.details.questions import QuestionColumns, QuestionDetail

__all__ = [
    "COLUMNAR_FORMAT_VERSION",
    "COVERAGE_FORMAT_VERSION",
    "DETAILS_FORMAT_VERSION",
    "JUDGED_CUTOFF",
    "QUESTIONS_COMPLETION",
    "RATE_NAMES",
    "RETRIEVAL_DETAILS",
    "AggregatesDetail",
    "JudgedDetail",
    "RateDetail",
    "RetrievalDetails",
    "parse_details",
    "parse_details_json",
    "read_verdicts",
    "retrieval_details",
]

DETAILS_FORMAT_VERSION = 5
COVERAGE_FORMAT_VERSION = 5
"""The first format that may hold judged@k; runs without it are written as format 4."""
RATE_NAMES: Mapping[str, str] = {"pass_rate": "top-1 hit rate", "mean_score": "top-3 hit rate"}
"""What the stored rates of a retrieval run mean (ADR-072's mapping onto the store)."""
_HIT_COLUMNS: dict[str, Literal["top1_hit", "top3_hit"]] = {"pass_rate": "top1_hit", "mean_score": "top3_hit"}
COLUMNAR_FORMAT_VERSION = 4
"""The first format whose ``questions`` are columns."""
JUDGED_CUTOFF = COVERAGE_CUTOFF
"""The cutoff of the judged share the verdict and ``--min-judged`` read: the top-3 the gate looks at
(declared once, in :mod:`goldeneval.core.regression`)."""


class JudgedDetail(DetailRecord):
    """judged@k of a run (format 5): ir_measures' Judged@k, the share of the first k distinct
    documents that carry a judgment (relevant or judged not relevant), averaged over the
    scored questions where it is defined."""

    cutoffs: list[int]
    measured: int = Field(ge=0)
    """Questions the overall means are taken over (a judgment and a non-empty ranking)."""
    overall: dict[str, float | None]
    by_form: dict[str, dict[str, float | None]]
    bounds: dict[str, list[float | None]] | None = Field(default=None, exclude_if=absent)
    """Each rank metric's mean with every unjudged document of its top k not relevant (the
    metric as reported) and with every one relevant: ``[low end, other end]``."""


class RateDetail(DetailRecord):
    """Hit counts and rates of a group of questions (overall, one form, one hard class)."""

    questions: int
    scored: int
    errors: int
    top1_hits: int
    top3_hits: int
    top1_rate: float | None
    top3_rate: float | None


class AggregatesDetail(DetailRecord):
    overall: RateDetail
    by_form: dict[str, RateDetail]
    by_hard_class: dict[str, RateDetail]
    metrics: dict[str, float]


class RetrievalDetails(DetailRecord):
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
    questions: Annotated[
        Annotated[list[QuestionDetail], Tag("records")] | Annotated[QuestionColumns, Tag("columns")],
        Discriminator(lambda value: "records" if isinstance(value, list) else "columns"),
    ]
    """Records before format 4, columns since (read either with :meth:`question_rows` or
    :meth:`columns`)."""
    retriever_id: str | None = None
    """The retriever id behind the series name; None for runs stored before it was recorded."""
    tables_run_id: str | None = None
    """The Dagster run whose Parquet tables this run was built from (retention deletes them)."""
    corpus_revision: str | None = Field(default=None, exclude=True)
    """Format 1 only (schema-1 stores); the provenance column holds it.  Read, never written."""
    judged: JudgedDetail | None = Field(default=None, exclude_if=absent)
    """Format 5: judged@k overall and by form; None for a set without judged negatives."""
    average_over: Literal["all-judged"] | None = Field(default=None, exclude_if=absent)
    """``all-judged`` when the metrics' means follow trec_eval (every query of the qrels, the
    set's ``unjudged`` counting 0); absent for the default (``with-relevant``)."""
    judged_only: Literal[True] | None = Field(default=None, exclude_if=absent)
    """True when the rank metrics were computed on condensed lists (trec_eval -J); absent otherwise."""

    @model_validator(mode="after")
    def _questions_in_the_format_shape(self) -> Self:
        columnar = isinstance(self.questions, QuestionColumns)
        if columnar != (self.format_version >= COLUMNAR_FORMAT_VERSION):
            shape = "columns" if columnar else "a list of records"
            raise ValueError(f"questions: format {self.format_version} does not hold {shape}")
        holds_coverage = self.judged is not None or (
            isinstance(self.questions, QuestionColumns)
            and (self.questions.judged_at is not None or self.questions.unjudged_ranks is not None)
        )
        if holds_coverage and self.format_version < COVERAGE_FORMAT_VERSION:
            raise ValueError(f"judged: format {self.format_version} holds no judged@k")
        if isinstance(self.questions, QuestionColumns) and self.measurement_depth is not None:
            deepest = max((d for d in self.questions.depth if d is not None), default=0)
            if deepest > self.measurement_depth:
                raise ValueError(
                    f"questions.depth: {deepest} is deeper than the measurement depth {self.measurement_depth}"
                )
        return self

    @cached_property
    def columns(self) -> QuestionColumns:
        """The questions as columns, whatever the format (records are converted once)."""
        if isinstance(self.questions, QuestionColumns):
            return self.questions
        return QuestionColumns.from_rows(self.questions)

    def judged_share(self, k: int = JUDGED_CUTOFF) -> float | None:
        """The run's judged@k (mean over the questions where it is defined); None when the
        run did not measure it (a set without judged negatives, a run stored before)."""
        return None if self.judged is None else self.judged.overall.get(f"judged@{k}")

    def metric_bounds(self) -> dict[str, tuple[float, float]] | None:
        """Each rank metric's mean with every unjudged document of its top k not relevant and
        relevant, where both are defined; None when the run measured no bounds."""
        if self.judged is None or not self.judged.bounds:
            return None
        return {
            name: (low, high)
            for name, (low, high) in self.judged.bounds.items()
            if low is not None and high is not None
        }

    def unjudged_top(self) -> dict[str, list[str]] | None:
        """Per scored question, the top-3 documents that carry no judgment (only questions that
        have some); None where it cannot be said: the run measured no judged@k, or its
        documents were withheld (``metadata_only``), so no id is ever read from such a run."""
        columns = self.columns
        if columns.unjudged_ranks is None:
            return None
        tops = columns.top_documents(JUDGED_CUTOFF)
        if tops is None:
            return None
        return {
            question_id: [top[rank - 1] for rank in ranks if rank <= len(top)]
            for question_id, ranks, top in zip(columns.id, columns.unjudged_ranks, tops, strict=True)
            if ranks
        }

    def unjudged_counts(self) -> dict[str, int] | None:
        """Per scored question, how many of its top-3 documents carry no judgment (no ids:
        readable in every privacy mode); None when the run measured no judged@k."""
        columns = self.columns
        if columns.unjudged_ranks is None:
            return None
        return {question_id: len(ranks) for question_id, ranks in zip(columns.id, columns.unjudged_ranks, strict=True)}

    def question_json(self) -> Iterator[dict[str, Any]]:
        """The questions as ``--format json`` lists them, one at a time, whatever the format."""
        if isinstance(self.questions, QuestionColumns):
            return self.questions.json_rows()
        return (question.to_json() for question in self.questions)

    def question_rows(self) -> list[QuestionDetail]:
        """The questions as records, whatever the format."""
        if isinstance(self.questions, QuestionColumns):
            return self.questions.rows()
        return list(self.questions)

    def verdicts(self, column: Literal["top1_hit", "top3_hit"]) -> tuple[list[str], np.ndarray]:
        """The scored questions' ids in set order and their verdicts (what a comparison pairs)."""
        return _scored(self.columns.id, getattr(self.columns, column))

    @property
    def rate_names(self) -> Mapping[str, str]:
        return RATE_NAMES

    @property
    def unit(self) -> str:
        """A retrieval run asks questions."""
        return "questions"

    def paired_outcomes(self, rate: str) -> Verdicts | None:
        """Both stored rates are shares of binary verdicts: top-1 and top-3 hits."""
        return Verdicts(*self.verdicts(_HIT_COLUMNS[rate]))

    def slice_of(self, kind: str) -> Mapping[str, str] | None:
        """Each question's form (``form``) or hard class (``hard_class``, :data:`NO_HARD_CLASS`
        for none), as the run's slices group them."""
        columns = self.columns
        if kind == "form":
            return dict(zip(columns.id, columns.form, strict=True))
        if kind == "hard_class":
            return {qid: label or NO_HARD_CLASS for qid, label in zip(columns.id, columns.hard_class, strict=True)}
        return None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def to_json_text(self) -> str:
        """:meth:`to_json` as one JSON string, serialised without a Python object per value
        (what the store writes: a 100,000-question run is not held as dicts and a string)."""
        return self.model_dump_json()

    def to_dataframe(self) -> Any:
        """One row per question (pandas), metrics as ``metric:<name>`` columns: for notebooks."""
        import pandas as pd  # type: ignore[import-untyped]

        columns = self.columns
        frame: dict[str, list[Any]] = {
            "id": columns.id,
            "form": columns.form,
            "hard_class": columns.hard_class,
            "depth": columns.depth,
            "top1_hit": columns.top1_hit,
            "top3_hit": columns.top3_hit,
            "latency_ms": columns.latency_ms,
            "status": columns.status,
            "error": columns.error,
        }
        documents = columns.document_lists()
        if documents is not None:  # withheld (metadata_only): no column, as a record leaves the field out
            frame["documents"] = documents
        # A record names only the metrics defined for it: a metric defined for no question has no column.
        frame.update(
            {f"metric:{name}": values for name, values in columns.metrics.items() if any(v is not None for v in values)}
        )
        frame.update({f"judged:{name}": values for name, values in (columns.judged_at or {}).items()})
        return pd.DataFrame(frame)


class _VerdictColumns(BaseModel):
    """Of format 4's question columns, only what a comparison pairs."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: list[str]
    top1_hit: list[bool | None]
    top3_hit: list[bool | None]

    @model_validator(mode="after")
    def _one_entry_per_question(self) -> Self:
        for name in ("top1_hit", "top3_hit"):
            if len(getattr(self, name)) != len(self.id):
                raise ValueError(f"{name}: {len(getattr(self, name))} entries for {len(self.id)} questions")
        return self


class _StoredFormat(BaseModel):
    """What kind and format stored details are, read without building the rest."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    kind: str | None = None
    format_version: int = 1


class _StoredVerdicts(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    questions: _VerdictColumns


def read_verdicts(text: str | bytes, where: str) -> dict[str, tuple[list[str], np.ndarray]] | None:
    """The verdict columns of stored retrieval details (format 4), read without the rest.

    A comparison pairs only the question ids and the top-1/top-3 verdicts of the earlier run;
    parsing its other columns (latencies, every metric, the documents) cost more than the
    comparison itself.  The columns read are validated; the rest is when the details are
    read.  None for formats before 4 (and details of another kind): read them whole."""
    try:
        stored = _StoredFormat.model_validate_json(text)
        if stored.kind is not None or stored.format_version < COLUMNAR_FORMAT_VERSION:
            return None
        columns = _StoredVerdicts.model_validate_json(text).questions
    except ValidationError as exc:
        raise stored_details_error(exc, where) from None
    return {name: _scored(columns.id, getattr(columns, name)) for name in ("top1_hit", "top3_hit")}


def _stored_outcomes(text: str | bytes, where: str) -> dict[str, Verdicts] | None:
    verdicts = read_verdicts(text, where)
    if verdicts is None:
        return None
    return {rate: Verdicts(*verdicts[column]) for rate, column in _HIT_COLUMNS.items()}


def _scored(ids: list[str], values: list[bool | None]) -> tuple[list[str], np.ndarray]:
    """The scored questions' ids and their verdicts (an error has none)."""
    if None not in values:  # no error: the columns as they are
        return ids, np.asarray(values, dtype=np.bool_)
    kept = [i for i, value in enumerate(values) if value is not None]
    return [ids[i] for i in kept], np.asarray([values[i] for i in kept], dtype=np.bool_)


def parse_details_json(text: str | bytes, where: str) -> RetrievalDetails:
    """:func:`parse_details` of the stored JSON text, parsed and validated in one pass (no
    Python dict per value: a 100,000-question run reads several times faster)."""
    try:
        return _read_from(RetrievalDetails.model_validate_json(text), where)
    except ValidationError as exc:
        raise stored_details_error(exc, where) from None


def parse_details(raw: Any, where: str) -> RetrievalDetails:
    """Validate stored retrieval details; a mismatch names the run and the field."""
    try:
        return _read_from(RetrievalDetails.model_validate(raw), where)
    except ValidationError as exc:
        raise stored_details_error(exc, where) from None


def _read_from(details: RetrievalDetails, where: str) -> RetrievalDetails:
    """``details`` read from ``where``: documents decoded later (when first read) name it in an error."""
    if isinstance(details.questions, QuestionColumns) and details.questions.documents is not None:
        details.questions.documents._where = where
    return details


def retrieval_details(stored: StoredRun) -> RetrievalDetails:
    """The details of a stored retrieval run; a run of another kind is invalid input."""
    return stored.details_as(RetrievalDetails)


QUESTIONS_COMPLETION = Completion(unit="questions", done="answered", failed="errored or timed out")
"""A retrieval run is complete when every question was answered (none errored or timed out)."""

RETRIEVAL_DETAILS = DetailsKind(names=(UNKEYED_KIND,), read=parse_details_json, outcomes=_stored_outcomes)
"""Retrieval details carry no ``kind`` key (they predate it); named by the retrieval kind's
declaration (:mod:`goldeneval.kinds.retrieval`), so a store is read before this is imported."""
