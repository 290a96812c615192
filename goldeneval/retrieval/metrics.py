"""Rank metrics, declared as data: one registry that the CLI, the JSON output, the README
table and the Dagster metadata all read.

Beyond ADR-072 (reported, never gated): hit@k, MRR@k, Recall@k, Precision@k, nDCG@k,
MAP@k and R-precision, at any cutoff from 1 to :data:`MAX_CUTOFF`, and the measures made for
incomplete judgments, bpref and infAP (:mod:`goldeneval.retrieval.incomplete`).  Each is trec_eval's
measure of the same name, computed on one question's *distinct-document* ranking (chunk ids
collapsed to their document's first occurrence), and ``tests/test_metrics_crosscheck.py``
holds every one equal to pytrec-eval-terrier per question to 1e-9, on SciFact and on a
generated graded collection.

Relevance, as in trec_eval:

* a question's judgements are its expected documents with their grades (1 unless the set
  grades them); a question without any (a no-answer question) has no rank metrics at all
  (trec_eval never sees a query that has no qrels), and every run says how many such
  questions it left out;
* the binary metrics count a document relevant when its grade reaches the *relevance
  level* (default 1, trec_eval's ``-l``); a judged question with nothing at that level
  scores 0 on them, as trec_eval does;
* nDCG is graded whatever the level: the gain of a document is its grade, the ideal ranking
  orders the judged grades from high to low, and the discount is ``log2(rank + 1)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "AVERAGE_OVER",
    "DEFAULT_AVERAGE_OVER",
    "DEFAULT_METRICS",
    "DEFAULT_RELEVANCE_LEVEL",
    "MAX_CUTOFF",
    "METRIC_KINDS",
    "WHOLE_RANKING_KINDS",
    "AverageOver",
    "Metric",
    "MetricKind",
    "measurement_depth",
    "parse_metrics",
]

MAX_CUTOFF = 1000
"""The deepest cutoff a metric may ask for (trec_eval's default run depth)."""
DEFAULT_RELEVANCE_LEVEL = 1
"""The grade from which a document counts as relevant for the binary metrics (trec_eval -l)."""
AverageOver = Literal["with-relevant", "all-judged"]
AVERAGE_OVER: tuple[AverageOver, ...] = ("with-relevant", "all-judged")
"""Which questions a metric's mean is taken over:

* ``with-relevant`` (the default): the questions with an expected document;
* ``all-judged`` (trec_eval's rule): every query of the qrels, so a query judged only with
  grade 0 (a BEIR query the set lists as ``unjudged``, a no-answer question with judged
  negatives) is in the mean, scoring 0 on every metric, as trec_eval scores it."""
DEFAULT_AVERAGE_OVER: AverageOver = "with-relevant"


@dataclass(frozen=True)
class MetricKind:
    """One family of rank metrics: what the registry knows about it."""

    key: str
    """The name used on the command line and in stored results (``ndcg`` in ``ndcg@10``)."""
    label: str
    graded: bool
    """True when it uses the grades; False when it counts relevant documents (level-based)."""
    takes_cutoff: bool
    definition: str
    """One line: what the value means for one question."""
    trec_eval: str
    """The trec_eval measure it equals (``{k}`` stands for the cutoff)."""
    citation: str


METRIC_KINDS: dict[str, MetricKind] = {
    kind.key: kind
    for kind in (
        MetricKind(
            "hit",
            "Hit",
            False,
            True,
            "1 when a relevant document is among the first k distinct documents, else 0",
            "success_{k}",
            "trec_eval `success` (Buckley & Voorhees, TREC)",
        ),
        MetricKind(
            "mrr",
            "MRR",
            False,
            True,
            "1 / rank of the first relevant document within the first k, 0 if there is none",
            "recip_rank (on the first k documents)",
            "Voorhees, The TREC-8 Question Answering Track Report, 1999",
        ),
        MetricKind(
            "recall",
            "Recall",
            False,
            True,
            "relevant documents among the first k / all relevant documents of the question",
            "recall_{k}",
            "trec_eval `recall` (Manning, Raghavan & Schütze, IIR §8.3)",
        ),
        MetricKind(
            "precision",
            "Precision",
            False,
            True,
            "relevant documents among the first k / k (a shorter ranking still divides by k)",
            "P_{k}",
            "trec_eval `P` (Manning, Raghavan & Schütze, IIR §8.3)",
        ),
        MetricKind(
            "ndcg",
            "nDCG",
            True,
            True,
            "sum of grade / log2(rank + 1) over the first k, divided by the same sum for the ideal ordering",
            "ndcg_cut_{k}",
            "Järvelin & Kekäläinen, Cumulated gain-based evaluation of IR techniques, TOIS 2002",
        ),
        MetricKind(
            "map",
            "MAP",
            False,
            True,
            "sum of precision at the rank of each relevant document within the first k / all relevant documents",
            "map_cut_{k}",
            "trec_eval `map_cut` (Buckley & Voorhees, Retrieval system evaluation, TREC 2005)",
        ),
        MetricKind(
            "rprec",
            "R-precision",
            False,
            False,
            "relevant documents among the first R / R, where R is the number of relevant documents",
            "Rprec",
            "trec_eval `Rprec` (Buckley & Voorhees, TREC 2005)",
        ),
        MetricKind(
            "bpref",
            "bpref",
            False,
            False,
            "for each retrieved relevant document, 1 - (judged non-relevant documents above it, at most R) / "
            "min(R, judged non-relevant documents), summed and divided by R; unjudged documents are passed over",
            "bpref",
            "Buckley & Voorhees, Retrieval evaluation with incomplete information, SIGIR 2004",
        ),
        MetricKind(
            "infap",
            "infAP",
            False,
            False,
            "average precision estimated from the judged documents: at each retrieved relevant document, "
            "the precision above it inferred from the judged share, summed and divided by R",
            "infAP",
            "Yilmaz & Aslam, Estimating average precision with incomplete and imperfect judgments, CIKM 2006",
        ),
    )
}
"""Every metric family goldeneval computes, in the order reports list them."""

_ALIASES = {"p": "precision", "r-precision": "rprec", "r_precision": "rprec", "success": "hit", "inf_ap": "infap"}


@dataclass(frozen=True)
class Metric:
    """One metric at one cutoff, such as ``ndcg@10``."""

    kind: MetricKind
    k: int | None = None

    @property
    def name(self) -> str:
        return self.kind.key if self.k is None else f"{self.kind.key}@{self.k}"

    @property
    def trec_eval(self) -> str:
        return self.kind.trec_eval.format(k=self.k)


def parse_metric(text: str) -> Metric:
    """``ndcg@10``, ``recall@100``, ``p@5``, ``rprec``: a metric of the registry, or ValueError."""
    key, at, cutoff = text.strip().lower().partition("@")
    key = _ALIASES.get(key, key)
    kind = METRIC_KINDS.get(key)
    if kind is None:
        known = ", ".join(f"{k.key}@k" if k.takes_cutoff else k.key for k in METRIC_KINDS.values())
        raise ValueError(f"unknown metric {text.strip()!r}; known: {known}")
    if not kind.takes_cutoff:
        if at:
            raise ValueError(f"metric {kind.key!r} takes no cutoff (got {text.strip()!r})")
        return Metric(kind)
    if not at:
        raise ValueError(f"metric {kind.key!r} needs a cutoff, such as {kind.key}@10")
    if not cutoff.isdigit() or not 1 <= int(cutoff) <= MAX_CUTOFF:
        raise ValueError(f"cutoff of {text.strip()!r} must be a whole number from 1 to {MAX_CUTOFF}")
    return Metric(kind, int(cutoff))


def parse_metrics(value: str | Iterable[str]) -> tuple[Metric, ...]:
    """A comma-separated list (or a list) of metric names; duplicates kept once, in order."""
    items = value.split(",") if isinstance(value, str) else list(value)
    metrics: dict[str, Metric] = {}
    for item in items:
        if not str(item).strip():
            continue
        metric = parse_metric(str(item))
        metrics.setdefault(metric.name, metric)
    if not metrics:
        raise ValueError("name at least one metric")
    return tuple(metrics.values())


DEFAULT_METRICS: tuple[Metric, ...] = parse_metrics("mrr@10,recall@10,ndcg@10,recall@100")
"""Reported beside the hit cutoffs unless ``--metrics`` says otherwise."""


WHOLE_RANKING_KINDS = frozenset({"bpref", "infap"})
"""Metrics trec_eval takes over the whole run (to its default depth, :data:`MAX_CUTOFF`): a run
that reports one is measured that deep, as is a run on condensed lists (``-J``), where a
judged document far down the ranking moves up."""


def measurement_depth(metrics: Iterable[Metric], floor: int = 1, *, judged_only: bool = False) -> int:
    """How many distinct documents the deepest metric looks at: its cutoff, or trec_eval's
    whole run (:data:`MAX_CUTOFF`) for bpref, infAP and condensed lists (R-precision looks as
    deep as the ranking goes, so it does not raise the depth by itself)."""
    metrics = list(metrics)
    if judged_only or any(m.kind.key in WHOLE_RANKING_KINDS for m in metrics):
        return MAX_CUTOFF
    return max([floor, *(m.k for m in metrics if m.k is not None)])
