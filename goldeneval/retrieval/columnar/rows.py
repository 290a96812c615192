"""Rankings and judgements of a whole run as CSR arrays: the columnar core's inputs.

A run is held as two CSR (compressed sparse row) pairs of numpy arrays, never as per-question
Python objects:

* :class:`Rankings` -- ``offsets`` (int64, n + 1, ``offsets[0] == 0``) and ``codes`` (int32 or
  int64): question ``i`` returned ``codes[offsets[i]:offsets[i + 1]]`` in rank order.  These are
  *raw* rankings: chunk ids already mapped to the code of their document, duplicates allowed.
* :class:`Judgements` -- ``offsets``, ``codes`` and integer ``grades``: the judged documents of
  each question, each at most once per question (a qrels file).

Codes are opaque integer labels of documents, shared by both sides
(:func:`goldeneval.retrieval.columnar.encoding.encode` makes them from string ids).  The
arrays are checked once, here, where they are built, so the scan, the scores and the judged
shares can trust them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

__all__ = ["BoolArray", "CodeArray", "FloatArray", "Int64Array", "Judgements", "Rankings"]


Int64Array = NDArray[np.int64]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
CodeArray = NDArray[np.int32] | NDArray[np.int64]


def _offsets(values: Any, what: str) -> Int64Array:
    offsets = np.ascontiguousarray(values, dtype=np.int64)
    if offsets.ndim != 1 or offsets.size == 0:
        raise ValueError(f"{what}.offsets must be a 1-D array of n + 1 positions (found shape {offsets.shape})")
    if offsets[0] != 0:
        raise ValueError(f"{what}.offsets must start at 0 (found {offsets[0]})")
    if offsets.size > 1 and bool((offsets[1:] < offsets[:-1]).any()):
        first = int(np.flatnonzero(offsets[1:] < offsets[:-1])[0])
        raise ValueError(
            f"{what}.offsets must not decrease (question #{first}: {offsets[first]} -> {offsets[first + 1]})"
        )
    return offsets


def _codes(values: Any, what: str, offsets: Int64Array) -> CodeArray:
    codes = np.asarray(values)
    if codes.ndim != 1 or not np.issubdtype(codes.dtype, np.integer):
        raise ValueError(f"{what}.codes must be a 1-D integer array (found {codes.dtype}, shape {codes.shape})")
    if codes.dtype != np.int32:
        codes = codes.astype(np.int64, copy=False)
    if codes.size != offsets[-1]:
        raise ValueError(f"{what}.codes holds {codes.size} values but offsets end at {offsets[-1]}")
    return np.ascontiguousarray(codes)


@dataclass(frozen=True)
class _QuestionRows:
    """Document codes of n questions in CSR form, ``codes[offsets[i]:offsets[i + 1]]`` for
    question ``i``, checked and made contiguous when built (errors name the arrays ``what``)."""

    offsets: Int64Array
    codes: CodeArray
    what: ClassVar[str]
    """How errors name these arrays: ``rankings`` (``rankings.offsets must ...``)."""

    def __post_init__(self) -> None:
        offsets = _offsets(self.offsets, self.what)
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "codes", _codes(self.codes, self.what, offsets))

    def __len__(self) -> int:
        return int(self.offsets.size - 1)


@dataclass(frozen=True)
class Rankings(_QuestionRows):
    """Raw rankings of n questions in CSR form: ``codes[offsets[i]:offsets[i + 1]]`` in rank order."""

    what: ClassVar[str] = "rankings"

    @property
    def lengths(self) -> Int64Array:
        return np.diff(self.offsets)

    def row(self, i: int) -> CodeArray:
        """The ranking of question ``i`` (a view): for tests and reports, not for hot loops."""
        return self.codes[self.offsets[i] : self.offsets[i + 1]]


@dataclass(frozen=True)
class Judgements(_QuestionRows):
    """Judged documents of n questions in CSR form, with an integer grade each (a qrels file).

    A document is judged at most once per question: :func:`encode` guarantees it, and
    :meth:`check_unique` verifies arrays built by other means.
    """

    grades: Int64Array
    what: ClassVar[str] = "judgements"

    def __post_init__(self) -> None:
        super().__post_init__()
        grades = np.asarray(self.grades)
        if grades.shape != self.codes.shape or not np.issubdtype(grades.dtype, np.integer):
            raise ValueError(
                f"judgements.grades must be integers, one per judged document "
                f"(found {grades.dtype}, shape {grades.shape}, for {self.codes.size} documents)"
            )
        object.__setattr__(self, "grades", np.ascontiguousarray(grades, dtype=np.int64))

    @classmethod
    def binary(cls, offsets: Any, codes: Any) -> Judgements:
        """Every listed document relevant with grade 1: a golden set's ``expected`` ids."""
        codes = np.asarray(codes)
        return cls(offsets, codes, np.ones(codes.shape, dtype=np.int64))

    def first_repeat(self) -> tuple[int, int] | None:
        """(question, code) of the first document judged twice for one question, or ``None``."""
        questions = np.repeat(np.arange(len(self), dtype=np.int64), np.diff(self.offsets))
        order = np.lexsort((self.codes, questions))
        q, c = questions[order], self.codes[order]
        repeated = np.flatnonzero((q[1:] == q[:-1]) & (c[1:] == c[:-1]))
        return (int(q[repeated[0]]), int(c[repeated[0]])) if repeated.size else None

    def check_unique(self) -> None:
        """Raise ``ValueError`` naming the first question that judges one document twice."""
        repeat = self.first_repeat()
        if repeat is not None:
            raise ValueError(f"question #{repeat[0]} judges document code {repeat[1]} twice; judge each document once")
