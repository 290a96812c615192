"""String document ids to the integer codes the columnar core reads, one vocabulary for both sides.

A run's rankings and its judgements are coded against one shared vocabulary, so that a code
means the same document on both sides; ``Encoded.vocabulary[code]`` is the id back.  Input may
be Python sequences of ids or pyarrow list arrays (a Parquet column), read without a Python
object per id.  Why a module of its own: coding is where a large run's ids are all in hand at
once, so it is where memory is won or lost; it codes them a bounded batch at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from goldeneval.retrieval.columnar.rows import Int64Array, Judgements, Rankings

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Encoded", "encode"]


@dataclass(frozen=True)
class Encoded:
    """What :func:`encode` returns: both sides coded against one ``vocabulary`` (code -> id)."""

    rankings: Rankings
    judgements: Judgements
    vocabulary: pa.Array


_BATCH_IDS = 1 << 20
"""Ids coded at a time (at least; more while the vocabulary is larger): what one batch's
transient arrays hold, a few dozen bytes an id, instead of several copies of every id of the run."""


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


def _flatten(values: pa.Array, what: str, allow_nulls: bool = False) -> tuple[Int64Array, pa.Array]:
    import pyarrow as pa
    import pyarrow.compute as pc

    if not (pa.types.is_list(values.type) or pa.types.is_large_list(values.type)):
        raise ValueError(f"{what} must be a list per question (found Arrow type {values.type})")
    lengths = pc.fill_null(pc.list_value_length(values), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = values.flatten()
    if flat.null_count and not allow_nulls:
        raise _null_error(what, flat.null_count)
    return offsets, flat


def _null_error(what: str, nulls: int) -> ValueError:
    return ValueError(f"{what} holds {nulls} null value(s); every entry must be set")


@dataclass(frozen=True)
class _Side:
    """One side of a run (the rankings or the judged documents) ready to be coded a batch at a
    time: its offsets, how many ids it holds, and where its ids come from."""

    what: str
    offsets: Int64Array
    rows: Sequence[Iterable[Any]] | None
    """The Python rows, when the side came as Python sequences."""
    flat: Sequence[pa.Array] | None
    """Every id as Arrow arrays (one per chunk), when the side came as an Arrow list array."""

    @property
    def count(self) -> int:
        return int(self.offsets[-1])

    def batches(self, size: Callable[[], int]) -> Iterator[pa.Array]:
        """The side's ids in order, about ``size()`` a batch (asked afresh for each batch)."""

        if self.flat is not None:
            for chunk in self.flat:
                start = 0
                while start < len(chunk):
                    step = size()
                    yield chunk.slice(start, step)
                    start += step
            return
        assert self.rows is not None
        kind: pa.DataType | None = None
        flat: list[Any] = []
        for row in self.rows:
            flat.extend(row)
            if len(flat) >= size():
                batch, kind = self._array(flat, kind)
                flat = []
                yield batch
        if flat:
            yield self._array(flat, kind)[0]

    def _array(self, flat: list[Any], kind: pa.DataType | None) -> tuple[pa.Array, pa.DataType]:
        """A batch of Python ids as one Arrow array, of the type the side's first batch took."""
        import pyarrow as pa

        try:
            batch = pa.array(flat, type=kind)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
            if any(value is None for value in flat):  # pa.array types a batch of None alone as null
                raise _null_error(self.what, self._nulls()) from None
            raise ValueError(f"{self.what}: every value must be of one type ({error})") from error
        if batch.null_count:
            raise _null_error(self.what, self._nulls())
        return batch, batch.type

    def _nulls(self) -> int:
        assert self.rows is not None
        return sum(value is None for row in self.rows for value in row)


def _side(values: Any, what: str) -> _Side:
    """``values`` (Python rows, or an Arrow list array or chunked array) as a :class:`_Side`,
    its shape checked; Python ids are read when coded, a batch at a time, never as one list."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray | pa.Array):
        # a chunked column is read chunk by chunk: combining its chunks would copy every id
        chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
        flattened = [_flatten(chunk, what, True) for chunk in chunks] or [_flatten(values.combine_chunks(), what)]
        nulls = sum(flat.null_count for _, flat in flattened)
        if nulls:
            raise _null_error(what, nulls)
        offsets = np.zeros(1 + sum(o.size - 1 for o, _ in flattened), dtype=np.int64)
        at = 0
        for chunk_offsets, _ in flattened:
            offsets[at + 1 : at + chunk_offsets.size] = offsets[at] + chunk_offsets[1:]
            at += chunk_offsets.size - 1
        return _Side(what, offsets, None, [flat for _, flat in flattened])
    rows = values if isinstance(values, list) else list(values)
    lengths = np.fromiter((len(row) for row in rows), dtype=np.int64, count=len(rows))
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return _Side(what, offsets, rows, None)


def _code(sides: Sequence[_Side]) -> tuple[NDArray[np.int32], pa.Array]:
    """Every id of ``sides``, in order, as int32 codes into one vocabulary (a ``large_string``
    array): the codes and the vocabulary of one Arrow dictionary encoding of all the ids cast to
    ``large_string`` and concatenated, built without that concatenation.

    Each batch is dictionary-encoded alone; its distinct ids (in first-occurrence order) are
    looked up in the vocabulary so far and the new ones appended in that order, so a code is
    still the position of the id's first occurrence among the distinct ids of the whole run.
    A batch holds at least as many ids as the vocabulary, so looking up is at most one hash of
    the vocabulary per batch: no more hashing than the ids themselves.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.large_string()
    codes = np.empty(sum(side.count for side in sides), dtype=np.int32)
    vocabulary: pa.Array = pa.array([], text)
    at = 0

    def size() -> int:
        return max(_BATCH_IDS, len(vocabulary))

    for side in sides:
        for batch in side.batches(size):
            local = pc.dictionary_encode(batch.cast(text))
            fresh = local.dictionary
            if len(vocabulary):
                known = pc.fill_null(pc.index_in(fresh, value_set=vocabulary), -1).to_numpy(zero_copy_only=False)
                mapping = known.astype(np.int32, copy=True)
                new = mapping < 0
                count = int(new.sum())
                if count:
                    mapping[new] = np.arange(len(vocabulary), len(vocabulary) + count, dtype=np.int32)
                    vocabulary = pa.concat_arrays([vocabulary, fresh.filter(pa.array(new))])
            else:
                mapping = np.arange(len(fresh), dtype=np.int32)
                vocabulary = fresh
            indices = local.indices.to_numpy(zero_copy_only=False)
            np.take(mapping, indices, out=codes[at : at + indices.size])
            at += indices.size
    # Arrow's allocator keeps the batches' freed memory for its next allocation; the run's next
    # steps (the scan, the scores) are numpy's, so hand it back rather than hold it beside them.
    pa.default_memory_pool().release_unused()
    return codes, vocabulary


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
    read without a Python object per id.  Both sides are coded against one vocabulary (Arrow's
    hash kernel), so a code means the same document on both; codes are int32, and they and the
    vocabulary are exactly those of one dictionary encoding of every id at once.  The ids are
    coded a batch at a time (:func:`_code`): no list, array or cast copy of every id is made,
    so 1,000,000 questions x 100 Python string ids are coded in about the codes' own memory
    beyond the ids (``benchmarks/memory.py``).

    Chunk-grained rankings: encode the chunk ids, then map codes through a numpy table
    (``Rankings(r.offsets, doc_of_chunk[r.codes])``), or map the strings first.
    """
    import pyarrow as pa

    ranked = _side(rankings, "rankings")
    judged_side = _side(judged, "judged")
    r_offsets, j_offsets = ranked.offsets, judged_side.offsets
    if r_offsets.size != j_offsets.size:
        raise ValueError(
            f"rankings and judged must cover the same questions (found {r_offsets.size - 1} and {j_offsets.size - 1})"
        )
    if grades is None:
        grade_values = np.ones(judged_side.count, dtype=np.int64)
    else:
        g_offsets, g_flat = _flatten(_as_list_array(grades, "grades"), "grades")
        if not np.array_equal(g_offsets, j_offsets):
            bad = int(np.flatnonzero(g_offsets != j_offsets)[0]) - 1
            raise ValueError(f"grades must give one grade per judged document (question #{max(bad, 0)} differs)")
        if len(g_flat) and not pa.types.is_integer(g_flat.type):
            raise ValueError(f"grades must be integers (found Arrow type {g_flat.type})")
        grade_values = g_flat.to_numpy(zero_copy_only=False).astype(np.int64)
    codes, vocabulary = _code((ranked, judged_side))
    split = ranked.count
    judgements = Judgements(j_offsets, codes[split:], grade_values)
    repeat = judgements.first_repeat()
    if repeat is not None:
        document = vocabulary[repeat[1]].as_py()
        raise ValueError(f"judged: question #{repeat[0]} lists document {document!r} twice; judge each document once")
    return Encoded(Rankings(r_offsets, codes[:split]), judgements, vocabulary)
