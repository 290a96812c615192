"""Retrievers: the contract, the registry and the built-in implementations."""

from goldeneval.retrieval.retrievers.base import (
    DEFAULT_CHUNK_SEPARATOR,
    Retriever,
    RetrieverContext,
    RetrieverFactory,
    document_id_mapper,
)
from goldeneval.retrieval.retrievers.registry import build_retriever, known_retrievers, load_factory

__all__ = [
    "DEFAULT_CHUNK_SEPARATOR",
    "Retriever",
    "RetrieverContext",
    "RetrieverFactory",
    "build_retriever",
    "document_id_mapper",
    "known_retrievers",
    "load_factory",
]
