"""Finding a retriever factory by id: entry points first, then an import path.

Retrievers are registered under the entry-point group ``goldeneval.retrievers`` with ids
like ``goldeneval.lexical``; any other factory can be named as ``package.module:factory``.
"""

from __future__ import annotations

from goldeneval.core.errors import RetrieverError
from goldeneval.core.plugins import PluginKind
from goldeneval.retrieval.retrievers.base import Retriever, RetrieverContext, RetrieverFactory

__all__ = ["RETRIEVERS", "RETRIEVERS_ENTRY_POINT_GROUP", "build_retriever", "known_retrievers", "load_factory"]

RETRIEVERS_ENTRY_POINT_GROUP = "goldeneval.retrievers"


RETRIEVERS: PluginKind[RetrieverContext, Retriever] = PluginKind(
    group=RETRIEVERS_ENTRY_POINT_GROUP, noun="retriever", method="retrieve(question, limit)", error=RetrieverError
)


def known_retrievers() -> list[str]:
    return RETRIEVERS.known()


def load_factory(retriever_id: str) -> RetrieverFactory:
    return RETRIEVERS.load_factory(retriever_id)


def build_retriever(retriever_id: str, context: RetrieverContext) -> Retriever:
    """Build the retriever; a factory that raises is invalid input naming the retriever."""
    return RETRIEVERS.build(retriever_id, context)
