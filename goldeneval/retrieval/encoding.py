"""Encoding a run's answers as columnar arrays: the one place where returned ids become codes.

The asking (:func:`goldeneval.retrieval.asking.ask_to_depth`) hands each chunk of rankings to a
:class:`RunCoder` as it comes back and drops the strings; the scoring
(:func:`goldeneval.retrieval.scoring.score_answers`) reads the :class:`CodedRun` it finishes
with: rankings of document codes, the judgements on the same codes, the document id of each
code, and the raw rankings themselves as numbers into their distinct ids (:class:`RawRankings`).
Strings a run keeps are held compacted (:func:`compact_strings`), never as the set's or the
retriever's own objects.
"""

from __future__ import annotations

import array
import itertools
import operator
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np

from goldeneval.retrieval import columnar
from goldeneval.retrieval.golden import GoldenQuestion

__all__ = ["CodedRun", "RawRankings", "RunCoder", "code_run", "compact_strings"]


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


class RawRankings(Sequence[tuple[str, ...]]):
    """What each question returned, in rank order, held as the arrays :func:`code_run` numbered
    it to: question ``i`` returned ``ids[n]`` for each ``n`` of ``numbers[offsets[i]:offsets[i + 1]]``.

    The sequence of those rankings, each a tuple built when asked: a run keeps 4 bytes a
    returned id (and each distinct id once) instead of a tuple of 100 pointers a question,
    so the run's raw ids stop costing 856 bytes a question once they are coded.  Where the
    numbers are the very codes of the documents the run keeps, the evaluator holds them
    packed once, for both (:meth:`goldeneval.retrieval.scored.ScoredAnswers.with_packed_documents`):
    they are then decoded when first read (:func:`decoded_from`), and kept from then on."""

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
