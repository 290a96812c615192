"""Scoring protocol v1 (ADR-072, decision 3): its constants, its limits on what is asked, and
the names it is stored under.  Every module that scores, asks or reports reads the protocol
here, and this module reads nothing of a run: it is the floor the others stand on.

The protocol, exactly:

1. ask the retriever for ``TOP_K * OVERFETCH_MULTIPLIER`` raw ids, so that a chunk-grained
   ranking does not collapse to fewer than ``TOP_K`` documents;
2. map each id to its document id and collapse duplicates to their first occurrence;
3. top-1 hit: the first distinct document is expected; top-3 hit: any of the first three is;
4. a question with an empty expected set is a hit (both) only when nothing is returned;
5. a retriever error or timeout is an ``error``, never a miss: it is left out of every rate
   and makes the run ``incomplete``.

Rates are aggregated overall, by form and by hard class, each with its question count
(:mod:`goldeneval.retrieval.results`).

Separately from the protocol, the reported rank metrics (:mod:`goldeneval.retrieval.metrics`) look at
the question's distinct documents to the run's *measurement depth*: the evaluator asks for
``max(TOP_K * OVERFETCH_MULTIPLIER, depth)`` raw ids (:func:`first_raw_limit`) and over-fetches
again while fewer distinct documents than the depth come back and the retriever has more
(:func:`next_raw_limit`, up to :func:`raw_ceiling`; :func:`goldeneval.retrieval.asking.ask_to_depth`).
The protocol's hits are still taken from the first ``TOP_K * OVERFETCH_MULTIPLIER`` raw ids of
that ranking (a ranking must not change its head when asked for more, as any top-k ranking does).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from goldeneval.core.records import RETRIEVAL_GRADER
from goldeneval.retrieval.defaults import DEFAULT_CHUNK_SEPARATOR, DEFAULT_HIT_CUTOFFS
from goldeneval.retrieval.metrics import (
    DEFAULT_AVERAGE_OVER,
    DEFAULT_METRICS,
    DEFAULT_RELEVANCE_LEVEL,
    AverageOver,
    Metric,
    parse_metrics,
)

__all__ = [
    "DEFAULT_HIT_CUTOFFS",
    "GRADER_ID",
    "JUDGED_PREFIX",
    "OVERFETCH_MULTIPLIER",
    "SCORING_PROTOCOL_REVISION",
    "TOP_K",
    "first_raw_limit",
    "judged_cutoffs",
    "judged_name",
    "next_raw_limit",
    "raw_ceiling",
    "raw_limit",
    "run_metrics",
    "scoring_protocol",
]


TOP_K = 3
"""The deepest hit rate the protocol gates on."""
OVERFETCH_MULTIPLIER = 10
"""Raw ids asked for per question = TOP_K * OVERFETCH_MULTIPLIER."""
SCORING_PROTOCOL_REVISION = "retrieval-hit-rate/v1"
"""Changes whenever a rule above changes; part of the benchmark identity."""


def scoring_protocol(
    relevance_level: int = DEFAULT_RELEVANCE_LEVEL,
    average_over: AverageOver = DEFAULT_AVERAGE_OVER,
    chunk_separator: str | None = DEFAULT_CHUNK_SEPARATOR,
    judged_only: bool = False,
) -> str:
    """The protocol a run was scored under: the revision, and the relevance level, the
    averaging rule, the chunk separator and condensed lists (``judged_only``, trec_eval -J)
    when they are not the default (rank metrics at levels 1 and 2, averaged over other
    questions, of returned ids cut at another separator or of condensed lists, measure
    different things, so such runs are never one comparable series; runs at the defaults
    keep their identity).  No separator (``''`` or None) keeps ids whole."""
    settings = []
    if relevance_level != DEFAULT_RELEVANCE_LEVEL:
        settings.append(f"relevance_level={relevance_level}")
    if average_over != DEFAULT_AVERAGE_OVER:
        settings.append(f"average_over={average_over}")
    if (chunk_separator or "") != DEFAULT_CHUNK_SEPARATOR:
        settings.append(f"chunk_separator={json.dumps(chunk_separator or '')}")
    if judged_only:
        settings.append("judged_only=true")
    return f"{SCORING_PROTOCOL_REVISION}({','.join(settings)})" if settings else SCORING_PROTOCOL_REVISION


GRADER_ID = RETRIEVAL_GRADER
"""The store's grader column for retrieval runs (keeps them apart from prompt grading)."""


def raw_limit() -> int:
    return TOP_K * OVERFETCH_MULTIPLIER


def first_raw_limit(depth: int) -> int:
    """Raw ids asked for first: the protocol's over-fetch, or the measurement depth when deeper."""
    return max(raw_limit(), depth)


def raw_ceiling(depth: int) -> int:
    """The most raw ids ever asked for a question: ``OVERFETCH_MULTIPLIER`` times the depth."""
    return max(first_raw_limit(depth), depth * OVERFETCH_MULTIPLIER)


def next_raw_limit(limit: int, depth: int) -> int:
    """The limit of the next, deeper call (``OVERFETCH_MULTIPLIER`` times, up to the ceiling)."""
    return min(limit * OVERFETCH_MULTIPLIER, raw_ceiling(depth))


def run_metrics(
    hit_cutoffs: Sequence[int] = DEFAULT_HIT_CUTOFFS, metrics: Sequence[Metric] = DEFAULT_METRICS
) -> tuple[Metric, ...]:
    """The metrics a run reports: ``hit@k`` for each hit cutoff (``--hit-k``), then
    ``metrics`` (``--metrics``), each once."""
    names = [f"hit@{k}" for k in hit_cutoffs] + [metric.name for metric in metrics]
    return parse_metrics(names)


JUDGED_PREFIX = "judged@"
"""The name of ir_measures' Judged@k in every output (``judged@3``)."""


def judged_cutoffs(metrics: Sequence[Metric]) -> tuple[int, ...]:
    """The cutoffs judged@k is reported at: ``TOP_K`` (what the gated top-3 looked at) and
    every cutoff the run reports already, so each metric can be read beside its coverage."""
    return tuple(sorted({TOP_K, *(metric.k for metric in metrics if metric.k is not None)}))


def judged_name(k: int) -> str:
    return f"{JUDGED_PREFIX}{k}"
