"""``goldeneval.langchain``: measure a team's LangChain retriever as it is.

``--option factory=my_module:make_retriever`` names the team's code: it is imported, called
with no arguments, and must return a ``langchain_core.retrievers.BaseRetriever`` (anything
else is one line saying what it returned).  Each question is one ``invoke(question)``.

The document id of each returned ``Document`` is ``metadata[id_field]``.  Without option
``id_field`` the field is ``id``, and a document without it falls back to ``Document.id``
(what vector stores fill in); a field the user names is required of every document, so that
a typo is an error rather than a run scoring 0.  A document without an id, or with one that is
neither a string nor an integer, is that question's error.

The limit is passed where LangChain has a setting for it: a ``VectorStoreRetriever`` gets
``invoke(question, k=limit)`` (its ``search_kwargs`` updated for that call), a retriever with a
``k`` field is asked through a copy with ``k=limit`` (one copy per limit, the team's object
unchanged); any other retriever returns what it returns, and the ranking is cut at the limit.

Provenance: the pipeline identity is the factory and the class it returned; the corpus and
model revisions are declared by ``corpus_revision`` / ``model_revision``, else unknown.
``langchain-core`` comes with the ``langchain`` extra and is imported only when the retriever
is built.
"""

from __future__ import annotations

from typing import Any

from goldeneval.retrieval.retrievers.adapters import (
    FRAMEWORK_OPTIONS,
    FrameworkRetriever,
    build_framework_retriever,
)
from goldeneval.retrieval.retrievers.base import RetrieverContext

__all__ = ["LANGCHAIN_OPTIONS", "LangChainRetriever", "build"]

RETRIEVER_ID = "goldeneval.langchain"
LANGCHAIN_OPTIONS = FRAMEWORK_OPTIONS


class LangChainRetriever(FrameworkRetriever):
    """A ``BaseRetriever``, asked once per question; the limit as LangChain allows (module docstring)."""

    fallback_words = "Document.id"
    asked_with = "invoke()"
    result_words = "Documents"

    def _limit_setting(self, retriever: Any) -> str:
        """``search_kwargs``, ``k`` or ``truncate``."""
        from langchain_core.vectorstores import VectorStoreRetriever

        if isinstance(retriever, VectorStoreRetriever):
            return "search_kwargs"
        if "k" in getattr(type(retriever), "model_fields", {}):
            return "k"
        return "truncate"

    def _with_limit(self, retriever: Any, limit: int) -> Any:
        return retriever.model_copy(update={"k": limit})

    def _ask(self, question: str, limit: int) -> Any:
        if self.limit_by == "search_kwargs":
            return self.retriever.invoke(question, k=limit)
        if self.limit_by == "k":
            return self._copies.get(limit).invoke(question)
        return self.retriever.invoke(question)

    def _id(self, position: int, item: Any) -> str:
        hit = f"document {position}"
        fallback = ("id", getattr(item, "id", None), f"{hit}: Document.id")
        return self._document_id(getattr(item, "metadata", None), hit, (fallback,))


def build(context: RetrieverContext) -> LangChainRetriever:
    """Entry-point factory for ``goldeneval.langchain``: option ``factory`` is required."""
    return build_framework_retriever(
        context, RETRIEVER_ID, LangChainRetriever, "langchain_core.retrievers", "langchain", "langchain-core"
    )
