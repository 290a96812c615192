"""The embedding cache: never encode the same chunk with the same model twice.

One Parquet file per (model revision, chunking identity) under ``<cache dir>/embeddings/``,
one row per chunk text: ``model_revision``, ``chunking_identity``, ``text_sha256`` and the
``embedding`` (float32).  The key is (model revision, chunking identity, SHA-256 of the chunk
text), so

* a rerun with nothing changed encodes nothing;
* a changed document re-encodes only its own chunks (the others' texts are unchanged);
* a changed model or chunking looks in another file and re-encodes everything.

A write goes to a temporary file in the same folder and is renamed over the old one, so a
reader sees the old file or the new one, never half of one.  Two processes encoding at once
both write whole files; the later rename wins and the other's new rows are simply encoded
again next time.  Rows of texts no longer in any corpus stay (another corpus may use them);
delete the folder to reclaim the space.  An unreadable file counts as an empty cache.

The files are plain Parquet, readable with DuckDB:
``SELECT count(*) FROM '<cache dir>/embeddings/*.parquet'``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from goldeneval.core.errors import RetrieverError

__all__ = ["CacheCounters", "EmbeddingCache", "text_hash"]

CACHE_FORMAT = "embeddings-v1"
Matrix = npt.NDArray[np.float32]
Encoder = Callable[[list[str]], Matrix]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class CacheCounters:
    """Chunks served so far: ``encoded`` by the model, ``cached`` from the Parquet file."""

    encoded: int = 0
    cached: int = 0


class EmbeddingCache:
    """Embeddings of chunk texts for one (model revision, chunking identity)."""

    def __init__(self, cache_dir: Path | None, model_revision: str, chunking_identity: str) -> None:
        self.model_revision = model_revision
        self.chunking_identity = chunking_identity
        self.counters = CacheCounters()
        key = f"{CACHE_FORMAT}\n{model_revision}\n{chunking_identity}"
        name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32] + ".parquet"
        self.path = cache_dir / "embeddings" / name if cache_dir is not None else None

    def embed(self, texts: Sequence[str], encode: Encoder) -> Matrix:
        """The embedding of every text, in order; only texts the cache lacks go to ``encode``.

        A text repeated within ``texts`` is encoded once.
        """
        hashes = [text_hash(text) for text in texts]
        known_hashes, known = self._load()
        row_of = {digest: row for row, digest in enumerate(known_hashes)}
        missing: dict[str, str] = {}
        for digest, text in zip(hashes, texts, strict=True):
            if digest not in row_of:
                missing.setdefault(digest, text)
        if missing:
            fresh = self._checked(encode(list(missing.values())), len(missing), known)
            for offset, digest in enumerate(missing, start=len(known_hashes)):
                row_of[digest] = offset
            known_hashes = [*known_hashes, *missing]
            known = fresh if known.shape[0] == 0 else np.concatenate([known, fresh])
            self._save(known_hashes, known)
        encoded = sum(1 for digest in hashes if digest in missing)
        self.counters.encoded += encoded
        self.counters.cached += len(hashes) - encoded
        if not hashes:
            return np.zeros((0, known.shape[1] if known.ndim == 2 else 0), dtype=np.float32)
        return known[[row_of[digest] for digest in hashes]]

    def _checked(self, fresh: Matrix, expected_rows: int, known: Matrix) -> Matrix:
        fresh = np.asarray(fresh, dtype=np.float32)
        if fresh.ndim != 2 or fresh.shape[0] != expected_rows:
            raise RetrieverError(f"embedding cache: the model returned shape {fresh.shape} for {expected_rows} texts")
        if known.shape[0] and fresh.shape[1] != known.shape[1]:
            raise RetrieverError(
                f"embedding cache {self.path}: cached embeddings have {known.shape[1]} dimensions, "
                f"the model returned {fresh.shape[1]}; delete the file to rebuild it"
            )
        return fresh

    def _load(self) -> tuple[list[str], Matrix]:
        empty: tuple[list[str], Matrix] = ([], np.zeros((0, 0), dtype=np.float32))
        if self.path is None or not self.path.is_file():
            return empty
        try:
            table = pq.read_table(self.path)
            hashes = [str(h) for h in table.column("text_sha256").to_pylist()]
            revisions = set(table.column("model_revision").to_pylist())
            chunkings = set(table.column("chunking_identity").to_pylist())
            column = table.column("embedding").combine_chunks()
            flat = column.flatten().to_numpy(zero_copy_only=False)
        except (OSError, KeyError, pa.ArrowException):
            return empty
        if not hashes or (revisions, chunkings) != ({self.model_revision}, {self.chunking_identity}):
            return empty
        matrix = np.asarray(flat, dtype=np.float32).reshape(len(hashes), -1)
        return hashes, matrix

    def _save(self, hashes: list[str], matrix: Matrix) -> None:
        if self.path is None:
            return
        rows, dims = matrix.shape
        table = pa.table(
            {
                "model_revision": pa.array([self.model_revision] * rows, pa.string()).dictionary_encode(),
                "chunking_identity": pa.array([self.chunking_identity] * rows, pa.string()).dictionary_encode(),
                "text_sha256": pa.array(hashes, pa.string()),
                "embedding": pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1), pa.float32()), dims),
            }
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, staging = tempfile.mkstemp(dir=self.path.parent, prefix=".writing-", suffix=".parquet")
        os.close(handle)
        try:
            pq.write_table(table, staging)
            os.replace(staging, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(staging)
            raise
