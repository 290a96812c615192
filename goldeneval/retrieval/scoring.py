"""Scoring protocol v1 (ADR-072, decision 3): distinct-document top-1/top-3 hits.

The protocol, exactly:

1. ask the retriever for ``TOP_K * OVERFETCH_MULTIPLIER`` raw ids, so that a chunk-grained
   ranking does not collapse to fewer than ``TOP_K`` documents;
2. map each id to its document id and collapse duplicates to their first occurrence;
3. top-1 hit: the first distinct document is expected; top-3 hit: any of the first three is;
4. a question with an empty expected set is a hit (both) only when nothing is returned;
5. a retriever error or timeout is an ``error``, never a miss: it is left out of every rate
   and makes the run ``incomplete``.

Rates are aggregated overall, by form and by hard class, each with its question count.

Separately from the protocol, the reported rank metrics (:mod:`goldeneval.retrieval.metrics`) look at
the question's distinct documents to the run's *measurement depth*: the evaluator asks for
``max(TOP_K * OVERFETCH_MULTIPLIER, depth)`` raw ids and over-fetches again while fewer
distinct documents than the depth come back and the retriever has more.  The protocol's
hits are still taken from the first ``TOP_K * OVERFETCH_MULTIPLIER`` raw ids of that
ranking (a ranking must not change its head when asked for more, as any top-k ranking does).

Both the protocol and the metrics are computed for a whole run at once by the columnar core
(:mod:`goldeneval.retrieval.columnar`): :func:`score_answers` codes the run's ids into arrays, scores
them in one pass and hands back the per-question results the store, the report and the
Dagster tables read.  :func:`score_question` is the same computation for one question.
"""

from __future__ import annotations

import array
import dataclasses
import itertools
import json
import math
import operator
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import overload

import numpy as np

from goldeneval.core.forms import NO_HARD_CLASS
from goldeneval.core.records import RETRIEVAL_GRADER
from goldeneval.retrieval import columnar
from goldeneval.retrieval.defaults import DEFAULT_CHUNK_SEPARATOR, DEFAULT_HIT_CUTOFFS
from goldeneval.retrieval.details import DocumentColumns
from goldeneval.retrieval.golden import GoldenQuestion, QuestionForm
from goldeneval.retrieval.incomplete import INCOMPLETE_KINDS, condensed, if_unjudged_relevant, judgment_metrics
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
    "Aggregates",
    "CodedRun",
    "ExpectedDocuments",
    "JudgedSummary",
    "KeptDocuments",
    "QuestionResult",
    "QuestionStatus",
    "RateSummary",
    "RawRankings",
    "RunCoder",
    "ScoredAnswers",
    "aggregate",
    "aggregate_columns",
    "code_run",
    "compact_strings",
    "error_result",
    "first_raw_limit",
    "judged_cutoffs",
    "judged_name",
    "next_raw_limit",
    "raw_ceiling",
    "run_metrics",
    "score_answers",
    "score_question",
    "scoring_protocol",
    "summarise_judged",
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
_FORM_VALUES = {form: form.value for form in QuestionForm}
"""Each form's value, looked up without the enum's descriptor (once per question)."""


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


class QuestionStatus(StrEnum):
    OK = "ok"
    ERROR = "error"


@dataclass(frozen=True)
class QuestionResult:
    """What the evaluator measured for one question."""

    question_id: str
    form: str
    hard_class: str | None
    expected: frozenset[str]
    returned_ids: tuple[str, ...]
    """The raw overfetched ranking, as the retriever returned it."""
    documents: tuple[str, ...]
    """Distinct document ids in rank order (first occurrences), to the measurement depth."""
    top1_hit: bool
    top3_hit: bool
    latency_ms: float
    status: QuestionStatus = QuestionStatus.OK
    error: str | None = None
    metrics: Mapping[str, float] = field(default_factory=dict)
    judged: bool = True
    """Whether it has rank metrics: a question without expected documents has none."""
    reached: int | None = None
    """Distinct documents reached, when the documents themselves are withheld (tables
    written in ``metadata_only``); otherwise :attr:`depth` counts :attr:`documents`."""
    judged_at: Mapping[str, float] = field(default_factory=dict)
    """``judged@k`` -> the share of the first k distinct documents that carry a judgment,
    where the set records judged negatives and the share is defined (:func:`judged_cutoffs`)."""
    unjudged_ranks: tuple[int, ...] = ()
    """Ranks among the ``TOP_K`` best distinct documents that carry no judgment (the same runs)."""
    unjudged_relevant: Mapping[str, float] = field(default_factory=dict)
    """Each rank metric as it would be with every unjudged document of its top k judged
    relevant (:func:`goldeneval.retrieval.incomplete.if_unjudged_relevant`; the same runs)."""

    @property
    def top_documents(self) -> tuple[str, ...]:
        """The ``TOP_K`` best distinct documents: what the top-3 verdict looked at."""
        return self.documents[:TOP_K]

    @property
    def scored(self) -> bool:
        return self.status is QuestionStatus.OK

    @property
    def depth(self) -> int:
        """How many distinct documents the ranking reached (the rank metrics saw these)."""
        return self.reached if self.reached is not None else len(self.documents)


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


@dataclass(frozen=True)
class JudgedSummary:
    """judged@k of a run: the mean share of each cutoff overall and by form, over the scored
    questions where it is defined (a judgment and a non-empty ranking)."""

    cutoffs: tuple[int, ...]
    measured: int
    """Questions the overall means are taken over."""
    overall: Mapping[str, float | None]
    by_form: Mapping[str, Mapping[str, float | None]]
    bounds: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)
    """Each rank metric's mean with every unjudged document of its top k not relevant (the
    metric as reported) and with every one relevant, over the questions the metric's mean is
    over; empty on condensed lists."""

    def to_dict(self) -> dict[str, object]:
        return {
            "cutoffs": list(self.cutoffs),
            "measured": self.measured,
            "overall": dict(self.overall),
            "by_form": {form: dict(values) for form, values in self.by_form.items()},
            **({"bounds": {name: list(ends) for name, ends in self.bounds.items()}} if self.bounds else {}),
        }


def _mean(values: np.ndarray) -> float | None:
    defined = values[~np.isnan(values)]
    # fsum, as the metrics' means: independent of the order of the questions
    return math.fsum(defined.tolist()) / defined.size if defined.size else None


def _mean_with(values: np.ndarray, extra_zeros: int) -> float | None:
    defined = values[~np.isnan(values)]
    count = defined.size + extra_zeros
    return math.fsum(defined.tolist()) / count if count else None


def summarise_judged(
    cutoffs: Sequence[int],
    values: Mapping[str, np.ndarray],
    forms: Sequence[str],
    *,
    metrics: Mapping[str, np.ndarray] | None = None,
    ends: Mapping[str, np.ndarray] | None = None,
    extra_zeros: int = 0,
) -> JudgedSummary:
    """The :class:`JudgedSummary` of per-question shares (NaN: undefined or errored), with
    each metric's bounds from its per-question ``metrics`` and ``ends`` (the values with the
    unjudged documents relevant), averaged as the metric is (``extra_zeros``: the queries
    ``all-judged`` counts 0 without a row)."""
    bounds = {
        name: (_mean_with(metrics[name], extra_zeros), _mean_with(column, extra_zeros))
        for name, column in (ends or {}).items()
        if metrics is not None and name in metrics
    }
    cutoffs = tuple(cutoffs)
    first = values[judged_name(cutoffs[0])] if cutoffs else np.empty(0)
    form_array = np.asarray(forms, dtype=object)
    return JudgedSummary(
        cutoffs=cutoffs,
        measured=int((~np.isnan(first)).sum()),
        overall={name: _mean(column) for name, column in values.items()},
        by_form={
            form: {name: _mean(column[form_array == form]) for name, column in values.items()}
            for form in sorted(set(forms))
        },
        bounds=bounds,
    )


def score_question(
    question: GoldenQuestion,
    returned_ids: Sequence[str],
    latency_ms: float,
    to_document: Callable[[str], str],
    metrics: Sequence[Metric] | None = None,
    *,
    depth: int | None = None,
    relevance_level: int = DEFAULT_RELEVANCE_LEVEL,
) -> QuestionResult:
    """Apply the protocol to the head of one question's raw ranking, and the rank
    ``metrics`` (default: :func:`run_metrics`) to its distinct documents, kept to ``depth``
    (default: all of them): :func:`score_answers` for a run of one."""
    (result,) = score_answers(
        [question],
        [returned_ids],
        [None],
        [latency_ms],
        to_document,
        metrics,
        depth=depth,
        relevance_level=relevance_level,
    ).results
    return result


@dataclass(frozen=True, eq=False)
class KeptDocuments:
    """Each question's distinct documents to the measurement depth (none for an error): the
    run's document codes in CSR form, held either as an array or packed as the store keeps
    them (:class:`~goldeneval.retrieval.details.DocumentColumns`: the codes of the documents
    kept, in as few bytes as their number needs, zstd-compressed), which a run of 100
    documents a question keeps in a fraction of the 400 bytes an array takes, and decodes
    only while it reads them.  The details of a packed run take the packed documents as
    they are: nothing is encoded twice."""

    offsets: np.ndarray
    codes: np.ndarray | None = None
    """The run's document codes, when held as an array."""
    packed: DocumentColumns | None = None
    """When packed: the documents kept, coded over a vocabulary of their own."""
    vocabulary: np.ndarray | None = None
    """When packed: the run's code of each entry of the packed vocabulary (None: entry i is
    code i, the coder numbering returned documents first)."""

    @classmethod
    def of(cls, rankings: columnar.Rankings) -> KeptDocuments:
        return cls(rankings.offsets, rankings.codes)

    @property
    def rankings(self) -> columnar.Rankings:
        """The documents as :class:`~goldeneval.retrieval.columnar.Rankings` of the run's codes
        (decoded afresh each time when packed: read it once where it is read)."""
        if self.codes is not None:
            return columnar.Rankings(self.offsets, self.codes)
        assert self.packed is not None
        decoded = self.packed.decoded_afresh().view(np.int32)  # codes < 2**31: the coder's own dtype
        return columnar.Rankings(self.offsets, decoded if self.vocabulary is None else self.vocabulary[decoded])

    @property
    def reached(self) -> np.ndarray:
        """Distinct documents each question reached (0 for an error)."""
        return np.diff(self.offsets)

    def columns(self, documents: np.ndarray) -> DocumentColumns:
        """The details' documents: the packed ones as they are, else the codes re-coded into a
        vocabulary of the documents kept (the run's codes also cover expected documents that
        were never returned) and encoded.  Where the documents kept are codes ``0 .. m - 1``
        (the coder numbers returned documents first: every run whose returned documents are
        all kept) the codes are stored as they are, viewed as unsigned and not copied."""
        if self.packed is not None:
            return self.packed
        assert self.codes is not None
        vocabulary, codes = _own_vocabulary(self.codes, len(documents))
        return DocumentColumns.encode(documents[vocabulary].tolist(), codes)

    def packed_in_place(self, documents: np.ndarray) -> KeptDocuments:
        """These documents packed (:meth:`columns`' encoding), the codes array handed over:
        it is overwritten with the packed bytes (:meth:`DocumentColumns.encode_in_place`), so
        whoever else holds it must not read it again.  For the evaluator, which owns its run."""
        if self.codes is None:
            return self
        vocabulary, codes = _own_vocabulary(self.codes, len(documents))
        if not codes.flags.writeable or not codes.flags.c_contiguous:
            codes = np.array(codes, dtype="<u4")
        packed = DocumentColumns.encode_in_place(documents[vocabulary].tolist(), codes)
        identity = isinstance(vocabulary, slice)
        return KeptDocuments(
            self.offsets, packed=packed, vocabulary=None if identity else np.asarray(vocabulary, dtype=np.int32)
        )


_COMPARED_AT_ONCE = 1 << 20
"""Elements :func:`_same_numbers` compares at a time (a 1 MB temporary, not one as large as the run)."""


def _same_numbers(a: np.ndarray, b: np.ndarray) -> bool:
    """``np.array_equal(a, b)`` without its temporary as large as the arrays (100 MB for a run of
    1,000,000 x 100): the same memory read alike is equal at once, else the arrays are compared
    :data:`_COMPARED_AT_ONCE` elements at a time."""
    if a.shape != b.shape:
        return False
    if (
        a.dtype == b.dtype
        and a.strides == b.strides
        and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    ):
        return True
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    return all(
        np.array_equal(flat_a[i : i + _COMPARED_AT_ONCE], flat_b[i : i + _COMPARED_AT_ONCE])
        for i in range(0, flat_a.size, _COMPARED_AT_ONCE)
    )


def _own_vocabulary(codes: np.ndarray, size: int) -> tuple[slice | np.ndarray, np.ndarray]:
    """The run's codes of the documents in ``codes`` (a slice ``:m`` where they are ``0 .. m - 1``)
    and ``codes`` re-coded into them, as little-endian uint32."""
    used = np.zeros(size, dtype=np.bool_)
    used[codes] = True
    count = int(np.count_nonzero(used))
    if bool(used[:count].all()):  # the documents kept are the first m codes: no re-coding
        same = codes.view("<u4") if codes.dtype == np.dtype("<i4") else codes.astype("<u4")
        return slice(0, count), same
    recode = (np.cumsum(used) - 1).astype(np.uint32)  # the stored codes' own type: no conversion after
    return np.flatnonzero(used), recode[codes]


def compact_strings(values: Sequence[str]) -> np.ndarray:
    """``values`` as one array of variable-width UTF-8 strings (numpy's ``StringDType``): no
    Python object per string, so a run holds no string born with its golden set (each would
    keep a block of the set's freed memory from the system) and reads them back as ``str``.
    A value UTF-8 cannot hold (a lone surrogate, from a caller of this API: the asking makes
    such an id its question's error, and set files refuse them) keeps an object array."""
    try:
        return np.array(values, dtype=np.dtypes.StringDType())
    except UnicodeEncodeError:
        held = np.empty(len(values), dtype=object)
        held[:] = values
        return held


@dataclass(frozen=True, eq=False)
class ExpectedDocuments(Sequence[frozenset[str]]):
    """Each question's expected documents, read from the run's judgements (CSR codes into
    ``documents``: exactly the expected ones, sorted), a ``frozenset`` made when one is read."""

    offsets: np.ndarray
    codes: np.ndarray
    documents: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @overload
    def __getitem__(self, index: int) -> frozenset[str]: ...

    @overload
    def __getitem__(self, index: slice) -> list[frozenset[str]]: ...

    def __getitem__(self, index: int | slice) -> frozenset[str] | list[frozenset[str]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        index = operator.index(index)  # a float is a TypeError, as for a list
        count = len(self)
        if not -count <= index < count:
            raise IndexError(f"question {index} of {count}")
        index %= count
        start, end = self.offsets[index], self.offsets[index + 1]
        return frozenset(self.documents[self.codes[start:end]].tolist())

    def __iter__(self) -> Iterator[frozenset[str]]:
        ids = self.documents[self.codes].tolist()
        bounds = self.offsets.tolist()
        return (frozenset(ids[bounds[i] : bounds[i + 1]]) for i in range(len(bounds) - 1))

    @property
    def judged(self) -> np.ndarray:
        """Whether each question has an expected document (a rank metric is defined for it)."""
        return np.diff(self.offsets) > 0


@dataclass(frozen=True, eq=False)
class ScoredAnswers(Sequence[QuestionResult]):
    """A scored run as the arrays it was scored from: the verdicts, the metrics and the
    distinct documents kept, and the aggregates taken from the same arrays.

    It is also the sequence of its :attr:`results`, one :class:`QuestionResult` per
    question, built on first use only: the store and the report read the arrays
    (:mod:`goldeneval.retrieval.details`), so a large run never holds a Python object per question
    unless a caller asks for one.
    """

    question_ids: np.ndarray
    """Each question's id, in set order (:func:`compact_strings`)."""
    expected: ExpectedDocuments
    """Each question's expected documents.  Ids and expected documents are all the results,
    the store and the tables read of the questions, and the answers hold them in arrays, not
    as the set's own strings and sets: once its door lets go of the set, all of the set's
    memory is free (1,000,000 questions: about 800 MiB), not a few bytes in every block of it."""
    returned: Sequence[Sequence[str]]
    errors: Sequence[str | None]
    latency_ms: Sequence[float]
    ok: np.ndarray
    top1: np.ndarray
    """Top-1 verdicts (meaningful where :attr:`ok`)."""
    top3: np.ndarray
    metrics: Mapping[str, np.ndarray]
    """Each rank metric per question; NaN where undefined (an error, no expected document)."""
    kept_documents: KeptDocuments
    """Each question's distinct documents to the measurement depth (none for an error)."""
    documents: np.ndarray
    """The document id of each code (:func:`compact_strings`)."""
    forms: list[str]
    hard_classes: list[str | None]
    aggregates: Aggregates
    judged_at: Mapping[str, np.ndarray] = field(default_factory=dict)
    """``judged@k`` per question (NaN where undefined); empty unless the set records judged
    negatives."""
    unjudged: columnar.Rankings | None = None
    """Per question, the ranks among the ``TOP_K`` best documents that carry no judgment
    (where :attr:`judged_at` is reported)."""
    unjudged_relevant: Mapping[str, np.ndarray] = field(default_factory=dict)
    """Each rank metric per question with every unjudged document of its top k judged
    relevant: the other end of its bounds (where :attr:`judged_at` is reported, not on
    condensed lists, which hold no unjudged document)."""

    def __len__(self) -> int:
        return len(self.question_ids)

    def __iter__(self) -> Iterator[QuestionResult]:
        return iter(self.results)

    @overload
    def __getitem__(self, index: int) -> QuestionResult: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[QuestionResult, ...]: ...

    def __getitem__(self, index: int | slice) -> QuestionResult | tuple[QuestionResult, ...]:
        return self.results[index]

    def __eq__(self, other: object) -> bool:
        """As the tuple of its results (the arrays behind them are how, not what)."""
        if isinstance(other, ScoredAnswers):
            other = other.results
        if not isinstance(other, tuple):
            return NotImplemented
        return self.results == other

    __hash__ = None  # type: ignore[assignment]  # its results hold dicts: not hashable

    @property
    def kept(self) -> columnar.Rankings:
        """Each question's distinct documents to the measurement depth, as the run's codes
        (decoded afresh each time where they are held packed)."""
        return self.kept_documents.rankings

    @property
    def reached(self) -> np.ndarray:
        """Distinct documents each question reached (0 for an error)."""
        return self.kept_documents.reached

    def with_packed_documents(self) -> ScoredAnswers:
        """These answers holding their kept documents packed (:class:`KeptDocuments`), the
        raw rankings decoded from the same bytes where they are the same numbers.  The codes
        array is packed in place: for the evaluator, which made the run and hands it over (no
        one else may read the run's arrays afterwards)."""
        kept = self.kept_documents
        if kept.codes is None:
            return self
        returned = self.returned
        shares_numbers = (
            isinstance(returned, RawRankings)
            and returned.held is not None
            and _same_numbers(returned.offsets, kept.offsets)
            and _same_numbers(returned.held, kept.codes)
        )
        packed = kept.packed_in_place(self.documents)
        if shares_numbers:
            assert isinstance(returned, RawRankings)
            returned = RawRankings.decoded_from(returned.offsets, returned.ids, lambda: packed.rankings.codes)
        return dataclasses.replace(self, kept_documents=packed, returned=returned)

    @cached_property
    def results(self) -> tuple[QuestionResult, ...]:
        kept = self.kept
        kept_ids = self.documents[kept.codes].tolist()
        bounds = kept.offsets.tolist()
        del kept
        top1, top3 = self.top1.tolist(), self.top3.tolist()
        columns = [(name, values.tolist()) for name, values in self.metrics.items()]
        shares = [(name, values.tolist()) for name, values in self.judged_at.items()]
        unjudged = None if self.unjudged is None else self.unjudged.codes.tolist()
        unjudged_bounds = None if self.unjudged is None else self.unjudged.offsets.tolist()
        ends = [(name, values.tolist()) for name, values in self.unjudged_relevant.items()]
        results: list[QuestionResult] = []
        for i, (question_id, expected) in enumerate(zip(self.question_ids.tolist(), self.expected, strict=True)):
            form, hard_class = self.forms[i], self.hard_classes[i]
            error = self.errors[i]
            if error is not None:
                results.append(_error_result(question_id, form, hard_class, expected, error, self.latency_ms[i]))
                continue
            results.append(
                QuestionResult(
                    question_id=question_id,
                    form=form,
                    hard_class=hard_class,
                    expected=expected,
                    returned_ids=tuple(self.returned[i]),
                    documents=tuple(kept_ids[bounds[i] : bounds[i + 1]]),
                    top1_hit=top1[i],
                    top3_hit=top3[i],
                    latency_ms=self.latency_ms[i],
                    # NaN marks an undefined metric (no judgements): such a question has none.
                    metrics={name: values[i] for name, values in columns if values[i] == values[i]},
                    judged=bool(expected),
                    judged_at={name: values[i] for name, values in shares if values[i] == values[i]},
                    unjudged_ranks=()
                    if unjudged is None or unjudged_bounds is None
                    else tuple(unjudged[unjudged_bounds[i] : unjudged_bounds[i + 1]]),
                    unjudged_relevant={name: values[i] for name, values in ends if values[i] == values[i]},
                )
            )
        return tuple(results)

    @property
    def judged_cutoffs(self) -> tuple[int, ...]:
        return tuple(int(name.removeprefix(JUDGED_PREFIX)) for name in self.judged_at)


def score_answers(
    questions: Sequence[GoldenQuestion],
    returned: Sequence[Sequence[str]],
    errors: Sequence[str | None],
    latency_ms: Sequence[float],
    to_document: Callable[[str], str],
    metrics: Sequence[Metric] | None = None,
    *,
    depth: int | None = None,
    relevance_level: int = DEFAULT_RELEVANCE_LEVEL,
    coded: CodedRun | None = None,
    average_over: AverageOver = DEFAULT_AVERAGE_OVER,
    left_out: int = 0,
    judged_only: bool = False,
) -> ScoredAnswers:
    """Score a whole run: question ``i`` returned the raw ranking ``returned[i]`` in
    ``latency_ms[i]``, or failed with ``errors[i]`` (an error, never a miss).

    Raw ids are dictionary-coded once and each distinct raw id is mapped to its document once,
    so ``to_document`` runs per distinct id, not per returned id; everything after that is
    :func:`goldeneval.retrieval.columnar.score` over the whole run.  ``coded``: the run already coded
    by :func:`code_run` (the evaluator codes it to decide its over-fetch).
    ``average_over="all-judged"`` takes each metric's mean as trec_eval does, over every query
    of the qrels: a scored question judged only with grade 0 (no expected document, judged
    negatives) scores 0 on every metric, and ``left_out`` more queries (the set's source
    judged them only with grade 0, so the set left them out) add a 0 each.
    bpref and infAP read the judged negatives (:mod:`goldeneval.retrieval.incomplete`);
    ``judged_only`` computes every rank metric on the condensed lists (trec_eval ``-J``),
    never the hits.
    """
    metrics = run_metrics() if metrics is None else metrics
    n = len(questions)
    if not len(returned) == len(errors) == len(latency_ms) == n:
        raise ValueError("questions, returned, errors and latency_ms must have one entry per question")
    coded = coded or code_run(questions, returned, to_document)
    ok = np.fromiter((error is None for error in errors), dtype=np.bool_, count=n)
    ranked = [metric for metric in metrics if metric.kind.key not in INCOMPLETE_KINDS]
    scores = columnar.score(
        coded.rankings,
        coded.judgements,
        ranked,
        rel_level=relevance_level,
        ok=ok,
        depth_limit=depth,
        protocol_head=raw_limit(),
        defined="judged",
    )
    values: Mapping[str, np.ndarray] = _judgment_measures(
        coded, metrics, ranked, scores.metrics, relevance_level, ok, depth, judged_only
    )
    kept = coded.kept(depth)
    if not ok.all():  # an error keeps no documents, whatever it returned before failing
        kept = _without(kept, ~ok)
    forms = [_FORM_VALUES[form] for form in map(operator.attrgetter("form"), questions)]
    hard_classes = list(map(operator.attrgetter("hard_class"), questions))
    extra_zeros = 0
    if average_over == "all-judged":
        values = _judged_only_negatives_zero(values, questions, ok)
        extra_zeros = left_out
    aggregates = aggregate_columns(scores.ok, scores.top1, scores.top3, forms, hard_classes, values, extra_zeros)
    shares: dict[str, np.ndarray] = {}
    unjudged = None
    ends: Mapping[str, np.ndarray] = {}
    if coded.judged is not None:
        cutoffs = judged_cutoffs(metrics)
        seen = kept if depth is not None and depth >= cutoffs[-1] else coded.kept(None)
        if seen is not kept and not ok.all():
            seen = _without(seen, ~ok)
        mask = columnar.judged_mask(seen, coded.judged)
        shares = {judged_name(k): columnar.judged_at(seen, coded.judged, mask, k, ok) for k in cutoffs}
        unjudged = columnar.unjudged_ranks(seen, mask, TOP_K)
        if not judged_only:  # condensed lists hold no unjudged document: nothing to bound
            whole = coded.kept(depth)
            ends = if_unjudged_relevant(
                whole, coded.judgements, coded.judged, metrics, rel_level=relevance_level, ok=ok, depth=depth
            )
            if average_over == "all-judged":
                ends = _judged_only_negatives_zero(ends, questions, ok)
    return ScoredAnswers(
        question_ids=compact_strings([question.id for question in questions]),
        expected=ExpectedDocuments(coded.judgements.offsets, coded.judgements.codes, coded.documents),
        returned=returned,
        errors=errors,
        latency_ms=latency_ms,
        ok=scores.ok,
        top1=scores.top1,
        top3=scores.top3,
        metrics=values,
        kept_documents=KeptDocuments.of(kept),
        documents=coded.documents,
        forms=forms,
        hard_classes=hard_classes,
        aggregates=aggregates,
        judged_at=shares,
        unjudged=unjudged,
        unjudged_relevant=ends,
    )


def _judgment_measures(
    coded: CodedRun,
    metrics: Sequence[Metric],
    ranked: Sequence[Metric],
    values: Mapping[str, np.ndarray],
    relevance_level: int,
    ok: np.ndarray,
    depth: int | None,
    judged_only: bool,
) -> dict[str, np.ndarray]:
    """Every metric's values, in the order asked: the rank metrics as :func:`columnar.score`
    gave them, bpref and infAP from the judged documents of every distinct document kept; with
    ``judged_only``, all of them on the condensed lists (as trec_eval -J reads every measure)."""
    incomplete = {metric.name: metric.kind.key for metric in metrics if metric.kind.key in INCOMPLETE_KINDS}
    if not incomplete and not judged_only:
        return dict(values)
    lists = coded.kept(depth)  # the ranking the run stores and exports: a replay reads the same
    if judged_only:
        lists = condensed(lists, coded.judgements, coded.judged)
        if ranked:
            values = columnar.score(
                lists, coded.judgements, ranked, rel_level=relevance_level, ok=ok, depth_limit=depth, defined="judged"
            ).metrics
    extra = judgment_metrics(lists, coded.judgements, coded.judged, incomplete, rel_level=relevance_level, ok=ok)
    return {metric.name: values[metric.name] if metric.name in values else extra[metric.name] for metric in metrics}


def _judged_only_negatives_zero(
    metrics: Mapping[str, np.ndarray], questions: Sequence[GoldenQuestion], ok: np.ndarray
) -> Mapping[str, np.ndarray]:
    """trec_eval's scores of a query judged only with grade 0: 0 on every metric (its
    relevant documents number 0).  Such a question (no expected document, judged negatives)
    is undefined by default; under ``all-judged`` its metrics are 0 where it was scored."""
    only_negative = np.fromiter(
        (not q.expected and bool(q.not_relevant) for q in questions), dtype=np.bool_, count=len(questions)
    )
    zero = only_negative & ok
    if not zero.any():
        return metrics
    return {name: np.where(zero, 0.0, values) for name, values in metrics.items()}


def _without(rankings: columnar.Rankings, dropped: np.ndarray) -> columnar.Rankings:
    """``rankings`` with the rankings where ``dropped`` emptied."""
    lengths = np.where(dropped, 0, np.diff(rankings.offsets))
    keep = np.repeat(~dropped, np.diff(rankings.offsets))
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return columnar.Rankings(offsets, rankings.codes[keep])


class RawRankings(Sequence[tuple[str, ...]]):
    """What each question returned, in rank order, held as the arrays :func:`code_run` numbered
    it to: question ``i`` returned ``ids[n]`` for each ``n`` of ``numbers[offsets[i]:offsets[i + 1]]``.

    The sequence of those rankings, each a tuple built when asked: a run keeps 4 bytes a
    returned id (and each distinct id once) instead of a tuple of 100 pointers a question,
    so the run's raw ids stop costing 856 bytes a question once they are coded.  Where the
    numbers are the very codes of the documents the run keeps, the evaluator holds them
    packed once, for both (:meth:`ScoredAnswers.with_packed_documents`): they are then
    decoded when first read (:func:`decoded_from`), and kept from then on."""

    __slots__ = ("_decode", "_numbers", "ids", "offsets")

    def __init__(self, offsets: np.ndarray, numbers: np.ndarray, ids: np.ndarray) -> None:
        """``ids``: the distinct ids, as :func:`compact_strings` holds them (not the retriever's
        own strings, which would each keep a block of the asking's freed memory)."""
        self.offsets = offsets
        self._numbers: np.ndarray | None = numbers
        self._decode: Callable[[], np.ndarray] | None = None
        self.ids = ids

    @classmethod
    def decoded_from(cls, offsets: np.ndarray, ids: np.ndarray, decode: Callable[[], np.ndarray]) -> RawRankings:
        """Rankings whose numbers ``decode()`` gives, when they are first read."""
        made = cls(offsets, np.empty(0, dtype=np.int32), ids)
        made._numbers, made._decode = None, decode
        return made

    @property
    def numbers(self) -> np.ndarray:
        if self._numbers is None:
            assert self._decode is not None
            self._numbers, self._decode = self._decode(), None
        return self._numbers

    @property
    def held(self) -> np.ndarray | None:
        """The numbers where they are held as an array already (None: not decoded yet)."""
        return self._numbers

    def __len__(self) -> int:
        return int(self.offsets.size) - 1

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence of the same rankings (the list of tuples it stands for)."""
        if not isinstance(other, Sequence) or isinstance(other, str) or len(other) != len(self):
            return False
        return all(mine == tuple(theirs) for mine, theirs in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable like them

    @overload
    def __getitem__(self, index: int) -> tuple[str, ...]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[str, ...]]: ...

    def __getitem__(self, index: int | slice) -> tuple[str, ...] | list[tuple[str, ...]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = range(len(self))[index]  # IndexError past either end, as a tuple's
        return tuple(self.ids[self.numbers[self.offsets[i] : self.offsets[i + 1]]].tolist())


@dataclass(frozen=True)
class CodedRun:
    """A run as columnar arrays (:func:`code_run`)."""

    rankings: columnar.Rankings
    """Raw rankings, each raw id replaced by the code of its document."""
    judgements: columnar.Judgements
    documents: np.ndarray
    """The document id of each code (:func:`compact_strings`)."""
    raw: RawRankings = field(compare=False, repr=False)
    """The raw rankings themselves, as numbers into their distinct ids (what was returned)."""
    judged: columnar.Judgements | None = None
    """Every judged document of each question, relevant or judged not relevant (grade 0):
    what judged@k counts; None when the set records no judged negatives."""

    collapsed: dict[int | None, columnar.Rankings] = field(default_factory=dict, compare=False, repr=False)
    """:meth:`kept` by depth, computed once (the evaluator's over-fetch and its scoring both read it)."""

    def kept(self, depth: int | None) -> columnar.Rankings:
        """Each ranking's distinct documents, at most ``depth`` of them."""
        if depth not in self.collapsed:
            self.collapsed[depth] = columnar.collapse(self.rankings, depth)
        return self.collapsed[depth]

    def distinct(self, depth: int) -> np.ndarray:
        """Distinct documents of each ranking, counted up to ``depth``."""
        return np.diff(self.kept(depth).offsets)


class RunCoder:
    """Codes a run's raw rankings as they come, a batch of questions after another, so that
    each batch of returned ids can be dropped once it is coded: a run of 1,000,000 questions
    never holds its rankings as tuples of strings (856 bytes a question of 100 ids), only the
    int32 numbers :class:`RawRankings` keeps.  :meth:`finish` gives exactly what
    :func:`code_run` gives for all the rankings at once: the numbering is by first occurrence
    in question order, whatever the batches.

    Each distinct raw id is numbered once (a ``defaultdict`` whose factory is a counter: one
    C-level dictionary probe per returned id) and mapped to its document once, when first
    seen.  Where no two distinct raw ids map to one document (a retriever that returns
    document ids, or one chunk per document), the raw numbers *are* the document codes, and
    the run keeps one array for both."""

    def __init__(self, questions: int, capacity: int, to_document: Callable[[str], str]) -> None:
        """``questions`` rankings of ``capacity`` raw ids at most in all (pages of the array never
        written are never resident)."""
        self._lengths = np.zeros(questions, dtype=np.int64)
        self._numbers = np.empty(capacity, dtype=np.int32)
        self._rows = 0
        self._filled = 0
        self._raw_number: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self._raw_doc = array.array("i")
        """The document code of each raw number."""
        self._code_of: dict[str, int] = {}
        self._to_document = to_document
        self._ids: np.ndarray | None = None
        """The distinct raw ids compacted (:meth:`_distinct_ids`), for as many as were numbered then."""

    def add(self, rankings: Sequence[Sequence[str]]) -> None:
        """Code the next questions' rankings, in question order."""
        count = len(rankings)
        lengths = np.fromiter(map(len, rankings), dtype=np.int64, count=count)
        total = int(lengths.sum())
        if self._rows + count > self._lengths.size or self._filled + total > self._numbers.size:
            raise ValueError("more rankings or raw ids than the coder was made for")
        self._lengths[self._rows : self._rows + count] = lengths
        before = len(self._raw_number)
        self._numbers[self._filled : self._filled + total] = np.fromiter(
            map(self._raw_number.__getitem__, itertools.chain.from_iterable(rankings)), dtype=np.int32, count=total
        )
        added = len(self._raw_number) - before
        if added:  # the ids first seen here are the last ones numbered: read from the end
            new = list(itertools.islice(reversed(self._raw_number), added))
            new.reverse()
            code_of, to_document = self._code_of, self._to_document
            self._raw_doc.extend(code_of.setdefault(to_document(raw_id), len(code_of)) for raw_id in new)
        self._rows += count
        self._filled += total

    def rankings(self) -> tuple[columnar.Rankings, RawRankings]:
        """The rankings added so far, as document codes and as raw numbers (the same array
        where each document was returned under one raw id only)."""
        rows = self._rows
        offsets = np.zeros(rows + 1, dtype=np.int64)
        np.cumsum(self._lengths[:rows], out=offsets[1:])
        numbers = self._numbers[: self._filled]
        ids = self._distinct_ids()
        if len(self._code_of) == len(ids):  # one raw id per document: raw number n is document code n
            codes = numbers
        else:
            codes = np.take(np.frombuffer(self._raw_doc, dtype=np.int32), numbers)
        return columnar.Rankings(offsets, codes), RawRankings(offsets, numbers, ids)

    def _distinct_ids(self) -> np.ndarray:
        """The distinct raw ids so far, in numbering order, compacted once for as many as there
        are (the evaluator reads :meth:`rankings` before :meth:`finish`, which reads them again)."""
        if self._ids is None or len(self._ids) != len(self._raw_number):
            self._ids = compact_strings(list(self._raw_number))
        return self._ids

    def finish(self, questions: Sequence[GoldenQuestion]) -> CodedRun:
        """The coded run of ``questions`` (each of their rankings added), with their judgements."""
        if self._rows != self._lengths.size or len(questions) != self._rows:
            raise ValueError(f"{self._rows} rankings coded for {len(questions)} questions")
        rankings, raw = self.rankings()
        code_of = self._code_of
        # Judgements: every expected document, sorted per question (trec_eval's qrels), grade 1
        # unless the question grades it; documents nobody returned are coded after the rest.
        # Sorted one question at a time: a list of every question's (8 MiB at 100,000) would be
        # made at the run's fullest, with the set and the coded rankings.
        expected = map(sorted, map(operator.attrgetter("expected"), questions))
        judged_offsets = np.zeros(len(questions) + 1, dtype=np.int64)
        np.cumsum(
            np.fromiter((len(question.expected) for question in questions), dtype=np.int64, count=len(questions)),
            out=judged_offsets[1:],
        )
        judged_codes = np.fromiter(
            (code_of.setdefault(doc_id, len(code_of)) for doc_id in itertools.chain.from_iterable(expected)),
            dtype=np.int64,
            count=int(judged_offsets[-1]),
        )
        grades = np.ones(judged_codes.size, dtype=np.int64)
        for i, question in enumerate(questions):
            if question.grades:
                start = int(judged_offsets[i])
                graded = sorted(question.expected)
                grades[start : start + len(graded)] = [question.grades.get(doc_id, 1) for doc_id in graded]
        judgements = columnar.Judgements(judged_offsets, judged_codes, grades)
        negatives = list(map(operator.attrgetter("not_relevant"), questions))
        every_judged = _every_judged(negatives, code_of, judgements) if any(negatives) else None
        return CodedRun(rankings, judgements, compact_strings(list(code_of)), raw, every_judged)


def code_run(
    questions: Sequence[GoldenQuestion], returned: Sequence[Sequence[str]], to_document: Callable[[str], str]
) -> CodedRun:
    """The run as columnar arrays: rankings of document codes (raw ids mapped and coded),
    the judgements on the same codes, and the document id of each code (:class:`RunCoder`
    given every ranking at once)."""
    capacity = sum(map(len, returned))
    coder = RunCoder(len(returned), capacity, to_document)
    coder.add(returned)
    return coder.finish(questions)


def _every_judged(
    negatives: Sequence[frozenset[str]], code_of: dict[str, int], expected: columnar.Judgements
) -> columnar.Judgements:
    """Each question's judged documents: its coded ``expected`` ones and its judged negatives,
    coded into ``code_of`` (which grows by the negatives nobody returned).  Only membership
    counts (judged@k), so every document has grade 1 here; merged by one stable sort."""
    n = len(negatives)
    counts = np.fromiter(map(len, negatives), dtype=np.int64, count=n)
    codes = np.fromiter(
        (code_of.setdefault(doc_id, len(code_of)) for doc_id in itertools.chain.from_iterable(negatives)),
        dtype=np.int64,
        count=int(counts.sum()),
    )
    expected_counts = np.diff(expected.offsets)
    question = np.arange(n, dtype=np.int64)
    rows = np.concatenate((np.repeat(question, expected_counts), np.repeat(question, counts)))
    order = np.argsort(rows, kind="stable")
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(expected_counts + counts, out=offsets[1:])
    return columnar.Judgements.binary(offsets, np.concatenate((expected.codes.astype(np.int64), codes))[order])


def error_result(question: GoldenQuestion, message: str, latency_ms: float) -> QuestionResult:
    """A question the retriever failed on: no verdict, not a miss."""
    return _error_result(question.id, question.form.value, question.hard_class, question.expected, message, latency_ms)


def _error_result(
    question_id: str, form: str, hard_class: str | None, expected: frozenset[str], message: str, latency_ms: float
) -> QuestionResult:
    return QuestionResult(
        question_id=question_id,
        form=form,
        hard_class=hard_class,
        expected=expected,
        returned_ids=(),
        documents=(),
        top1_hit=False,
        top3_hit=False,
        latency_ms=latency_ms,
        status=QuestionStatus.ERROR,
        error=message,
        judged=bool(expected),
    )


@dataclass(frozen=True)
class RateSummary:
    """Hit counts and rates of a group of questions; rates exclude errored questions."""

    questions: int
    errors: int
    top1_hits: int
    top3_hits: int

    @property
    def scored(self) -> int:
        return self.questions - self.errors

    @property
    def top1_rate(self) -> float | None:
        return self.top1_hits / self.scored if self.scored else None

    @property
    def top3_rate(self) -> float | None:
        return self.top3_hits / self.scored if self.scored else None

    def to_dict(self) -> dict[str, int | float | None]:
        return {
            "questions": self.questions,
            "scored": self.scored,
            "errors": self.errors,
            "top1_hits": self.top1_hits,
            "top3_hits": self.top3_hits,
            "top1_rate": self.top1_rate,
            "top3_rate": self.top3_rate,
        }


@dataclass(frozen=True)
class Aggregates:
    overall: RateSummary
    by_form: Mapping[str, RateSummary]
    by_hard_class: Mapping[str, RateSummary]
    metrics: Mapping[str, float]
    """Mean of each rank metric over the scored questions it is defined for."""

    def to_dict(self) -> dict[str, object]:
        return {
            "overall": self.overall.to_dict(),
            "by_form": {k: v.to_dict() for k, v in self.by_form.items()},
            "by_hard_class": {k: v.to_dict() for k, v in self.by_hard_class.items()},
            "metrics": dict(self.metrics),
        }


def aggregate(results: Sequence[QuestionResult], extra_zeros: int = 0) -> Aggregates:
    """:func:`aggregate_columns` of per-question results (read back from a hits table)."""
    count = len(results)
    ok = np.fromiter((r.scored for r in results), dtype=np.bool_, count=count)
    top1 = np.fromiter((r.scored and r.top1_hit for r in results), dtype=np.bool_, count=count)
    top3 = np.fromiter((r.scored and r.top3_hit for r in results), dtype=np.bool_, count=count)
    names: dict[str, None] = {}
    for result in results:
        if result.scored:
            names.update(dict.fromkeys(result.metrics))
    metrics = {
        name: np.fromiter(
            (r.metrics.get(name, math.nan) if r.scored else math.nan for r in results), dtype=np.float64, count=count
        )
        for name in names
    }
    forms, hard_classes = [r.form for r in results], [r.hard_class for r in results]
    return aggregate_columns(ok, top1, top3, forms, hard_classes, metrics, extra_zeros)


def aggregate_columns(
    ok: np.ndarray,
    top1: np.ndarray,
    top3: np.ndarray,
    forms: Sequence[str],
    hard_classes: Sequence[str | None],
    metrics: Mapping[str, np.ndarray],
    extra_zeros: int = 0,
) -> Aggregates:
    """Rates overall, by form and by hard class, and each metric's mean over the scored
    questions it is defined for (NaN: undefined or errored), from one array per quantity.

    Hits count only where ``ok``; a group's rates leave its errored questions out.
    ``extra_zeros``: queries outside the questions that count 0 in every mean (trec_eval's
    rule, ``all-judged``: the source's queries judged only with grade 0).
    """
    top1 = top1 & ok
    top3 = top3 & ok
    means: dict[str, float] = {}
    for name, values in metrics.items():
        defined = values[~np.isnan(values) & ok]
        if defined.size:
            # fsum, as statistics.fmean: the mean does not depend on the order of the questions.
            means[name] = math.fsum(defined.tolist()) / (defined.size + extra_zeros)
    return Aggregates(
        overall=RateSummary(len(ok), len(ok) - int(ok.sum()), int(top1.sum()), int(top3.sum())),
        by_form=_groups(forms, ok, top1, top3),
        by_hard_class=_groups([h or NO_HARD_CLASS for h in hard_classes], ok, top1, top3),
        metrics=means,
    )


def _groups(keys: Sequence[str], ok: np.ndarray, top1: np.ndarray, top3: np.ndarray) -> dict[str, RateSummary]:
    """The rates of each group of questions that share a key, sorted by key."""
    codes: dict[str, int] = {}
    code = np.fromiter((codes.setdefault(key, len(codes)) for key in keys), dtype=np.int64, count=len(keys))
    size = len(codes)
    questions = np.bincount(code, minlength=size)
    scored = np.bincount(code, weights=ok, minlength=size)
    hits1 = np.bincount(code, weights=top1, minlength=size)
    hits3 = np.bincount(code, weights=top3, minlength=size)
    return {
        key: RateSummary(
            questions=int(questions[c]),
            errors=int(questions[c] - scored[c]),
            top1_hits=int(hits1[c]),
            top3_hits=int(hits3[c]),
        )
        for key, c in sorted(codes.items())
    }
