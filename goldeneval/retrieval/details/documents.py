"""A run's documents, dictionary-coded and packed: the ``questions.documents`` of formats 4 and 5.

Apart from the question columns because it is a codec of its own: every question's distinct
documents, best first, are codes into one vocabulary, each code stored in the fewest bytes that
hold the largest, the bytes zstd-compressed and base64-encoded into one JSON string.  A run of
100,000 questions x 100 documents is so written and read without a Python object per document,
decoded whole only when asked, and otherwise a block at a time.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
from pydantic import Field, PrivateAttr

from goldeneval.core.errors import StoreError
from goldeneval.retrieval.details.base import DetailRecord

__all__ = ["DocumentColumns", "code_width"]


_CODEC = "zstd"
"""How the packed codes are compressed (pyarrow's codec: part of every pyarrow wheel)."""


def code_width(vocabulary_size: int) -> int:
    """Bytes a stored code takes: the fewest that hold the largest (1 to 4)."""
    return max(1, ((max(vocabulary_size - 1, 0)).bit_length() + 7) // 8)


def _low_bytes(width: int) -> np.dtype[np.void]:
    """A 32-bit little-endian code seen as its ``width`` low bytes: one structured field at
    offset 0, so packing and unpacking are single numpy copies, not a strided byte loop."""
    return np.dtype({"names": ["low"], "formats": [f"V{width}"], "offsets": [0], "itemsize": 4})


class DocumentColumns(DetailRecord):
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
