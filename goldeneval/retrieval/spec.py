"""The run specification: everything one evaluation needs, frozen and validated.

Both front doors build one — the CLI from its flags (:mod:`goldeneval.cli`), Dagster from one
suite cell (:meth:`goldeneval.suite.Suite.run_spec`) — and hand it to the verbs of
:mod:`goldeneval.retrieval.pipeline`.  Nothing else decides how a run is evaluated, stored or judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import Field, field_validator

from goldeneval.core.spec import MAX_SERIES_LENGTH, MAX_TIMEOUT_S, SpecBase, check_series_name
from goldeneval.core.workers import MAX_WORKERS
from goldeneval.retrieval.metrics import (
    DEFAULT_AVERAGE_OVER,
    DEFAULT_METRICS,
    DEFAULT_RELEVANCE_LEVEL,
    MAX_CUTOFF,
    AverageOver,
    Metric,
    parse_metrics,
)
from goldeneval.retrieval.retrievers.base import DEFAULT_CHUNK_SEPARATOR
from goldeneval.retrieval.scoring import DEFAULT_HIT_CUTOFFS

__all__ = [
    "MAX_SERIES_LENGTH",
    "MAX_TIMEOUT_S",
    "RunSpec",
    "check_hit_cutoffs",
    "check_metric_names",
    "check_series_name",
]

MAX_BATCH_SIZE = 10_000
"""A larger batch holds too many questions' candidates in memory at once."""


def check_hit_cutoffs(cutoffs: Sequence[int]) -> tuple[int, ...]:
    """Reported hit@k cutoffs: whole numbers from 1 to 1000, sorted, each once."""
    if not cutoffs or min(cutoffs) < 1 or max(cutoffs) > MAX_CUTOFF:
        raise ValueError(f"hit cutoffs must be whole numbers from 1 to {MAX_CUTOFF}")
    return tuple(sorted(set(cutoffs)))


def check_metric_names(names: str | Sequence[str]) -> tuple[str, ...]:
    """Metric names of the registry (``ndcg@10,recall@100``), canonical, each once."""
    return tuple(metric.name for metric in parse_metrics(names))


class RunSpec(SpecBase):
    """One evaluation of a golden set against a retriever, and how its verdict is decided.

    The series name is what a run is stored under and compared within: a CLI run with
    ``--name lexical`` and a nightly run of the suite's retriever ``lexical`` are one series.
    """

    set_ref: str = Field(min_length=1, description="Registered set id, set file or BEIR folder.")
    expected_set_id: str | None = Field(
        default=None, description="The id the set must have (a suite cell's set): a changed id fails."
    )
    sets_dirs: tuple[Path, ...] = ()
    beir_split: str = "test"
    retriever_id: str = Field(min_length=1, description="Registered retriever id or package.module:factory.")
    options: dict[str, str] = Field(default_factory=dict)
    corpus: Path | None = Field(default=None, description="Corpus path; None: the set's own.")
    chunk_separator: str | None = DEFAULT_CHUNK_SEPARATOR
    workers: int = Field(
        default=1, ge=1, le=MAX_WORKERS, description="Retrieval calls in flight at once (for network retrievers)."
    )
    batch_size: int | None = Field(
        default=None,
        ge=1,
        le=MAX_BATCH_SIZE,
        description="Questions per retrieve_batch call, when the retriever has one (None: the default; 1: never).",
    )
    hit_cutoffs: tuple[int, ...] = DEFAULT_HIT_CUTOFFS
    metrics: tuple[str, ...] = Field(
        default=tuple(metric.name for metric in DEFAULT_METRICS),
        description="Rank metrics reported beside hit@k (goldeneval.retrieval.metrics); the deepest sets the depth.",
    )
    relevance_level: int = Field(
        default=DEFAULT_RELEVANCE_LEVEL, ge=1, description="Grade from which the binary metrics count a document."
    )
    average_over: AverageOver = Field(
        default=DEFAULT_AVERAGE_OVER,
        description="Questions a metric's mean is over: with-relevant (default) or all-judged (trec_eval's rule).",
    )
    strict: bool = Field(default=False, description="Fail, instead of warning, on expected ids not in the corpus.")

    @field_validator("hit_cutoffs")
    @classmethod
    def _cutoffs(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        return check_hit_cutoffs(value)

    @field_validator("metrics", mode="before")
    @classmethod
    def _metrics(cls, value: str | Sequence[str]) -> tuple[str, ...]:
        return check_metric_names(value)

    @property
    def parsed_metrics(self) -> tuple[Metric, ...]:
        return parse_metrics(self.metrics)

    @field_validator("chunk_separator")
    @classmethod
    def _separator(cls, value: str | None) -> str | None:
        return value or None
