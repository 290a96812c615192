"""How a retrieval run is asked and scored, declared once (:mod:`goldeneval.core.settings`):
each field is a top-level key of the suite file, a field of
:class:`~goldeneval.retrieval.spec.RunSpec` and a flag of ``goldeneval retrieval``.

Every rule sits in the field's type, so the suite file, the specification and a flag alone
are checked by the same validator with the same message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from goldeneval.core.settings import Flag
from goldeneval.core.thresholds import RateNames
from goldeneval.core.workers import MAX_WORKERS
from goldeneval.retrieval.defaults import DEFAULT_BATCH_SIZE, DEFAULT_CHUNK_SEPARATOR, DEFAULT_HIT_CUTOFFS
from goldeneval.retrieval.metrics import (
    DEFAULT_AVERAGE_OVER,
    DEFAULT_METRICS,
    DEFAULT_RELEVANCE_LEVEL,
    MAX_CUTOFF,
    AverageOver,
    parse_metrics,
)

__all__ = [
    "MAX_BATCH_SIZE",
    "RETRIEVAL_RATES",
    "RetrievalSettings",
    "check_hit_cutoffs",
    "check_metric_names",
]

MAX_BATCH_SIZE = 10_000
"""A larger batch holds too many questions' candidates in memory at once."""

RETRIEVAL_RATES = RateNames(
    pass_key="max_top1_drop",
    pass_words="top-1 hit rate",
    score_key="max_top3_drop",
    score_words="top-3 hit rate",
    significance="a drop",
)
"""Retrieval's words for its two rates: the suite file's ``thresholds.max_top1_drop`` and
``--max-top1-drop`` set the largest drop of the top-1 hit rate (the store's ``pass_rate``)."""


def check_hit_cutoffs(cutoffs: Sequence[int]) -> tuple[int, ...]:
    """Reported hit@k cutoffs: whole numbers from 1 to 1000, sorted, each once."""
    if not cutoffs or min(cutoffs) < 1 or max(cutoffs) > MAX_CUTOFF:
        raise ValueError(f"hit cutoffs must be whole numbers from 1 to {MAX_CUTOFF}")
    return tuple(sorted(set(cutoffs)))


def _comma_separated_integers(value: object) -> object:
    """``"1,3,10"`` (a flag's value, or the same text in the suite file) as a list of integers."""
    if not isinstance(value, str):
        return value
    try:
        return [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"expected comma-separated integers, got {value!r}") from None


def check_metric_names(names: object) -> tuple[str, ...]:
    """Metric names of the registry (``ndcg@10,recall@100``, or a list of names), canonical,
    each once; anything else (null, a number, a mapping) is refused as such."""
    if not isinstance(names, str | list | tuple):
        raise ValueError(f"expected a list of metric names or comma-separated text, got {type(names).__name__}")
    return tuple(metric.name for metric in parse_metrics(names))


class RetrievalSettings(BaseModel):
    """The settings of a retrieval run beyond the set and the retriever."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    chunk_separator: Annotated[str | None, Flag(), AfterValidator(lambda value: value or None)] = Field(
        default=DEFAULT_CHUNK_SEPARATOR,
        description="Returned ids map to document ids by the prefix before this separator ('' to keep ids).",
    )
    workers: Annotated[int, Flag()] = Field(
        default=1,
        ge=1,
        le=MAX_WORKERS,
        description="Retrieval calls in flight at once, for retrievers that wait on a network service.",
    )
    batch_size: Annotated[int | None, Flag()] = Field(
        default=None,
        ge=1,
        le=MAX_BATCH_SIZE,
        description=f"Questions per retrieve_batch call, for retrievers that have one (default {DEFAULT_BATCH_SIZE}; "
        "1: never).",
    )
    hit_cutoffs: Annotated[
        tuple[int, ...],
        Flag("--hit-k", separated=True),
        BeforeValidator(_comma_separated_integers),
        AfterValidator(check_hit_cutoffs),
    ] = Field(default=DEFAULT_HIT_CUTOFFS, description="Cutoffs of the reported hit@k metrics (1 to 1000).")
    metrics: Annotated[tuple[str, ...], Flag(separated=True), BeforeValidator(check_metric_names)] = Field(
        default=tuple(metric.name for metric in DEFAULT_METRICS),
        description="Rank metrics reported beside hit@k: ndcg@k, recall@k, mrr@k, precision@k (p@k), map@k, hit@k, "
        "rprec, bpref, infap; k from 1 to 1000. The deepest cutoff is the measurement depth "
        "(docs/reference/metrics.md).",
    )
    relevance_level: Annotated[int, Flag()] = Field(
        default=DEFAULT_RELEVANCE_LEVEL,
        ge=1,
        description="Grade from which a document counts as relevant for the binary metrics (trec_eval -l).",
    )
    average_over: Annotated[AverageOver, Flag()] = Field(
        default=DEFAULT_AVERAGE_OVER,
        description="Questions each rank metric's mean is over: with-relevant (those with an expected document) or "
        "all-judged (trec_eval's rule: every query of the qrels, one judged only with grade 0 counting 0). "
        "Part of the benchmark: runs under different rules are never compared.",
    )
    judged_only: Annotated[bool, Flag()] = Field(
        default=False,
        description="Compute every rank metric on condensed lists, each ranking without its unjudged documents "
        "(trec_eval -J); the top-1/top-3 hits are never condensed. Part of the benchmark.",
    )
    strict: Annotated[bool, Flag()] = Field(
        default=False, description="Fail (exit 3) instead of warning when expected document ids are not in the corpus."
    )
