"""A scored run held as the arrays it was scored from (:class:`ScoredAnswers`): the verdicts,
the metrics, each question's expected documents (:class:`ExpectedDocuments`) and the distinct
documents it kept (:class:`KeptDocuments`, packed as the store keeps them once the evaluator
hands the run over).

Kept apart from the scoring that fills it (:mod:`goldeneval.retrieval.scoring`): the store,
the report and the tables read these arrays, and a :class:`~goldeneval.retrieval.results.QuestionResult`
per question is built only when a caller asks for one.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import overload

import numpy as np

from goldeneval.retrieval import columnar
from goldeneval.retrieval.details import DocumentColumns
from goldeneval.retrieval.encoding import RawRankings
from goldeneval.retrieval.protocol import JUDGED_PREFIX
from goldeneval.retrieval.results import Aggregates, QuestionResult, failed_result

__all__ = ["ExpectedDocuments", "KeptDocuments", "ScoredAnswers"]


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
    """Each question's id, in set order (:func:`~goldeneval.retrieval.encoding.compact_strings`)."""
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
    """The document id of each code (:func:`~goldeneval.retrieval.encoding.compact_strings`)."""
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
                results.append(failed_result(question_id, form, hard_class, expected, error, self.latency_ms[i]))
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
