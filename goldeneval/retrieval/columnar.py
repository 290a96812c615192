"""Columnar scoring core: ADR-072's hit rates and trec_eval's rank metrics over whole runs at once.

A run is held as two CSR (compressed sparse row) pairs of numpy arrays, never as per-question
Python objects:

* :class:`Rankings` -- ``offsets`` (int64, n + 1, ``offsets[0] == 0``) and ``codes`` (int32 or
  int64): question ``i`` returned ``codes[offsets[i]:offsets[i + 1]]`` in rank order.  These are
  *raw* rankings: chunk ids already mapped to the code of their document, duplicates allowed.
* :class:`Judgements` -- ``offsets``, ``codes`` and integer ``grades``: the judged documents of
  each question, each at most once per question (a qrels file).

Codes are opaque integer labels of documents, shared by both sides.  :func:`encode` builds
both from string ids (Python sequences or pyarrow list arrays) through one Arrow dictionary
encoding, so the vocabulary is shared; ``Encoded.vocabulary[code]`` is the id back.

Semantics, exactly
------------------
1. **Collapse.** Each ranking is reduced to its distinct documents, each at its *first*
   occurrence (scoring protocol v1, ADR-072 step 2).  Ranks below are 1-based ranks in this
   collapsed ranking.  ``depth`` is the number of distinct documents -- capped at
   ``depth_limit`` when one is given, which is all a caller needs to flag a ranking that is
   shorter than its deepest cutoff.
2. **Protocol v1 (ADR-072, see ``goldeneval.retrieval.scoring``).** The expected set is every judged
   document with grade > 0, whatever ``rel_level``.  ``top1``: the first distinct document is
   expected; ``top3``: one of the first three is -- among the first ``protocol_head`` raw ids
   when that is given (the over-fetch depth).  A question with an empty expected set is a hit
   (both) only when its raw ranking is empty.  A question with ``ok == False`` (the retriever
   errored or timed out) is neither: both are ``False``, every metric is NaN, and
   :meth:`ColumnarScores.means` leaves it out.
3. **Relevance.** A document is *relevant* when its grade is ``>= rel_level`` (default 1, like
   ``trec_eval -l``).  ``R`` is the number of relevant judged documents of a question.  Binary
   metrics use this; nDCG uses the grades themselves (gain = grade, ``trec_eval`` ``ndcg_cut``),
   so documents graded ``1 <= grade < rel_level`` still add gain.  Grades ``<= 0`` never count.
4. **Metrics** (per question, at cutoff ``1 <= k <= 1000``), each equal to ``trec_eval`` 9.x
   (the version pytrec-eval-terrier 0.5.11 bundles) on the collapsed ranking, handed over with
   strictly decreasing scores so that its score-then-docno order is the rank order:

   ===============  ==========================  ================================================
   name             trec_eval                   definition
   ===============  ==========================  ================================================
   ``hit@k``        ``success_k``               1 if a relevant document is in the top k, else 0
   ``mrr@k``        ``recip_rank`` (run cut k)  1 / rank of the first relevant document in the
                                                top k, else 0
   ``recall@k``     ``recall_k``                relevant documents in the top k / R
   ``precision@k``  ``P_k``                     relevant documents in the top k / k (always k)
   ``ndcg@k``       ``ndcg_cut_k``              sum of grade / log2(rank + 1) over the top k,
                                                divided by the same sum over all judged grades
                                                > 0 sorted descending (the ideal), cut at k
   ``map@k``        ``map_cut_k``               sum over relevant documents at rank r <= k of
                                                (relevant documents at ranks <= r) / r, / R
   ``rprec``        ``Rprec``                   relevant documents in the top R / R
   ===============  ==========================  ================================================

   Every metric is **NaN for a question with R == 0** (and for errored questions).  trec_eval
   leaves a query without judgements out of its output and scores one whose judgements are all
   non-relevant 0; by default both are undefined here, so every mean runs over the same
   questions.  (With ``rel_level > 1``, trec_eval still reports nDCG for a question whose judged
   documents all lie below the level; this core reports NaN, for the same reason.)
   ``score(..., defined="judged")`` follows trec_eval instead: NaN only without any judgement,
   and then every value equals trec_eval's for every question it reports.

How it stays fast
-----------------
Every metric needs only the collapsed ranks of the judged documents with grade > 0, which are
few, plus the distinct count.  So each ranking is scanned only as deep as the deepest cutoff
requires (``R`` too for R-precision, 3 for the protocol, ``depth_limit``), in blocks of
questions small enough to stay in cache, in one of two ways:

* a prefix of at most ``_NARROW_WIDTH`` (16) raw ids is transposed to one array per raw
  position and compared pairwise (a repeat is an id equal to an earlier one), and with each
  judged document, in the codes' own dtype -- no sort;
* a longer prefix becomes a matrix of int64 keys ``row | code | position``, sorted row by row
  (numpy's SIMD sort), which sorts the whole block: equal neighbouring codes are repeats, the
  first of a run is the first occurrence, and each judged document is found by a branchless
  vectorised binary search in its row.

A ranking whose prefix collapsed to fewer distinct documents than it needs is scanned again
twice as deep; rankings are grouped by the width they need, so one long ranking never pads a
block of short ones.  The metrics are then per-question reductions (``np.bincount``) over the
located documents.  No JIT: a numba kernel with one hash probe per raw id was measured 15x
slower than this on 1M x 100 ids (the probes miss the cache), and would add a compile on first
use.  ``benchmarks/engine.py`` measures the core against a plain-numpy floor, goldeneval's
per-question path, pytrec-eval and ranx.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from goldeneval.retrieval.metrics import DEFAULT_RELEVANCE_LEVEL, Metric, parse_metric

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "ColumnarScores",
    "Encoded",
    "Judgements",
    "Rankings",
    "collapse",
    "encode",
    "judged_at",
    "judged_mask",
    "question_metrics",
    "score",
    "unjudged_ranks",
]

PROTOCOL_DEPTH = 3
"""Distinct documents the protocol's top-3 verdict looks at (``goldeneval.retrieval.scoring.TOP_K``)."""

_CHUNK_ELEMENTS = 1 << 18
"""Keys sorted per block (2 MiB of int64): a block stays in cache while it is sorted and searched."""

_NARROW_WIDTH = 16
"""Prefixes up to this many raw ids are scanned by pairwise comparison instead of sorting."""
_NARROW_LOOKUPS = 16
"""...as long as no question in the block has more judged documents to locate than this."""

Int64Array = NDArray[np.int64]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
CodeArray = NDArray[np.int32] | NDArray[np.int64]

_EMPTY: Int64Array = np.empty(0, dtype=np.int64)


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class Encoded:
    """What :func:`encode` returns: both sides coded against one ``vocabulary`` (code -> id)."""

    rankings: Rankings
    judgements: Judgements
    vocabulary: pa.Array


def _as_list_array(values: Any, what: str) -> pa.Array:
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        return values
    rows = list(values)
    lengths = np.fromiter((len(row) for row in rows), dtype=np.int64, count=len(rows))
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat: list[Any] = []
    for row in rows:
        flat.extend(row)
    try:
        flat_array = pa.array(flat)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
        raise ValueError(f"{what}: every value must be of one type ({error})") from error
    return pa.LargeListArray.from_arrays(pa.array(offsets), flat_array)


def _flatten(values: pa.Array, what: str) -> tuple[Int64Array, pa.Array]:
    import pyarrow as pa
    import pyarrow.compute as pc

    if not (pa.types.is_list(values.type) or pa.types.is_large_list(values.type)):
        raise ValueError(f"{what} must be a list per question (found Arrow type {values.type})")
    lengths = pc.fill_null(pc.list_value_length(values), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = values.flatten()
    if flat.null_count:
        raise ValueError(f"{what} holds {flat.null_count} null value(s); every entry must be set")
    return offsets, flat


def encode(
    rankings: Sequence[Sequence[str]] | pa.Array | pa.ChunkedArray,
    judged: Sequence[Iterable[str]] | pa.Array | pa.ChunkedArray,
    grades: Sequence[Iterable[int]] | pa.Array | pa.ChunkedArray | None = None,
) -> Encoded:
    """Code string ids of a whole run and its judgements against one shared vocabulary.

    ``rankings[i]`` is question i's ranking (document ids, chunks already mapped to their
    document), ``judged[i]`` its judged document ids (a set is fine) and ``grades[i]`` their
    grades in the same order (default: all 1, i.e. binary ``expected`` sets).  Each may be a
    Python sequence of sequences or a pyarrow list array (e.g. a Parquet column), which is
    read without a Python object per id.  Both sides are dictionary-encoded in one pass
    (Arrow's hash kernel), so a code means the same document on both; codes are int32.

    Chunk-grained rankings: encode the chunk ids, then map codes through a numpy table
    (``Rankings(r.offsets, doc_of_chunk[r.codes])``), or map the strings first.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    ranking_list = _as_list_array(rankings, "rankings")
    judged_list = _as_list_array(judged, "judged")
    r_offsets, r_flat = _flatten(ranking_list, "rankings")
    j_offsets, j_flat = _flatten(judged_list, "judged")
    if r_offsets.size != j_offsets.size:
        raise ValueError(
            f"rankings and judged must cover the same questions (found {r_offsets.size - 1} and {j_offsets.size - 1})"
        )
    if grades is None:
        grade_values = np.ones(len(j_flat), dtype=np.int64)
    else:
        g_offsets, g_flat = _flatten(_as_list_array(grades, "grades"), "grades")
        if not np.array_equal(g_offsets, j_offsets):
            bad = int(np.flatnonzero(g_offsets != j_offsets)[0]) - 1
            raise ValueError(f"grades must give one grade per judged document (question #{max(bad, 0)} differs)")
        if len(g_flat) and not pa.types.is_integer(g_flat.type):
            raise ValueError(f"grades must be integers (found Arrow type {g_flat.type})")
        grade_values = g_flat.to_numpy(zero_copy_only=False).astype(np.int64)
    text = pa.large_string()
    both = pa.concat_arrays([r_flat.cast(text), j_flat.cast(text)])
    dictionary = pc.dictionary_encode(both)
    codes = dictionary.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    split = len(r_flat)
    judgements = Judgements(j_offsets, codes[split:], grade_values)
    repeat = judgements.first_repeat()
    if repeat is not None:
        document = dictionary.dictionary[repeat[1]].as_py()
        raise ValueError(f"judged: question #{repeat[0]} lists document {document!r} twice; judge each document once")
    return Encoded(Rankings(r_offsets, codes[:split]), judgements, dictionary.dictionary)


# --------------------------------------------------------------------------------------------
# Metrics as data
# --------------------------------------------------------------------------------------------


# The metrics themselves (names, definitions, trec_eval measures, cutoffs up to 1000) are
# declared once, in goldeneval.retrieval.metrics; this module only computes them.


# --------------------------------------------------------------------------------------------
# The scan: distinct counts and collapsed ranks of judged documents
# --------------------------------------------------------------------------------------------


@dataclass
class _Scan:
    """State of one scan over all rankings, filled block by block.

    A block is a matrix of keys ``row << (cbits + pbits) | field << pbits | position``: ``row``
    is the question's row in the block, ``field`` its document code minus ``base`` (padding past
    a ranking's end gets ``sentinel``, above every real field) and ``position`` the raw rank - 1.
    Sorting each row sorts the whole block, so a binary search may run past a row's end safely.
    """

    offsets: Int64Array
    codes: CodeArray
    lengths: Int64Array
    target: Int64Array
    """Distinct documents each question needs: a row is done once it has them or is exhausted."""
    base: int
    sentinel: int
    cbits: int
    lookup_offsets: Int64Array
    """CSR, by question, of the documents to locate (judged with grade > 0)."""
    lookup_codes: CodeArray
    lookup_question: Int64Array
    lookups_in_range: bool
    """Every looked-up code lies within the rankings' code range (no per-block check needed)."""
    depth: Int64Array
    rank: Int64Array
    """1-based collapsed rank of each looked-up document; 0 where it was not found."""
    raw_position: Int64Array
    """0-based raw position of its first occurrence, where found."""
    keep: BoolArray | None
    """Raw positions of the first ``keep_limit`` distinct documents (for :func:`collapse`),
    made only when a finished ranking first drops a raw id (:func:`_kept_whole`)."""
    whole: BoolArray | None
    """While ``keep`` is not made: the finished rankings, each kept whole (for :func:`collapse`)."""
    keep_limit: int
    """Distinct documents :func:`collapse` keeps of each ranking; 0: the scan collapses nothing."""
    uniform: int
    """The common length of all rankings, or -1 when they differ."""
    buffer: Int64Array = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    row_bits: dict[tuple[int, int, int], Int64Array] = field(default_factory=dict)
    """``row << (cbits + pbits) | position`` per block shape, built once per scan."""


def _new_scan(
    rankings: Rankings,
    target: Int64Array,
    lookup_offsets: Int64Array,
    lookup_question: Int64Array,
    lookup_codes: CodeArray,
    keep_limit: int | None,
) -> _Scan:
    lengths = rankings.lengths
    codes = rankings.codes
    if codes.dtype == np.int32:
        base, span = -(1 << 31), 1 << 32
    elif codes.size:
        base = int(codes.min())
        span = int(codes.max()) - base + 1
    else:
        base, span = 0, 1
    longest = int(lengths.max(initial=0))
    in_range = not lookup_codes.size or (int(lookup_codes.min()) >= base and int(lookup_codes.max()) - base < span)
    return _Scan(
        offsets=rankings.offsets,
        codes=codes,
        lengths=lengths,
        target=target,
        base=base,
        sentinel=span,
        cbits=span.bit_length(),
        lookup_offsets=lookup_offsets,
        lookup_codes=lookup_codes,
        lookup_question=lookup_question,
        lookups_in_range=in_range,
        depth=np.zeros(len(rankings), dtype=np.int64),
        rank=np.zeros(lookup_codes.size, dtype=np.int64),
        raw_position=np.zeros(lookup_codes.size, dtype=np.int64),
        keep=None,
        whole=None if not keep_limit else np.zeros(len(rankings), dtype=np.bool_),
        keep_limit=keep_limit or 0,
        uniform=longest if lengths.size and int(lengths.min()) == longest else -1,
    )


def _keys(scan: _Scan, start: int, rows: Int64Array, width: int, pbits: int) -> Int64Array:
    """The sorted key matrix of a block of ``rows``; ``start >= 0`` says they are the contiguous
    rows ``start, start + 1, ...`` of equally long rankings, read as a reshaped view."""
    count = int(rows.size)
    size = count * width
    if scan.buffer.size < size + width:
        scan.buffer = np.empty(max(size, _CHUNK_ELEMENTS) + width, dtype=np.int64)
    scan.buffer[size : size + width] = np.iinfo(np.int64).max  # stops every search past the end
    keys = scan.buffer[:size].reshape(count, width)
    positions = np.arange(width, dtype=np.int64)
    contiguous = start >= 0 and scan.uniform >= width
    if contiguous:
        block = scan.codes[scan.offsets[start] : scan.offsets[start + count]].reshape(count, scan.uniform)
        np.subtract(block[:, :width], np.int64(scan.base), out=keys)
    else:
        where = scan.offsets[rows][:, None] + positions
        valid = positions < scan.lengths[rows][:, None]
        np.minimum(where, max(scan.codes.size - 1, 0), out=where)
        np.subtract(scan.codes[where], np.int64(scan.base), out=keys)
        keys[~valid] = scan.sentinel
    keys <<= pbits
    layout = (count, width, scan.cbits + pbits)
    if layout not in scan.row_bits:
        scan.row_bits[layout] = (np.arange(count, dtype=np.int64) << (scan.cbits + pbits))[:, None] | positions
    keys |= scan.row_bits[layout]
    keys.sort(axis=1)
    return keys


def _scan_block(scan: _Scan, start: int, rows: Int64Array, width: int) -> Int64Array:
    """Scan ``rows`` to ``width`` raw ids; record the finished ones; return the unfinished."""
    pbits = max(1, (width - 1).bit_length())
    rbits = max(1, (rows.size - 1).bit_length())
    if rbits + scan.cbits + pbits > 63:
        raise ValueError(
            f"document codes span {scan.sentinel} values, too many to pack with rankings this long; "
            "number the documents compactly (encode() does, or np.unique(codes, return_inverse=True))"
        )
    keys = _keys(scan, start, rows, width, pbits)
    count = rows.size
    picked: Int64Array | slice = slice(start, start + count) if start >= 0 else rows
    lengths = scan.lengths[picked]
    scanned = np.minimum(lengths, width)
    high = keys >> pbits
    first = np.empty(keys.shape, dtype=np.bool_)
    first[:, 0] = True
    np.not_equal(high[:, 1:], high[:, :-1], out=first[:, 1:])
    if int(scanned.min()) < width:
        first &= np.arange(width) < scanned[:, None]
    if np.count_nonzero(first) == int(scanned.sum()):
        distinct = scanned
        has_duplicate = np.zeros(count, dtype=np.bool_)
    else:
        distinct = first.sum(axis=1, dtype=np.int64)
        has_duplicate = distinct < scanned
    done = (lengths <= width) | (distinct >= scan.target[picked])
    all_done = bool(done.all())
    if all_done:
        done_rows = np.arange(count, dtype=np.int64)
        scan.depth[picked] = distinct
    else:
        done_rows = np.flatnonzero(done)
        scan.depth[rows[done_rows]] = distinct[done_rows]

    # Collapsed ranks in raw order, only for finished rows that hold a duplicate.
    slot = _EMPTY
    cumulative: NDArray[np.int32] | None = None
    duplicate_rows = np.flatnonzero(has_duplicate & done) if distinct is not scanned else _EMPTY
    if duplicate_rows.size:
        slot = np.full(count, -1, dtype=np.int64)
        slot[duplicate_rows] = np.arange(duplicate_rows.size)
        firsts = np.zeros((duplicate_rows.size, width), dtype=np.bool_)
        np.put_along_axis(firsts, keys[duplicate_rows] & ((1 << pbits) - 1), first[duplicate_rows], axis=1)
        cumulative = np.cumsum(firsts, axis=1, dtype=np.int32)

    _locate(scan, keys, pbits, rows, done_rows, all_done, slot, cumulative)
    if scan.keep_limit and not _kept_whole(scan, rows, done_rows, ~has_duplicate & (scanned == lengths)):
        _mark_kept(scan, rows, done_rows, scanned, has_duplicate, cumulative)
    return rows[~done] if not all_done else _EMPTY


def _ranges(starts: Int64Array, counts: Int64Array) -> Int64Array:
    """``concatenate([arange(s, s + c) for s, c in zip(starts, counts)])``, vectorised."""
    total = int(counts.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    shift = starts - (np.cumsum(counts) - counts)
    return np.repeat(shift, counts) + np.arange(total, dtype=np.int64)


def _locate(
    scan: _Scan,
    keys: Int64Array,
    pbits: int,
    rows: Int64Array,
    done_rows: Int64Array,
    all_done: bool,
    slot: Int64Array,
    cumulative: NDArray[np.int32] | None,
) -> None:
    """Find each looked-up document of the finished rows: one binary search in the block."""
    offsets = scan.lookup_offsets
    if all_done and rows[-1] - rows[0] + 1 == rows.size:
        first, last = int(offsets[rows[0]]), int(offsets[rows[-1] + 1])
        lookups: Int64Array | slice = slice(first, last)
        local = scan.lookup_question[lookups] - rows[0]
    else:
        chosen = rows[done_rows]
        counts = offsets[chosen + 1] - offsets[chosen]
        lookups = _ranges(offsets[chosen], counts)
        local = np.repeat(done_rows, counts)
    if local.size == 0:
        return
    code_field = scan.lookup_codes[lookups].astype(np.int64) - scan.base
    wanted = (local << (scan.cbits + pbits)) | (code_field << pbits)
    # Branchless lower bound within each row: the block is sorted as a whole and followed by
    # `width` maximal keys, so a probe past the row's end meets a larger key and stays put.
    width = keys.shape[1]
    flat = scan.buffer[: keys.size + width]
    at = local * width
    step = 1 << (width.bit_length() - 1)
    while step:
        at += (flat[at + (step - 1)] < wanted) * step
        step >>= 1
    key = flat[at]
    found = (key >> pbits) == (wanted >> pbits)
    if not scan.lookups_in_range:
        found &= (code_field >= 0) & (code_field < scan.sentinel)
    position = key & ((1 << pbits) - 1)
    rank = position + 1
    if cumulative is not None:
        which = np.flatnonzero(found & (slot[local] >= 0))
        rank[which] = cumulative[slot[local[which]], position[which]]
    rank[~found] = 0
    scan.rank[lookups] = rank
    scan.raw_position[lookups] = position


def _kept_whole(scan: _Scan, rows: Int64Array, done_rows: Int64Array, unrepeated: BoolArray) -> bool:
    """Whether the finished rows of a block (``rows[done_rows]``) are each kept whole: no raw id
    repeats a document (``unrepeated``, by row of the block: none among those scanned, and
    every one scanned) and none lies past ``keep_limit``.  While that holds for every block,
    the rows are only noted in ``scan.whole`` and :func:`collapse` returns the rankings as
    they are, with no mask as long as the run (10 MB at 100,000 x 100).  At the first block
    where it fails, the mask is made, every row noted so far marked in it, and ``False`` tells
    the caller to mark this block's rows; from then on every block is marked."""
    if scan.keep is not None:
        return False
    assert scan.whole is not None
    finished = rows[done_rows]
    if bool((unrepeated[done_rows] & (scan.lengths[finished] <= scan.keep_limit)).all()):
        scan.whole[finished] = True
        return True
    scan.keep = np.zeros(scan.codes.size, dtype=np.bool_)
    for begin in range(0, scan.whole.size, _CHUNK_ELEMENTS):
        end = min(begin + _CHUNK_ELEMENTS, scan.whole.size)
        scan.keep[scan.offsets[begin] : scan.offsets[end]] = np.repeat(scan.whole[begin:end], scan.lengths[begin:end])
    scan.whole = None
    return False


def _mark_kept(
    scan: _Scan,
    rows: Int64Array,
    done_rows: Int64Array,
    scanned: Int64Array,
    has_duplicate: BoolArray,
    cumulative: NDArray[np.int32] | None,
) -> None:
    """Mark the raw positions of the first ``keep_limit`` distinct documents of finished rows."""
    assert scan.keep is not None
    plain = done_rows[~has_duplicate[done_rows]]
    scan.keep[_ranges(scan.offsets[rows[plain]], np.minimum(scanned[plain], scan.keep_limit))] = True
    if cumulative is None:
        return
    duplicate = done_rows[has_duplicate[done_rows]]
    firsts = np.empty(cumulative.shape, dtype=np.bool_)
    firsts[:, 0] = True
    np.not_equal(cumulative[:, 1:], cumulative[:, :-1], out=firsts[:, 1:])
    firsts &= cumulative <= scan.keep_limit
    firsts &= np.arange(cumulative.shape[1]) < scanned[duplicate][:, None]
    row_of, position = np.nonzero(firsts)
    scan.keep[scan.offsets[rows[duplicate]][row_of] + position] = True


def _scan_narrow(scan: _Scan, start: int, rows: Int64Array, width: int) -> Int64Array | None:
    """:func:`_scan_block` for short prefixes, without sorting: each raw id is compared with the
    ids before it (duplicates) and with its question's looked-up documents, column by column,
    in the codes' own dtype.  ``None`` when a question in the block has too many documents to
    look up this way (the caller then sorts)."""
    count = rows.size
    picked: Int64Array | slice = slice(start, start + count) if start >= 0 else rows
    offsets = scan.lookup_offsets
    lookup_counts = np.diff(offsets[start : start + count + 1]) if start >= 0 else offsets[rows + 1] - offsets[rows]
    widest = int(lookup_counts.max(initial=0))
    if widest > _NARROW_LOOKUPS:
        return None
    lengths = scan.lengths[picked]
    scanned = np.minimum(lengths, width)
    positions = np.arange(width)[:, None]
    if start >= 0 and scan.uniform >= width:
        block = scan.codes[scan.offsets[start] : scan.offsets[start + count]].reshape(count, scan.uniform)
        ids = np.ascontiguousarray(block[:, :width].T)
        valid = None
    else:
        where = scan.offsets[rows][None, :] + positions
        np.minimum(where, max(scan.codes.size - 1, 0), out=where)
        ids = scan.codes[where]
        valid = positions < scanned[None, :]
    # duplicate[j]: the id at raw position j occurred before it; compared a distance at a
    # time (position j with j - d, every j at once): width - 1 calls, not width * (width - 1) / 2
    duplicate = np.zeros((width, count), dtype=np.bool_)
    same = np.empty((width - 1, count), dtype=np.bool_)
    for d in range(1, width):
        np.equal(ids[d:], ids[:-d], out=same[: width - d])
        duplicate[d:] |= same[: width - d]
    if valid is not None:
        duplicate &= valid
    repeats = duplicate.sum(axis=0, dtype=np.int64)
    distinct = scanned - repeats
    done = (lengths <= width) | (distinct >= scan.target[picked])
    all_done = bool(done.all())
    if all_done:
        scan.depth[picked] = distinct
    else:
        scan.depth[rows[done]] = distinct[done]
    # Repeats before each raw position, for the few rows that have any.
    repeating = np.flatnonzero(repeats)
    before = np.cumsum(duplicate[:, repeating], axis=0, dtype=np.int64) if repeating.size else None
    slot = np.full(count, -1, dtype=np.int64) if repeating.size else _EMPTY
    if repeating.size:
        slot[repeating] = np.arange(repeating.size)

    if widest:
        lookup_at = offsets[rows][None, :] + np.arange(widest)[:, None]
        wanted = np.arange(widest)[:, None] < lookup_counts[None, :]
        wanted &= done[None, :]
        np.minimum(lookup_at, max(scan.lookup_codes.size - 1, 0), out=lookup_at)
        targets = scan.lookup_codes[lookup_at]
        column = np.arange(width, dtype=np.int16)[:, None]
        for i in range(widest):
            equal = ids == targets[i][None, :]
            if valid is not None:
                equal &= valid
            position = np.where(equal, column, np.int16(width)).min(axis=0)
            found = (position < width) & wanted[i]
            where_found = np.flatnonzero(found)
            rank = position[where_found].astype(np.int64) + 1
            if before is not None:
                corrected = np.flatnonzero(slot[where_found] >= 0)
                at = where_found[corrected]
                rank[corrected] -= before[position[at], slot[at]]
            scan.rank[lookup_at[i][where_found]] = rank
            scan.raw_position[lookup_at[i][where_found]] = position[where_found]

    done_rows = np.arange(count, dtype=np.int64) if all_done else np.flatnonzero(done)
    if scan.keep_limit and not _kept_whole(scan, rows, done_rows, (repeats == 0) & (scanned == lengths)):
        assert scan.keep is not None
        first = ~duplicate
        if valid is not None:
            first &= valid
        first &= done[None, :]
        first &= np.cumsum(first, axis=0) <= scan.keep_limit
        row_of, raw_position = np.nonzero(first.T)
        scan.keep[scan.offsets[rows][row_of] + raw_position] = True
    return rows[~done] if not all_done else _EMPTY


def _run_scan(scan: _Scan) -> None:
    """Scan every non-empty ranking as deep as its target needs, in blocks that fit in cache.

    Rows are grouped by the width they need (powers of two), so a long ranking never pads a
    block of short ones; a row whose prefix collapsed short of its target is rescanned twice
    as deep in the next round.
    """
    width = np.minimum(np.maximum(scan.target, 1), scan.lengths)
    everything = bool(scan.lengths.size) and int(scan.lengths.min()) > 0 and int(width.min()) == int(width.max())
    pending = np.arange(scan.lengths.size, dtype=np.int64) if everything else np.flatnonzero(scan.lengths > 0)
    while pending.size:
        leftovers: list[Int64Array] = []
        widths = width if everything else width[pending]
        groups: list[tuple[Int64Array, int]]
        if everything:
            groups = [(pending, int(widths[0]))]
        else:
            bucket = np.ceil(np.log2(widths)).astype(np.int64)
            groups = [(pending[bucket == b], 0) for b in np.unique(bucket)]
            groups = [(members, int(width[members].max())) for members, _ in groups]
        for members, group_width in groups:
            per_block = max(1, _CHUNK_ELEMENTS // group_width)
            for begin in range(0, members.size, per_block):
                rows = members[begin : begin + per_block]
                start = int(rows[0]) if everything else -1
                rest = _scan_narrow(scan, start, rows, group_width) if group_width <= _NARROW_WIDTH else None
                if rest is None:
                    rest = _scan_block(scan, start, rows, group_width)
                if rest.size:
                    leftovers.append(rest)
        pending = np.concatenate(leftovers) if leftovers else np.empty(0, dtype=np.int64)
        width[pending] = np.minimum(width[pending] * 2, scan.lengths[pending])
        everything = False


def collapse(rankings: Rankings, limit: int | None = None) -> Rankings:
    """Each ranking's distinct documents in rank order (first occurrences), at most ``limit``.

    The same scan as :func:`score`, so it reads only as deep as ``limit`` needs.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be 0 or more (found {limit})")
    lengths = rankings.lengths
    target = lengths if limit is None else np.minimum(lengths, limit)
    keep_limit = int(lengths.max(initial=0)) if limit is None else limit
    no_lookups = np.zeros(len(rankings) + 1, dtype=np.int64)
    nothing = np.empty(0, dtype=np.int64)
    if keep_limit == 0:
        return rankings if not rankings.codes.size else Rankings(np.zeros_like(rankings.offsets), rankings.codes[:0])
    scan = _new_scan(rankings, target, no_lookups, nothing, nothing, keep_limit)
    _run_scan(scan)
    if scan.keep is None:
        # Nothing repeats and nothing lies past the limit: the rankings are their own collapse,
        # and the run keeps one array of codes, not two equal ones.
        return rankings
    offsets = np.zeros(len(rankings) + 1, dtype=np.int64)
    np.cumsum(np.minimum(scan.depth, keep_limit), out=offsets[1:])
    return Rankings(offsets, rankings.codes[scan.keep])


# --------------------------------------------------------------------------------------------
# Scores
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnarScores:
    """Per-question results of a run, one numpy array per quantity (index = question)."""

    ok: BoolArray
    """False for a question the retriever failed on: left out of every rate and mean."""
    top1: BoolArray
    top3: BoolArray
    depth: Int64Array
    """Distinct documents returned (capped at ``depth_limit`` when one was given)."""
    relevant: Int64Array
    """R: judged documents with grade >= rel_level."""
    metrics: Mapping[str, FloatArray]
    """``name -> values``; NaN where undefined (R == 0) or the question errored."""

    def shorter_than(self, k: int) -> BoolArray:
        """Scored questions whose ranking had fewer than ``k`` distinct documents (cutoff not filled)."""
        return self.ok & (self.depth < k)

    def means(self) -> dict[str, float | None]:
        """``top1``/``top3`` rates over scored questions and each metric's mean over the questions
        it is defined for; ``None`` where there is none."""
        scored = int(self.ok.sum())
        result: dict[str, float | None] = {
            "top1": float(self.top1.sum()) / scored if scored else None,
            "top3": float(self.top3.sum()) / scored if scored else None,
        }
        for name, values in self.metrics.items():
            defined = ~np.isnan(values)
            result[name] = float(values[defined].mean()) if defined.any() else None
        return result


def _discounts(k: int) -> FloatArray:
    """``1 / log2(rank + 1)`` for ranks 1..k, at index rank - 1."""
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


@dataclass
class _Located:
    """The judged documents with grade > 0 of a whole run, in question order, with the
    collapsed rank each was found at (0: not retrieved); every metric is a reduction of these."""

    n: int
    offsets: Int64Array
    question: Int64Array
    grade: Int64Array
    rank: Int64Array
    raw_position: Int64Array
    rel_level: int
    relevant: Int64Array = field(init=False)
    """R per question."""
    found: tuple[Int64Array, Int64Array, Int64Array, Int64Array] = field(init=False)
    """Question, rank, grade and raw position of each retrieved document with grade > 0."""
    hit_question: Int64Array = field(init=False)
    hit_rank: Int64Array = field(init=False)
    """Question and rank of each retrieved relevant document (question order)."""
    _within: dict[int, Int64Array] = field(default_factory=dict)
    _first: Int64Array | None = None
    _sorted: tuple[Int64Array, Int64Array, Int64Array] | None = None

    def __post_init__(self) -> None:
        retrieved = self.rank > 0
        self.found = (
            self.question[retrieved],
            self.rank[retrieved],
            self.grade[retrieved],
            self.raw_position[retrieved],
        )
        is_relevant = self.grade >= self.rel_level
        if is_relevant.all():
            self.relevant = np.diff(self.offsets)
            self.hit_question, self.hit_rank = self.found[0], self.found[1]
        else:
            self.relevant = np.bincount(self.question[is_relevant], minlength=self.n)
            hit = self.found[2] >= self.rel_level
            self.hit_question, self.hit_rank = self.found[0][hit], self.found[1][hit]

    @property
    def r(self) -> FloatArray:
        return np.maximum(self.relevant, 1).astype(np.float64)

    def within(self, k: int) -> Int64Array:
        """Relevant documents retrieved in the top ``k``, per question."""
        if k not in self._within:
            inside = self.hit_rank <= k
            self._within[k] = np.bincount(self.hit_question[inside], minlength=self.n)
        return self._within[k]

    def first_rank(self) -> Int64Array:
        """Rank of the first relevant document retrieved (a large number where none was)."""
        if self._first is None:
            first = np.full(self.n, np.iinfo(np.int64).max, dtype=np.int64)
            if self.hit_question.size:
                q = self.hit_question
                starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
                first[q[starts]] = np.minimum.reduceat(self.hit_rank, starts)
            self._first = first
        return self._first

    def by_rank(self) -> tuple[Int64Array, Int64Array, Int64Array]:
        """Retrieved relevant documents sorted by (question, rank), with their 1-based count
        within the question: the numerator of precision at their rank."""
        if self._sorted is None:
            order = np.lexsort((self.hit_rank, self.hit_question))
            q, r = self.hit_question[order], self.hit_rank[order]
            self._sorted = (q, r, np.arange(q.size) - np.searchsorted(q, q, side="left") + 1)
        return self._sorted

    def expected_within(self, k: int, head: int | None) -> BoolArray:
        """Protocol v1: a judged document (grade > 0) among the first ``k`` distinct documents of
        the first ``head`` raw ids.  Its collapsed rank is the same in the head as in the whole
        ranking, so it is in the head's top k when its rank is <= k and it first occurs there."""
        question, rank, _, position = self.found
        inside = rank <= k
        if head is not None:
            inside &= position < head
        return np.bincount(question[inside], minlength=self.n) > 0

    def dcg(self, k: int) -> FloatArray:
        """DCG@k: grade / log2(rank + 1) summed over the retrieved documents in the top k."""
        question, rank, grade, _ = self.found
        inside = rank <= k
        gain = grade[inside] * _discounts(k)[rank[inside] - 1]
        dcg = np.bincount(question[inside], weights=gain, minlength=self.n).astype(np.float64, copy=False)
        return dcg

    def ideal_dcg(self, k: int) -> FloatArray:
        """trec_eval's ideal DCG@k: the question's judged grades > 0, sorted descending, cut at k."""
        if self.grade.size == 0:
            return np.zeros(self.n)
        if int(self.grade.min()) == int(self.grade.max()):
            cumulative = np.concatenate(([0.0], np.cumsum(_discounts(k))))
            return float(self.grade[0]) * cumulative[np.minimum(np.diff(self.offsets), k)]
        order = np.lexsort((-self.grade, self.question))
        q, g = self.question[order], self.grade[order]
        position = np.arange(q.size) - np.searchsorted(q, q, side="left")
        inside = position < k
        gain = g[inside] * _discounts(k)[position[inside]]
        ideal = np.bincount(q[inside], weights=gain, minlength=self.n).astype(np.float64, copy=False)
        return ideal


def _hit(located: _Located, k: int) -> FloatArray:
    return (located.within(k) > 0).astype(np.float64)


def _mrr(located: _Located, k: int) -> FloatArray:
    first = located.first_rank()
    return np.where(first <= k, 1.0 / np.minimum(first, k + 1), 0.0)


def _recall(located: _Located, k: int) -> FloatArray:
    return located.within(k) / located.r


def _precision(located: _Located, k: int) -> FloatArray:
    return located.within(k) / float(k)


def _ndcg(located: _Located, k: int) -> FloatArray:
    dcg = located.dcg(k)
    ideal = located.ideal_dcg(k)
    return np.divide(dcg, ideal, out=np.zeros(located.n), where=ideal > 0)


def _map(located: _Located, k: int) -> FloatArray:
    q, r, seen = located.by_rank()
    inside = r <= k
    return np.bincount(q[inside], weights=seen[inside] / r[inside], minlength=located.n) / located.r


def _rprec(located: _Located, k: int) -> FloatArray:
    inside = located.hit_rank <= located.relevant[located.hit_question]
    return np.bincount(located.hit_question[inside], minlength=located.n) / located.r


_KERNELS: Mapping[str, Callable[[_Located, int], FloatArray]] = {
    "hit": _hit,
    "mrr": _mrr,
    "recall": _recall,
    "precision": _precision,
    "ndcg": _ndcg,
    "map": _map,
    "rprec": _rprec,
}


def score(
    rankings: Rankings,
    judgements: Judgements,
    metrics: Iterable[str | Metric] = ("hit@1", "hit@3", "mrr@10", "recall@10", "ndcg@10"),
    *,
    rel_level: int = 1,
    ok: BoolArray | None = None,
    depth_limit: int | None = None,
    protocol_head: int | None = None,
    defined: Literal["relevant", "judged"] = "judged",
) -> ColumnarScores:
    """Score a whole run: protocol v1 hits, ``depth`` and ``metrics`` per question (module docstring).

    ``ok`` (default all True) masks out errored questions.  ``depth_limit``: count distinct
    documents only up to this many -- enough to flag unfilled cutoffs, and cheaper, since the
    scan then stops at the deepest cutoff; ``None`` counts them all, reading every ranking whole.
    ``protocol_head``: take top-1/top-3 from the first this many raw ids only (ADR-072's
    over-fetch, ``goldeneval.retrieval.scoring.raw_limit()``), so that scanning deeper for the metrics
    never changes the gated hits; ``None``: the whole ranking.  ``defined``: ``"judged"``
    (default, as :mod:`goldeneval.retrieval.metrics` and trec_eval) makes a metric NaN only for a
    question without any judgement, scoring a judged question with nothing relevant 0 (and
    nDCG from the grades below ``rel_level``); ``"relevant"`` makes it NaN when R == 0.
    """
    n = len(rankings)
    if len(judgements) != n:
        raise ValueError(f"rankings cover {n} questions but judgements cover {len(judgements)}")
    if rel_level < 1:
        raise ValueError(f"rel_level must be 1 or more (found {rel_level}); grades <= 0 never count as relevant")
    if depth_limit is not None and depth_limit < 0:
        raise ValueError(f"depth_limit must be 0 or more (found {depth_limit})")
    if protocol_head is not None and protocol_head < 0:
        raise ValueError(f"protocol_head must be 0 or more (found {protocol_head})")
    if defined not in ("relevant", "judged"):
        raise ValueError(f"defined must be 'relevant' or 'judged' (found {defined!r})")
    wanted = [m if isinstance(m, Metric) else parse_metric(m) for m in metrics]
    elsewhere = [m.name for m in wanted if m.kind.key not in _KERNELS]
    if elsewhere:
        raise ValueError(
            f"{', '.join(elsewhere)}: read judged non-relevant documents; goldeneval.retrieval.incomplete computes them"
        )
    mask = np.ones(n, dtype=np.bool_) if ok is None else np.asarray(ok, dtype=np.bool_)
    if mask.shape != (n,):
        raise ValueError(f"ok must hold one flag per question ({n}), found shape {mask.shape}")

    # Only judged documents with grade > 0 count anywhere; locate them, nothing else.
    question = np.repeat(np.arange(n, dtype=np.int64), np.diff(judgements.offsets))
    grade, codes = judgements.grades, judgements.codes
    positive = grade > 0
    lookup_offsets = judgements.offsets
    if not positive.all():
        question, grade, codes = question[positive], grade[positive], codes[positive]
        lookup_offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(question, minlength=n), out=lookup_offsets[1:])

    lengths = rankings.lengths
    if depth_limit is None:
        target = lengths
    else:
        deepest = max([PROTOCOL_DEPTH, depth_limit, *(m.k for m in wanted if m.k is not None)])
        target = np.full(n, deepest, dtype=np.int64)
        if any(m.kind.key == "rprec" for m in wanted):
            np.maximum(target, np.bincount(question[grade >= rel_level], minlength=n), out=target)
    scan = _new_scan(rankings, target, lookup_offsets, question, codes, None)
    _run_scan(scan)
    depth = scan.depth if depth_limit is None else np.minimum(scan.depth, depth_limit)

    located = _Located(n, lookup_offsets, question, grade, scan.rank, scan.raw_position, rel_level)
    scored = located.relevant > 0 if defined == "relevant" else np.diff(judgements.offsets) > 0
    counted = scored & mask
    values = {m.name: np.where(counted, _KERNELS[m.kind.key](located, m.k or 0), np.nan) for m in wanted}
    # Protocol v1: the expected set is every judged document with grade > 0.
    nothing_expected = np.diff(lookup_offsets) == 0
    nothing_returned = lengths == 0
    top1 = np.where(nothing_expected, nothing_returned, located.expected_within(1, protocol_head)) & mask
    top3 = np.where(nothing_expected, nothing_returned, located.expected_within(PROTOCOL_DEPTH, protocol_head)) & mask
    return ColumnarScores(ok=mask, top1=top1, top3=top3, depth=depth, relevant=located.relevant, metrics=values)


def judged_mask(kept: Rankings, judged: Judgements) -> BoolArray:
    """Whether each document of the collapsed rankings ``kept`` carries a judgment of its
    question in ``judged`` (any grade, 0 included), aligned with ``kept.codes``.

    One vectorised membership test of ``question * V + code`` keys (V: one more than the
    largest code), not a Python set per question: the judged keys (few) are sorted and each
    ranked key is binary-searched among them (``np.isin`` sorts both sides: 7x slower on
    100,000 questions x 100 documents)."""
    if len(kept) != len(judged):
        raise ValueError(f"rankings cover {len(kept)} questions but judgements cover {len(judged)}")
    if kept.codes.size == 0 or judged.codes.size == 0:
        return np.zeros(kept.codes.size, dtype=np.bool_)
    width = int(max(kept.codes.max(), judged.codes.max())) + 1
    rows = np.repeat(np.arange(len(kept), dtype=np.int64), kept.lengths)
    judged_rows = np.repeat(np.arange(len(judged), dtype=np.int64), np.diff(judged.offsets))
    keys = rows * width + kept.codes.astype(np.int64)
    judged_keys = np.sort(judged_rows * width + judged.codes.astype(np.int64))
    at = np.searchsorted(judged_keys, keys)
    at[at == judged_keys.size] = 0
    found: BoolArray = judged_keys[at] == keys
    return found


def judged_at(kept: Rankings, judged: Judgements, mask: BoolArray, k: int, ok: BoolArray | None = None) -> FloatArray:
    """ir_measures' ``Judged@k`` per question: of the first ``min(k, depth)`` distinct
    documents of ``kept`` (collapsed rankings), the share that carry a judgment (``mask``,
    from :func:`judged_mask`).  NaN where it is undefined, as ir_measures leaves such a query
    out: no judgment at all, an empty ranking, or ``ok`` False (an error)."""
    if k < 1:
        raise ValueError(f"k must be 1 or more (found {k})")
    lengths = kept.lengths
    position = np.arange(kept.codes.size, dtype=np.int64) - np.repeat(kept.offsets[:-1], lengths)
    rows = np.repeat(np.arange(len(kept), dtype=np.int64), lengths)
    counted = np.bincount(rows[mask & (position < k)], minlength=len(kept))
    shown = np.minimum(lengths, k)
    defined = (shown > 0) & (np.diff(judged.offsets) > 0)
    if ok is not None:
        defined &= np.asarray(ok, dtype=np.bool_)
    shares: FloatArray = np.divide(counted, shown, out=np.full(len(kept), np.nan), where=defined)
    return shares


def unjudged_ranks(kept: Rankings, mask: BoolArray, k: int) -> Rankings:
    """Per question, the 1-based ranks among its first ``k`` distinct documents that carry no
    judgment (``mask`` from :func:`judged_mask`), as CSR ``Rankings`` of ranks."""
    lengths = kept.lengths
    position = np.arange(kept.codes.size, dtype=np.int64) - np.repeat(kept.offsets[:-1], lengths)
    rows = np.repeat(np.arange(len(kept), dtype=np.int64), lengths)
    pick = ~mask & (position < k)
    offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[pick], minlength=len(kept)), out=offsets[1:])
    return Rankings(offsets, position[pick] + 1)


def question_metrics(
    ranking: Sequence[str],
    judgements: Mapping[str, int],
    metrics: Iterable[Metric],
    relevance_level: int = DEFAULT_RELEVANCE_LEVEL,
) -> dict[str, float]:
    """Every metric of one question's distinct-document ``ranking``; empty when it has no
    judgements (undefined).  Computed by the one implementation, :func:`score`."""
    if not judgements:
        return {}
    coded = encode([list(ranking)], [list(judgements)], [list(judgements.values())])
    scores = score(coded.rankings, coded.judgements, list(metrics), rel_level=relevance_level, defined="judged")
    return {name: float(values[0]) for name, values in scores.metrics.items()}
