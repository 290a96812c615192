"""The scan: distinct counts and collapsed ranks of judged documents, and :func:`collapse`.

Why a scan of its own: every metric of :mod:`goldeneval.retrieval.columnar.scores` needs only
the collapsed ranks of the judged documents with grade > 0, which are few, plus the distinct
count.  So each ranking is scanned only as deep as the deepest cutoff requires (``R`` too for
R-precision, 3 for the protocol, ``depth_limit``), in blocks of questions small enough to stay
in cache, in one of two ways:

* a prefix of at most ``_NARROW_WIDTH`` (16) raw ids is transposed to one array per raw
  position and compared pairwise (a repeat is an id equal to an earlier one), and with each
  judged document, in the codes' own dtype -- no sort;
* a longer prefix becomes a matrix of int64 keys ``row | code | position``, sorted row by row
  (numpy's SIMD sort), which sorts the whole block: equal neighbouring codes are repeats, the
  first of a run is the first occurrence, and each judged document is found by a branchless
  vectorised binary search in its row.

A ranking whose prefix collapsed to fewer distinct documents than it needs is scanned again
twice as deep; rankings are grouped by the width they need, so one long ranking never pads a
block of short ones.  No JIT: a numba kernel with one hash probe per raw id was measured 15x
slower than this on 1M x 100 ids (the probes miss the cache), and would add a compile on first
use.  ``benchmarks/engine.py`` measures the core against a plain-numpy floor, goldeneval's
per-question path, pytrec-eval and ranx.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from goldeneval.retrieval.columnar.rows import BoolArray, CodeArray, Int64Array, Rankings

__all__ = ["Scan", "collapse", "new_scan", "run_scan"]

_CHUNK_ELEMENTS = 1 << 18
"""Keys sorted per block (2 MiB of int64): a block stays in cache while it is sorted and searched."""

_NARROW_WIDTH = 16
"""Prefixes up to this many raw ids are scanned by pairwise comparison instead of sorting."""
_NARROW_LOOKUPS = 16
"""...as long as no question in the block has more judged documents to locate than this."""
_EMPTY: Int64Array = np.empty(0, dtype=np.int64)


@dataclass
class Scan:
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


def new_scan(
    rankings: Rankings,
    target: Int64Array,
    lookup_offsets: Int64Array,
    lookup_question: Int64Array,
    lookup_codes: CodeArray,
    keep_limit: int | None,
) -> Scan:
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
    return Scan(
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


def _keys(scan: Scan, start: int, rows: Int64Array, width: int, pbits: int) -> Int64Array:
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


def _scan_block(scan: Scan, start: int, rows: Int64Array, width: int) -> Int64Array:
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
    scan: Scan,
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


def _kept_whole(scan: Scan, rows: Int64Array, done_rows: Int64Array, unrepeated: BoolArray) -> bool:
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
    scan: Scan,
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


def _scan_narrow(scan: Scan, start: int, rows: Int64Array, width: int) -> Int64Array | None:
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


def run_scan(scan: Scan) -> None:
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
    scan = new_scan(rankings, target, no_lookups, nothing, nothing, keep_limit)
    run_scan(scan)
    if scan.keep is None:
        # Nothing repeats and nothing lies past the limit: the rankings are their own collapse,
        # and the run keeps one array of codes, not two equal ones.
        return rankings
    offsets = np.zeros(len(rankings) + 1, dtype=np.int64)
    np.cumsum(np.minimum(scan.depth, keep_limit), out=offsets[1:])
    return Rankings(offsets, rankings.codes[scan.keep])
