"""The typed, versioned record of a retrieval run's details: what the store's ``details``
column holds.

The evaluator writes it (:meth:`goldeneval.retrieval.evaluation.RetrievalRun.details`); the report,
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

import base64
import io
import itertools
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from typing import Annotated, Any, Literal, Self

import numpy as np
import pyarrow as pa
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationError,
    model_validator,
)

from goldeneval.core.errors import StoreError
from goldeneval.core.forms import NO_HARD_CLASS
from goldeneval.core.kinds import UNKEYED_KIND, DetailsKind, register_details_kind, stored_details_error
from goldeneval.core.privacy import content_free_error, withheld
from goldeneval.core.records import Completion, StoredRun
from goldeneval.core.regression import COVERAGE_CUTOFF
from goldeneval.core.stats import Verdicts

__all__ = [
    "DETAILS_FORMAT_VERSION",
    "QUESTIONS_COMPLETION",
    "RATE_NAMES",
    "RETRIEVAL_DETAILS",
    "AggregatesDetail",
    "DocumentColumns",
    "JudgedDetail",
    "QuestionColumns",
    "QuestionDetail",
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


def _absent(value: object) -> bool:
    """An optional field that is absent (None) is left out of the stored JSON, so details
    without it are exactly what they were before it existed."""
    return value is None


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
    judged_at: dict[str, float] | None = Field(default=None, exclude_if=_absent)
    """judged@k where defined (format 5, sets with judged negatives only)."""
    unjudged_ranks: list[int] | None = Field(default=None, exclude_if=_absent)
    """Ranks of the top-3 documents that carry no judgment (format 5)."""
    unjudged_relevant: dict[str, float] | None = Field(default=None, exclude_if=_absent)
    """Each rank metric with every unjudged document of its top k judged relevant: the other
    end of its bounds (format 5, sets with judged negatives, not on condensed lists)."""

    @property
    def scored(self) -> bool:
        return self.status == "ok"

    def without_content(self) -> QuestionDetail:
        """The ``metadata_only`` form: no document ids, an error reduced to its class."""
        return self.model_copy(update={"documents": None, "error": content_free_error(self.error)})

    def to_json(self) -> dict[str, Any]:
        """As the store and ``--format json`` hold it: ``documents`` absent when withheld."""
        return self.model_dump(mode="json")


_CODEC = "zstd"
"""How the packed codes are compressed (pyarrow's codec: part of every pyarrow wheel)."""


def code_width(vocabulary_size: int) -> int:
    """Bytes a stored code takes: the fewest that hold the largest (1 to 4)."""
    return max(1, ((max(vocabulary_size - 1, 0)).bit_length() + 7) // 8)


def _low_bytes(width: int) -> np.dtype[np.void]:
    """A 32-bit little-endian code seen as its ``width`` low bytes: one structured field at
    offset 0, so packing and unpacking are single numpy copies, not a strided byte loop."""
    return np.dtype({"names": ["low"], "formats": [f"V{width}"], "offsets": [0], "itemsize": 4})


class DocumentColumns(_Record):
    """Every question's distinct documents, best first, dictionary-coded (format 4).

    ``codes`` index ``vocabulary``, question after question: question ``i`` has
    ``depth[i]`` of them (an error none), ``count`` in all.  Each code is stored in
    :func:`code_width` little-endian bytes, the bytes zstd-compressed and the result
    base64-encoded: one JSON string, written and read without a Python object per document,
    and about half the size of 32-bit codes (every byte stored costs time in the store's
    commit).  The codes are decoded, and checked against the vocabulary, when first read.
    """

    vocabulary: list[str]
    count: int = Field(ge=0)
    codes: str
    _raw: bytes | np.ndarray | None = PrivateAttr(default=None)
    """The codes as 32-bit integers, once decoded (or, when encoded here, the read-only array
    they were encoded from: a run's documents are not copied once more)."""
    _where: str = PrivateAttr(default="details")
    """What a decoding error names (the run, when read from the store)."""

    def __eq__(self, other: object) -> bool:
        """The stored fields only: whether the codes were decoded yet does not matter."""
        if not isinstance(other, DocumentColumns):
            return NotImplemented
        return (self.vocabulary, self.count, self.codes) == (other.vocabulary, other.count, other.codes)

    @classmethod
    def encode(cls, vocabulary: list[str], codes: np.ndarray) -> DocumentColumns:
        """The documents of a run: ``codes`` (any integer array) into ``vocabulary``.

        A little-endian uint32 ``codes`` is kept, not copied, and made read-only: pass one
        made for the purpose (the evaluator's is)."""
        full = np.ascontiguousarray(codes, dtype="<u4")
        width = code_width(len(vocabulary))
        packed = full.view(_low_bytes(width))["low"].tobytes()
        compressed = pa.Codec(_CODEC).compress(packed, asbytes=True)
        made = cls.model_construct(
            vocabulary=vocabulary, count=full.size, codes=base64.b64encode(compressed).decode("ascii")
        )
        full.setflags(write=False)  # kept as the decoded codes: a little-endian uint32 ``codes`` is kept itself
        made._raw = full
        return made

    @classmethod
    def encode_in_place(cls, vocabulary: list[str], codes: np.ndarray) -> DocumentColumns:
        """:meth:`encode` of a contiguous little-endian uint32 ``codes`` array that the caller
        hands over: its memory is overwritten with the packed bytes, which are compressed from
        there, so no second buffer of the packed size is made (300 MB for 1,000,000 questions
        of 100 documents).  The codes are not kept: they are decoded when read."""
        if codes.dtype != np.dtype("<u4") or not codes.flags.c_contiguous or not codes.flags.writeable:
            raise ValueError("encode_in_place needs a writable contiguous little-endian uint32 array")
        width = code_width(len(vocabulary))
        packed = _pack_in_place(codes, width)
        compressed = pa.Codec(_CODEC).compress(packed, asbytes=True)
        del packed
        return cls.model_construct(
            vocabulary=vocabulary, count=codes.size, codes=base64.b64encode(compressed).decode("ascii")
        )

    def decoded(self) -> np.ndarray:
        """The codes as a read-only array of 32-bit integers (decoded once).

        Raises :class:`~goldeneval.core.errors.StoreError` when the stored string is not what
        :meth:`encode` writes, or a code lies outside the vocabulary."""
        if self._raw is None:
            self._raw = self._decode()
        return np.frombuffer(self._raw, dtype="<u4")

    def decoded_afresh(self) -> np.ndarray:
        """The codes as :meth:`decoded` gives them, decoded now and not kept (unless they are
        kept already): for a holder that keeps its documents packed and decodes them only
        while it reads them."""
        if self._raw is not None:
            return np.frombuffer(self._raw, dtype="<u4")
        return self._checked(self._unpacked(self._packed_bytes()))

    def picked(self, positions: np.ndarray) -> np.ndarray:
        """``decoded()[positions]`` for ascending ``positions``, decompressed a block at a time
        and never whole (a report shows each question's first three of a hundred documents)."""
        if self._raw is not None:
            kept: np.ndarray = self.decoded()[positions]
            return kept
        picked = np.zeros(positions.size, dtype="<u4")
        done = start = 0
        for codes in self.code_blocks():
            stop = start + codes.size
            end = done + int(np.searchsorted(positions[done:], stop))
            if end > done:
                picked[done:end] = codes[positions[done:end] - start]
                done = end
            start = stop
        return picked

    def code_blocks(self) -> Iterator[np.ndarray]:
        """The codes in order, :data:`_BLOCK_CODES` at a time, each block checked against the
        vocabulary: decompressed as they are read and never whole (unless kept already)."""
        if self._raw is not None:
            codes = self.decoded()
            for start in range(0, self.count, _BLOCK_CODES):
                yield codes[start : start + _BLOCK_CODES]
            return
        width = code_width(len(self.vocabulary))
        # the base64 text decoded a slice at a time too: the compressed bytes are never whole
        stream = pa.CompressedInputStream(_Base64Reader(self.codes), _CODEC)
        try:
            for start in range(0, self.count, _BLOCK_CODES):
                stop = min(start + _BLOCK_CODES, self.count)
                try:
                    block = stream.read((stop - start) * width)
                    if len(block) != (stop - start) * width:
                        raise ValueError(f"{len(block)} bytes where {stop - start} codes of {width} bytes were due")
                except (ValueError, OSError, MemoryError, pa.ArrowException) as exc:
                    raise self._undecodable(exc) from None
                yield self._checked(self._unpacked(block))
            try:
                if stream.read(1):
                    raise ValueError(f"more bytes than {self.count} codes of {width} bytes")
            except (ValueError, OSError, MemoryError, pa.ArrowException) as exc:
                raise self._undecodable(exc) from None
        finally:
            stream.close()

    def _decode(self) -> bytes:
        return self._checked(self._unpacked(self._packed_bytes())).tobytes()

    def _compressed(self) -> bytes:
        try:
            return base64.b64decode(self.codes, validate=True)
        except ValueError as exc:
            raise self._undecodable(exc) from None

    def _packed_bytes(self) -> bytes:
        width = code_width(len(self.vocabulary))
        try:
            compressed = self._compressed()
            packed = pa.Codec(_CODEC).decompress(compressed, decompressed_size=self.count * width, asbytes=True)
            if len(packed) != self.count * width:
                raise ValueError(f"{len(packed)} bytes for {self.count} codes of {width} bytes")
        except (ValueError, OSError, MemoryError, pa.ArrowException) as exc:
            raise self._undecodable(exc) from None
        return bytes(packed) if not isinstance(packed, bytes) else packed

    def _unpacked(self, packed: bytes | pa.Buffer) -> np.ndarray:
        width = code_width(len(self.vocabulary))
        codes = np.zeros(len(packed) // width, dtype="<u4")
        codes.view(_low_bytes(width))["low"] = np.frombuffer(packed, dtype=f"V{width}")
        return codes

    def _checked(self, codes: np.ndarray) -> np.ndarray:
        if codes.size and int(codes.max()) >= len(self.vocabulary):
            raise StoreError(
                f"{self._where}: details field 'questions.documents.codes': code {int(codes.max())} is outside "
                f"the vocabulary of {len(self.vocabulary)}"
            )
        return codes

    def _undecodable(self, exc: BaseException) -> StoreError:
        return StoreError(f"{self._where}: details field 'questions.documents.codes': cannot be decoded: {exc}")


_BLOCK_CODES = 1 << 20
"""Codes decompressed at a time where documents are read without decoding them all."""
_BASE64_SLICE = 1 << 20
"""Characters of the codes' base64 text :class:`_Base64Reader` decodes at a time (a multiple of 4)."""


class _Base64Reader(io.RawIOBase):
    """The bytes a base64 text encodes, as a file decoded :data:`_BASE64_SLICE` characters at
    a time as it is read: what the decompressor of :meth:`DocumentColumns.code_blocks` reads
    from, so that a stored run's compressed codes are never decoded whole.  Text that is not
    base64 raises ``ValueError`` when the slice holding it is read."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self._text = text
        self._at = 0
        self._decoded = b""
        self._given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        target = memoryview(buffer).cast("B")
        while self._given == len(self._decoded) and self._at < len(self._text):
            piece = self._text[self._at : self._at + _BASE64_SLICE]
            self._at += len(piece)
            self._decoded, self._given = base64.b64decode(piece, validate=True), 0
        count = min(len(target), len(self._decoded) - self._given)
        target[:count] = self._decoded[self._given : self._given + count]
        self._given += count
        return count


_NAMED_AT_ONCE = 1 << 16
"""Documents :meth:`QuestionColumns.document_lists_one_by_one` names (looks up in the
vocabulary) at a time: a list of that many, not of a whole decompressed block."""


def _pack_in_place(codes: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` low bytes of each little-endian uint32 code, written over the array's own
    memory from its start, a block at a time: block ``[a, b)`` goes to bytes
    ``[a * width, b * width)``, which lie below the block's own source ``[4a, 4b)`` or within
    it (copied out first), and never on a later block's codes.  Returns the packed prefix."""
    raw = codes.view(np.uint8)
    if width < 4:
        for start in range(0, codes.size, _BLOCK_CODES):
            stop = min(start + _BLOCK_CODES, codes.size)
            low = codes[start:stop].view(_low_bytes(width))["low"].copy()
            raw[start * width : stop * width] = low.view(np.uint8)
    packed: np.ndarray = raw[: codes.size * width]
    return packed


class QuestionColumns(_Record):
    """Format 4's ``questions``: one list per field of :class:`QuestionDetail`, one entry per
    question in set order.  A metric is None where it is undefined for the question (an error,
    or a question without expected documents), where a record leaves the name out."""

    id: list[str]
    form: list[str]
    hard_class: list[str | None]
    depth: list[int | None]
    top1_hit: list[bool | None]
    top3_hit: list[bool | None]
    latency_ms: list[float]
    status: list[Literal["ok", "error"]]
    error: list[str | None]
    metrics: dict[str, list[float | None]]
    documents: DocumentColumns | None = Field(default=None, exclude_if=withheld)
    """None in ``metadata_only``."""
    judged_at: dict[str, list[float | None]] | None = Field(default=None, exclude_if=_absent)
    """Format 5: judged@k per question, None where undefined (no judgment, an empty ranking,
    an error); absent for a set without judged negatives."""
    unjudged_ranks: list[list[int]] | None = Field(default=None, exclude_if=_absent)
    """Format 5: per question, the ranks among its top-3 documents that carry no judgment.
    Ranks, not ids, so it is kept in ``metadata_only`` too; the ids are the documents at
    those ranks, where the documents are kept."""
    unjudged_relevant: dict[str, list[float | None]] | None = Field(default=None, exclude_if=_absent)
    """Format 5: each rank metric per question with every unjudged document of its top k
    judged relevant (None where the metric is undefined); absent without judged negatives
    and on condensed lists.  Numbers only: kept in ``metadata_only``."""

    @model_validator(mode="after")
    def _one_entry_per_question(self) -> Self:
        count = len(self.id)
        columns: dict[str, list[Any]] = {
            "form": self.form,
            "hard_class": self.hard_class,
            "depth": self.depth,
            "top1_hit": self.top1_hit,
            "top3_hit": self.top3_hit,
            "latency_ms": self.latency_ms,
            "status": self.status,
            "error": self.error,
        }
        columns.update({f"metrics.{name}": values for name, values in self.metrics.items()})
        columns.update({f"judged_at.{name}": values for name, values in (self.judged_at or {}).items()})
        columns.update({f"unjudged_relevant.{name}": values for name, values in (self.unjudged_relevant or {}).items()})
        if self.unjudged_ranks is not None:
            columns["unjudged_ranks"] = self.unjudged_ranks
        for name, values in columns.items():
            if len(values) != count:
                raise ValueError(f"{name}: {len(values)} entries for {count} questions")
        # An error has no depth and no verdicts; a scored question has all three.  (The depths
        # also split the documents among the questions: a wrong one would move documents.)
        failed = [status == "error" for status in self.status]
        for name in ("depth", "top1_hit", "top3_hit"):
            missing = [value is None for value in getattr(self, name)]
            if missing != failed:
                i = next(i for i, (m, f) in enumerate(zip(missing, failed, strict=True)) if m != f)
                state = "an error" if failed[i] else "scored"
                raise ValueError(
                    f"{name}: question {self.id[i]!r} is {state} but its {name} is {getattr(self, name)[i]!r}"
                )
        if any(depth is not None and depth < 0 for depth in self.depth):
            raise ValueError("depth: a depth below 0")
        if self.documents is not None:
            stored, expected = self.documents.count, int(self.document_counts().sum())
            if stored != expected:
                raise ValueError(f"documents.count: {stored} codes where depth adds up to {expected}")
        return self

    _counts: np.ndarray | None = PrivateAttr(default=None)
    """Documents per question where the depth does not say (records before format 3)."""

    def __eq__(self, other: object) -> bool:
        """The fields only (not what was derived from them)."""
        if not isinstance(other, QuestionColumns):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in QuestionColumns.model_fields)

    def __len__(self) -> int:
        return len(self.id)

    def document_counts(self) -> np.ndarray:
        """How many documents each question has stored (its depth; none for an error)."""
        if self._counts is not None:
            return self._counts
        return np.fromiter((d or 0 for d in self.depth), dtype=np.int64, count=len(self.depth))

    def document_lists(self) -> list[list[str]] | None:
        """Each question's documents, best first; None when withheld (``metadata_only``)."""
        if self.documents is None:
            return None
        vocabulary = np.asarray(self.documents.vocabulary, dtype=object)
        documents: list[str] = vocabulary[self.documents.decoded()].tolist() if len(vocabulary) else []
        bounds = np.concatenate(([0], np.cumsum(self.document_counts()))).tolist()
        return [documents[bounds[i] : bounds[i + 1]] for i in range(len(self))]

    def document_lists_one_by_one(self, documents: DocumentColumns) -> Iterator[list[str]]:
        """Each question's documents (of ``documents``, these columns' own), best first, one
        question at a time: the codes are decompressed a block at a time and the documents of
        the questions a block holds made together, so ``--format json`` holds no list of every
        question's documents (100 a question: about 1.2 KB each, 56 MiB at 50,000 questions)."""
        vocabulary = np.asarray(documents.vocabulary, dtype=object)
        bounds = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(self.document_counts(), out=bounds[1:])
        blocks = documents.code_blocks()
        held, held_from = np.empty(0, dtype="<u4"), 0  # the codes read but not yet given out
        question = 0
        while question < len(self):
            while held_from + held.size < bounds[question + 1]:  # this question's codes are not all read
                # there are as many codes as the depths add up to (validated), or a store error
                held = np.concatenate((held, next(blocks)))
            # the questions whose codes are all read, about _NAMED_AT_ONCE documents of them
            read = int(np.searchsorted(bounds, held_from + held.size, side="right")) - 1
            named = int(np.searchsorted(bounds, bounds[question] + _NAMED_AT_ONCE, side="right")) - 1
            last = max(question + 1, min(read, named))
            names: list[str] = vocabulary[held[: bounds[last] - held_from]].tolist()
            if last == len(self):  # every code is read: check that no byte follows the last one
                next(blocks, None)  # (before the last lists: a consumer stops at the last question)
            local = (bounds[question : last + 1] - bounds[question]).tolist()
            for begin, end in itertools.pairwise(local):
                yield names[begin:end]
            held, held_from, question = held[bounds[last] - held_from :], int(bounds[last]), last

    def document_lists_in(self, order: Sequence[int]) -> Iterator[list[str]]:
        """The documents of the questions ``order`` lists, one question at a time: in set order
        from codes decompressed a block at a time (:meth:`document_lists_one_by_one`); in any
        other order from the codes decoded whole (4 bytes a document, never a string each).
        An empty list for each question when the documents are withheld (``metadata_only``)."""
        if self.documents is None:
            return (list[str]() for _ in order)
        if all(i == position for position, i in enumerate(order)) and len(order) == len(self):
            return self.document_lists_one_by_one(self.documents)
        vocabulary = np.asarray(self.documents.vocabulary, dtype=object)
        return (vocabulary[codes].tolist() for codes in self.document_codes_in(order))

    def document_codes_in(self, order: Sequence[int]) -> Iterator[np.ndarray]:
        """The documents of the questions ``order`` lists as codes into ``documents.vocabulary``
        (none when withheld), from the codes decoded whole."""
        if self.documents is None:
            return (np.empty(0, dtype="<u4") for _ in order)
        codes = self.documents.decoded()
        bounds = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(self.document_counts(), out=bounds[1:])
        return (codes[bounds[i] : bounds[i + 1]] for i in order)

    def top_codes(self, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Each question's first ``k`` documents as codes into ``documents.vocabulary``: question
        ``i`` has ``codes[bounds[i]:bounds[i + 1]]``; ``(bounds, codes)``, None when withheld.
        Read without decoding every document (:meth:`DocumentColumns.picked`)."""
        if self.documents is None:
            return None
        counts = self.document_counts()
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if len(counts) else counts
        shown = np.minimum(counts, k)
        take = np.repeat(starts, shown) + (np.arange(int(shown.sum())) - np.repeat(np.cumsum(shown) - shown, shown))
        codes = self.documents.picked(take) if take.size else np.zeros(0, dtype="<u4")
        return np.concatenate(([0], np.cumsum(shown))), codes

    def top_documents(self, k: int) -> list[list[str]] | None:
        """Each question's first ``k`` documents (what a report shows), without decoding the rest."""
        top = self.top_codes(k)
        if top is None or self.documents is None:
            return None
        bounds_array, codes = top
        vocabulary = np.asarray(self.documents.vocabulary, dtype=object)
        documents: list[str] = vocabulary[codes].tolist() if codes.size else []
        bounds = bounds_array.tolist()
        return [documents[bounds[i] : bounds[i + 1]] for i in range(len(self))]

    def rows(self) -> list[QuestionDetail]:
        """The same questions as records (formats 1 to 3's shape)."""
        documents = self.document_lists()
        names = list(self.metrics)
        metric_rows = zip(*(self.metrics[name] for name in names), strict=True) if names else ([] for _ in self.id)
        shares = self.judged_at
        unjudged = self.unjudged_ranks
        ends = self.unjudged_relevant
        return [
            QuestionDetail.model_construct(
                id=self.id[i],
                form=self.form[i],
                hard_class=self.hard_class[i],
                documents=None if documents is None else documents[i],
                depth=self.depth[i],
                top1_hit=self.top1_hit[i],
                top3_hit=self.top3_hit[i],
                latency_ms=self.latency_ms[i],
                status=self.status[i],
                error=self.error[i],
                metrics={name: value for name, value in zip(names, values, strict=True) if value is not None},
                judged_at=None
                if shares is None
                else {name: share for name, share in ((n, c[i]) for n, c in shares.items()) if share is not None},
                unjudged_ranks=None if unjudged is None else unjudged[i],
                unjudged_relevant=None
                if ends is None
                else {name: value for name, value in ((n, c[i]) for n, c in ends.items()) if value is not None},
            )
            for i, values in enumerate(metric_rows)
        ]

    def json_rows(self) -> Iterator[dict[str, Any]]:
        """Each question as :meth:`QuestionDetail.to_json` gives it, one at a time and without
        a record object (``--format json`` streams these: :mod:`goldeneval.core.json_stream`)."""
        documents = None if self.documents is None else self.document_lists_one_by_one(self.documents)
        names = list(self.metrics)
        metric_columns = [self.metrics[name] for name in names]
        shares = self.judged_at
        unjudged = self.unjudged_ranks
        ends = self.unjudged_relevant
        for i, question_id in enumerate(self.id):
            row: dict[str, Any] = {"id": question_id, "form": self.form[i], "hard_class": self.hard_class[i]}
            if documents is not None:
                row["documents"] = next(documents)
            row["depth"] = self.depth[i]
            row["top1_hit"] = self.top1_hit[i]
            row["top3_hit"] = self.top3_hit[i]
            row["latency_ms"] = self.latency_ms[i]
            row["status"] = self.status[i]
            row["error"] = self.error[i]
            row["metrics"] = {
                name: column[i] for name, column in zip(names, metric_columns, strict=True) if column[i] is not None
            }
            if shares is not None:
                row["judged_at"] = {name: column[i] for name, column in shares.items() if column[i] is not None}
            if unjudged is not None:
                row["unjudged_ranks"] = unjudged[i]
            if ends is not None:
                row["unjudged_relevant"] = {name: column[i] for name, column in ends.items() if column[i] is not None}
            yield row

    @classmethod
    def from_rows(cls, rows: list[QuestionDetail]) -> QuestionColumns:
        """Records (formats 1 to 3) as columns."""
        names = list(dict.fromkeys(name for row in rows for name in row.metrics))
        documents = None
        if all(row.documents is not None for row in rows):
            index: dict[str, int] = {}
            codes = [index.setdefault(doc, len(index)) for row in rows for doc in row.documents or ()]
            documents = DocumentColumns.encode(list(index), np.asarray(codes, dtype=np.int64))
        made = cls.model_construct(
            id=[row.id for row in rows],
            form=[row.form for row in rows],
            hard_class=[row.hard_class for row in rows],
            depth=[row.depth for row in rows],
            top1_hit=[row.top1_hit for row in rows],
            top3_hit=[row.top3_hit for row in rows],
            latency_ms=[row.latency_ms for row in rows],
            status=[row.status for row in rows],
            error=[row.error for row in rows],
            metrics={name: [row.metrics.get(name) for row in rows] for name in names},
            documents=documents,
            judged_at=_named_columns(rows, "judged_at"),
            unjudged_ranks=None
            if all(row.unjudged_ranks is None for row in rows)
            else [row.unjudged_ranks or [] for row in rows],
            unjudged_relevant=_named_columns(rows, "unjudged_relevant"),
        )
        # Before format 3 the depth was not stored: each record's documents say how many it has.
        made._counts = np.fromiter((len(row.documents or ()) for row in rows), dtype=np.int64, count=len(rows))
        return made

    def without_content(self) -> QuestionColumns:
        """The ``metadata_only`` form: no document ids, errors reduced to their class."""
        return self.model_copy(
            update={"documents": None, "error": [None if e is None else content_free_error(e) for e in self.error]}
        )


def _named_columns(
    rows: list[QuestionDetail], field: Literal["judged_at", "unjudged_relevant"]
) -> dict[str, list[float | None]] | None:
    """A per-question mapping of the records (judged@k, or the metrics' other ends) as columns."""
    if all(getattr(row, field) is None for row in rows):
        return None
    names = list(dict.fromkeys(name for row in rows for name in getattr(row, field) or {}))
    return {name: [(getattr(row, field) or {}).get(name) for row in rows] for name in names}


class JudgedDetail(_Record):
    """judged@k of a run (format 5): ir_measures' Judged@k, the share of the first k distinct
    documents that carry a judgment (relevant or judged not relevant), averaged over the
    scored questions where it is defined."""

    cutoffs: list[int]
    measured: int = Field(ge=0)
    """Questions the overall means are taken over (a judgment and a non-empty ranking)."""
    overall: dict[str, float | None]
    by_form: dict[str, dict[str, float | None]]
    bounds: dict[str, list[float | None]] | None = Field(default=None, exclude_if=_absent)
    """Each rank metric's mean with every unjudged document of its top k not relevant (the
    metric as reported) and with every one relevant: ``[low end, other end]``."""


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
    judged: JudgedDetail | None = Field(default=None, exclude_if=_absent)
    """Format 5: judged@k overall and by form; None for a set without judged negatives."""
    average_over: Literal["all-judged"] | None = Field(default=None, exclude_if=_absent)
    """``all-judged`` when the metrics' means follow trec_eval (every query of the qrels, the
    set's ``unjudged`` counting 0); absent for the default (``with-relevant``)."""
    judged_only: Literal[True] | None = Field(default=None, exclude_if=_absent)
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

RETRIEVAL_DETAILS = register_details_kind(
    DetailsKind(names=(UNKEYED_KIND,), read=parse_details_json, outcomes=_stored_outcomes)
)
"""Retrieval details carry no ``kind`` key (they predate it); registered as the entry point
``retrieval`` of ``goldeneval.run_kinds`` too, so a store is read before this is imported."""
