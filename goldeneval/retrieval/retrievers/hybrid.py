"""``goldeneval.hybrid``: reciprocal rank fusion of ``goldeneval.lexical`` and ``goldeneval.dense``.

Each retriever ranks ``depth`` results (default 100, at least the requested limit); the dense
ranking is collapsed to distinct documents (its best chunk); the two document rankings are
fused by :func:`~goldeneval.retrieval.retrievers.fusion.reciprocal_rank_fusion`.  The result is
document ids.

Options: ``rrf_k`` (default 60), ``lexical_weight`` and ``dense_weight`` (default 1 each;
finite numbers >= 0, not both 0), ``depth`` (an integer >= 1); the lexical options ``k1``,
``b``; the dense options ``model``, ``chunking``, ``chunk_size``, ``chunk_overlap``,
``batch_size``.  Every option is checked before an index is built or a model loads.
"""

from __future__ import annotations

from collections.abc import Sequence

from goldeneval.core.errors import RetrieverError
from goldeneval.core.provenance import Provenance
from goldeneval.retrieval.retrievers.base import RetrieverContext, execution_revision
from goldeneval.retrieval.retrievers.dense import DENSE_OPTIONS, DenseRetriever, dense_settings, require_dense_extra
from goldeneval.retrieval.retrievers.fusion import DEFAULT_RRF_K, reciprocal_rank_fusion
from goldeneval.retrieval.retrievers.lexical import BM25_OPTIONS, LexicalRetriever, bm25_parameters
from goldeneval.retrieval.retrievers.options import check_known_options, float_option, int_option

__all__ = ["DEFAULT_DEPTH", "HYBRID_OPTIONS", "HybridRetriever", "build"]

RETRIEVER_ID = "goldeneval.hybrid"
DEFAULT_DEPTH = 100
HYBRID_OPTIONS = ("rrf_k", "lexical_weight", "dense_weight", "depth", *BM25_OPTIONS, *DENSE_OPTIONS)


def _check_fusion(k: float, lexical_weight: float, dense_weight: float, depth: int) -> None:
    reciprocal_rank_fusion([[], []], k=k, weights=[lexical_weight, dense_weight])  # checks k and the weights
    if lexical_weight + dense_weight <= 0:
        raise RetrieverError(
            f"retriever {RETRIEVER_ID!r}: at least one of lexical_weight and dense_weight must be above 0"
        )
    if depth < 1:
        raise RetrieverError(f"retriever {RETRIEVER_ID!r}: depth must be at least 1, got {depth}")


class HybridRetriever:
    """Lexical and dense rankings fused by reciprocal rank."""

    def __init__(
        self,
        lexical: LexicalRetriever,
        dense: DenseRetriever,
        *,
        k: float = DEFAULT_RRF_K,
        lexical_weight: float = 1.0,
        dense_weight: float = 1.0,
        depth: int = DEFAULT_DEPTH,
    ) -> None:
        if lexical.corpus_revision != dense.corpus_revision:
            raise RetrieverError("hybrid: the lexical and dense retrievers index different corpora")
        _check_fusion(k, lexical_weight, dense_weight, depth)  # before the first question
        self.lexical, self.dense = lexical, dense
        self.k, self.weights, self.depth = k, (lexical_weight, dense_weight), depth

    def rankings(self, question: str, depth: int) -> tuple[list[str], list[str]]:
        """The lexical and the dense document ranking of ``question``, ``depth`` deep."""
        lexical = list(self.lexical.retrieve(question, depth))
        dense = self.dense.rank_documents(question, depth)
        return lexical, dense

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        if limit <= 0:
            return []
        fused = reciprocal_rank_fusion(self.rankings(question, max(limit, self.depth)), k=self.k, weights=self.weights)
        return [doc_id for doc_id, _ in fused[:limit]]

    def pipeline_identity(self) -> str:
        lexical = self.lexical.provenance().pipeline_identity
        weights = ":".join(f"{w:g}" for w in self.weights)
        return (
            f"{RETRIEVER_ID}/rrf(k={self.k:g},weights={weights},depth={self.depth})"
            f"[{lexical};{self.dense.pipeline_identity()}]"
        )

    def provenance(self) -> Provenance:
        return Provenance(
            corpus_revision=self.dense.corpus_revision,
            model_revision=self.dense.model_revision,
            chunking_identity=self.dense.chunking.identity,
            pipeline_identity=self.pipeline_identity(),
            execution_revision=execution_revision("bm25s", "sentence-transformers", "transformers", "torch"),
        )


def build(context: RetrieverContext) -> HybridRetriever:
    """Entry-point factory for ``goldeneval.hybrid``: every option is checked, and the dense
    extra looked for, before the lexical index is built or the model loads."""
    check_known_options(context, RETRIEVER_ID, HYBRID_OPTIONS)
    k1, b = bm25_parameters(context, RETRIEVER_ID)
    dense = dense_settings(context, RETRIEVER_ID)
    k = float_option(context, "rrf_k", DEFAULT_RRF_K, retriever_id=RETRIEVER_ID)
    lexical_weight = float_option(context, "lexical_weight", 1.0, retriever_id=RETRIEVER_ID)
    dense_weight = float_option(context, "dense_weight", 1.0, retriever_id=RETRIEVER_ID)
    depth = int_option(context, "depth", minimum=1, retriever_id=RETRIEVER_ID) or DEFAULT_DEPTH
    _check_fusion(k, lexical_weight, dense_weight, depth)
    corpus = context.require_corpus(RETRIEVER_ID)
    require_dense_extra(RETRIEVER_ID)
    return HybridRetriever(
        LexicalRetriever(corpus, context.cache_dir, k1=k1, b=b),
        dense.build(corpus, context.cache_dir),
        k=k,
        lexical_weight=lexical_weight,
        dense_weight=dense_weight,
        depth=depth,
    )
