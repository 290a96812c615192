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

from collections.abc import Callable
from typing import Any

from goldeneval.core.errors import RetrieverError
from goldeneval.core.provenance import Provenance
from goldeneval.retrieval.retrievers.adapters import (
    FRAMEWORK_OPTIONS,
    FrameworkRetriever,
    LimitedCopies,
    framework_provenance,
    framework_revisions,
    id_field_option,
    load_user_factory,
    require_extra,
)
from goldeneval.retrieval.retrievers.base import RetrieverContext, option_label
from goldeneval.retrieval.retrievers.external import SearchError
from goldeneval.retrieval.retrievers.options import check_known_options

__all__ = ["LANGCHAIN_OPTIONS", "LangChainRetriever", "build"]

RETRIEVER_ID = "goldeneval.langchain"
LANGCHAIN_OPTIONS = FRAMEWORK_OPTIONS
DEFAULT_ID_FIELD = "id"


class LangChainRetriever(FrameworkRetriever):
    """A ``BaseRetriever``, asked once per question; the limit as LangChain allows (module docstring)."""

    fallback_words = "Document.id"

    def __init__(
        self,
        retriever: Any,
        *,
        id_field: str = DEFAULT_ID_FIELD,
        strict_field: bool = False,
        provenance: Callable[[], Provenance] | None = None,
    ) -> None:
        from langchain_core.vectorstores import VectorStoreRetriever

        super().__init__(retriever, id_field=id_field, strict_field=strict_field, provenance=provenance)
        self.limit_by: str
        """How the limit reaches the retriever: ``search_kwargs``, ``k`` or ``truncate``."""
        if isinstance(retriever, VectorStoreRetriever):
            self.limit_by = "search_kwargs"
        elif "k" in getattr(type(retriever), "model_fields", {}):
            self.limit_by = "k"
        else:
            self.limit_by = "truncate"
        self._copies: LimitedCopies[Any] = LimitedCopies(retriever, _with_k)

    def retrieve(self, question: str, limit: int) -> list[str]:
        if limit <= 0:
            return []
        if self.limit_by == "search_kwargs":
            documents = self.retriever.invoke(question, k=limit)
        elif self.limit_by == "k":
            documents = self._copies.get(limit).invoke(question)
        else:
            documents = self.retriever.invoke(question)
        if not isinstance(documents, (list, tuple)):
            raise SearchError(f"invoke() returned {type(documents).__name__}, not a list of Documents")
        return [self._id(position, item) for position, item in enumerate(documents[:limit])]

    def _id(self, position: int, item: Any) -> str:
        hit = f"document {position}"
        fallback = ("id", getattr(item, "id", None), f"{hit}: Document.id")
        return self._document_id(getattr(item, "metadata", None), hit, (fallback,))


def _with_k(retriever: Any, limit: int) -> Any:
    return retriever.model_copy(update={"k": limit})


def build(context: RetrieverContext) -> LangChainRetriever:
    """Entry-point factory for ``goldeneval.langchain``: option ``factory`` is required."""
    check_known_options(context, RETRIEVER_ID, LANGCHAIN_OPTIONS)
    id_field, strict = id_field_option(context, RETRIEVER_ID, DEFAULT_ID_FIELD)
    revisions = framework_revisions(context, RETRIEVER_ID)
    retrievers = require_extra(RETRIEVER_ID, "langchain_core.retrievers", "langchain")
    factory, built = load_user_factory(context, RETRIEVER_ID, "my_module:make_retriever")
    if not isinstance(built, retrievers.BaseRetriever):
        raise RetrieverError(
            f"{option_label('factory', RETRIEVER_ID)}: {factory}() returned {type(built).__module__}."
            f"{type(built).__qualname__}, not a langchain_core.retrievers.BaseRetriever"
        )
    provenance = framework_provenance(RETRIEVER_ID, factory, built, revisions, "langchain-core")
    return LangChainRetriever(built, id_field=id_field, strict_field=strict, provenance=provenance)
