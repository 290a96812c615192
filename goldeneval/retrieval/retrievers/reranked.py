"""``goldeneval.reranked``: a second stage that re-orders the first stage's top N.

The first stage is ``goldeneval.lexical``.  Its best ``candidates`` documents (default 100)
are re-scored and re-ordered; anything the first stage ranks below them keeps its order
after them.  Two scorers:

* **dense** (default): the cosine similarity of question and document under
  ``goldeneval.dense``'s model — the best of the document's chunks — from the embedding
  cache, so re-scoring costs one query encoding;
* **cross-encoder**, with option ``cross_encoder=PATH`` (a local sentence-transformers
  ``CrossEncoder`` folder): the model reads each (question, chunk) pair; a document scores
  its best chunk.

Equal scores keep the first stage's order.  Options: ``candidates`` (an integer >= 1),
``cross_encoder``, ``k1``, ``b`` (first stage), ``chunking``, ``chunk_size``,
``chunk_overlap``, ``batch_size`` and, for dense re-scoring, ``model``.  Every option is
checked before an index is built or a model loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from goldeneval.core.corpus import Corpus
from goldeneval.core.errors import RetrieverError
from goldeneval.core.provenance import Provenance
from goldeneval.retrieval.retrievers.base import RetrieverContext, execution_revision
from goldeneval.retrieval.retrievers.chunking import ChunkingStrategy, WholeDocument
from goldeneval.retrieval.retrievers.dense import (
    DEFAULT_BATCH_SIZE,
    DENSE_OPTIONS,
    DenseRetriever,
    dense_settings,
    model_revision,
    quiet_offline_hub,
    require_dense_extra,
)
from goldeneval.retrieval.retrievers.lexical import BM25_OPTIONS, LexicalRetriever, bm25_parameters
from goldeneval.retrieval.retrievers.options import check_known_options, int_option, path_option

if TYPE_CHECKING:
    from sentence_transformers import CrossEncoder

__all__ = [
    "DEFAULT_CANDIDATES",
    "RERANKED_OPTIONS",
    "CrossEncoderScorer",
    "DenseScorer",
    "RerankedRetriever",
    "Scorer",
    "build",
]

RETRIEVER_ID = "goldeneval.reranked"
DEFAULT_CANDIDATES = 100
RERANKED_OPTIONS = ("candidates", "cross_encoder", *BM25_OPTIONS, *DENSE_OPTIONS)


class Scorer(Protocol):
    """Scores candidate documents for a question; declares what it is for provenance."""

    name: str
    model_revision: str
    chunking_identity: str
    packages: tuple[str, ...]

    def scores(self, question: str, document_ids: Sequence[str]) -> dict[str, float]: ...


class DenseScorer:
    """Cosine similarity under a bi-encoder, from its (cached) chunk embeddings."""

    name: str = "dense-cosine"
    packages: tuple[str, ...] = ("sentence-transformers", "transformers", "torch")

    def __init__(self, dense: DenseRetriever) -> None:
        self.dense = dense
        self.model_revision = dense.model_revision
        self.chunking_identity = dense.chunking.identity

    def scores(self, question: str, document_ids: Sequence[str]) -> dict[str, float]:
        return self.dense.document_scores(question, document_ids)


def load_cross_encoder(folder: Path) -> CrossEncoder:
    quiet_offline_hub()
    from sentence_transformers import CrossEncoder

    try:
        model: CrossEncoder = CrossEncoder(str(folder), local_files_only=True)
    except Exception as exc:  # any loading failure is the model folder's fault
        raise RetrieverError(f"cross-encoder {folder}: cannot be loaded: {exc}") from None
    return model


class CrossEncoderScorer:
    """A sentence-transformers CrossEncoder over (question, chunk) pairs; best chunk wins."""

    name: str = "cross-encoder"
    packages: tuple[str, ...] = ("sentence-transformers", "transformers", "torch")

    def __init__(
        self,
        folder: Path,
        corpus: Corpus,
        *,
        chunking: ChunkingStrategy | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        require_dense_extra(RETRIEVER_ID)
        self.model_revision = model_revision(folder)
        chunking = chunking or WholeDocument()
        self.chunking_identity = chunking.identity
        self.batch_size = batch_size
        self._model = load_cross_encoder(folder)
        self._passages = {doc.id: chunking.passages(doc) for doc in corpus}

    def scores(self, question: str, document_ids: Sequence[str]) -> dict[str, float]:
        owners: list[str] = []
        pairs: list[tuple[str, str]] = []
        for doc_id in document_ids:
            for passage in self._passages.get(doc_id, ()):
                owners.append(doc_id)
                pairs.append((question, passage))
        if not pairs:
            return {}
        predicted = np.asarray(
            self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False),
            dtype=np.float64,
        ).reshape(len(pairs), -1)[:, -1]
        best: dict[str, float] = {}
        for doc_id, score in zip(owners, predicted, strict=True):
            best[doc_id] = max(best.get(doc_id, -np.inf), float(score))
        return best


class RerankedRetriever:
    """The first stage's top ``candidates`` documents, re-ordered by ``scorer``."""

    def __init__(self, first_stage: LexicalRetriever, scorer: Scorer, *, candidates: int = DEFAULT_CANDIDATES):
        if candidates < 1:
            raise RetrieverError(f"retriever {RETRIEVER_ID!r}: candidates must be at least 1, got {candidates}")
        self.first_stage, self.scorer, self.candidates = first_stage, scorer, candidates

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        if limit <= 0:
            return []
        ranked = list(self.first_stage.retrieve(question, max(limit, self.candidates)))
        head, tail = ranked[: self.candidates], ranked[self.candidates :]
        scores = self.scorer.scores(question, head)
        position = {doc_id: rank for rank, doc_id in enumerate(head)}
        reordered = sorted(head, key=lambda doc_id: (-scores.get(doc_id, -np.inf), position[doc_id]))
        return [*reordered, *tail][:limit]

    def pipeline_identity(self) -> str:
        first = self.first_stage.provenance().pipeline_identity
        return f"{RETRIEVER_ID}/rerank(candidates={self.candidates},scorer={self.scorer.name})[{first}]"

    def provenance(self) -> Provenance:
        return Provenance(
            corpus_revision=self.first_stage.corpus_revision,
            model_revision=self.scorer.model_revision,
            chunking_identity=self.scorer.chunking_identity,
            pipeline_identity=self.pipeline_identity(),
            execution_revision=execution_revision("bm25s", *self.scorer.packages),
        )


def build(context: RetrieverContext) -> RerankedRetriever:
    """Entry-point factory for ``goldeneval.reranked``: every option is checked, and the dense
    extra looked for, before the lexical index is built or a model loads."""
    check_known_options(context, RETRIEVER_ID, RERANKED_OPTIONS)
    k1, b = bm25_parameters(context, RETRIEVER_ID)
    candidates = int_option(context, "candidates", minimum=1, retriever_id=RETRIEVER_ID) or DEFAULT_CANDIDATES
    cross_encoder = path_option(context, "cross_encoder", retriever_id=RETRIEVER_ID)
    if cross_encoder is not None and "model" in context.options:
        raise RetrieverError(
            f"retriever {RETRIEVER_ID!r}: option model is the dense re-scoring model; with cross_encoder=PATH drop it"
        )
    dense = dense_settings(context, RETRIEVER_ID)
    corpus = context.require_corpus(RETRIEVER_ID)
    require_dense_extra(RETRIEVER_ID)
    first_stage = LexicalRetriever(corpus, context.cache_dir, k1=k1, b=b)
    scorer: Scorer
    if cross_encoder is None:
        scorer = DenseScorer(dense.build(corpus, context.cache_dir))
    else:
        scorer = CrossEncoderScorer(cross_encoder, corpus, chunking=dense.chunking, batch_size=dense.batch_size)
    return RerankedRetriever(first_stage, scorer, candidates=candidates)
