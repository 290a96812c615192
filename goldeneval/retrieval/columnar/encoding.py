"""String document ids to the integer codes the columnar core reads, one vocabulary for both sides.

A run's rankings and its judgements are coded against one shared vocabulary, so that a code
means the same document on both sides; ``Encoded.vocabulary[code]`` is the id back.  Input may
be Python sequences of ids or pyarrow list arrays (a Parquet column), read without a Python
object per id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

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
