"""``goldeneval.llamaindex``: measure a team's LlamaIndex retriever as it is.

``--option factory=my_module:make_retriever`` names the team's code: it is imported, called
with no arguments, and must return a ``llama_index.core.retrievers.BaseRetriever`` (an index's
``as_retriever()``, a ``VectorIndexRetriever``, a BM25 or fusion retriever; anything else is
one line saying what it returned).  Each question is one ``retrieve(question)``, which returns
``NodeWithScore`` objects, best first.

The document id of each node is ``node.metadata[id_field]``.  Without option ``id_field`` the
field is ``id``, and a node without it falls back to ``node.ref_doc_id`` (the id of the
``Document`` it was parsed from: what golden sets label), then to ``node.node_id`` (a node
built directly, without a source document); a field the user names is required of every node,
so that a typo is an error rather than a run scoring 0.

The limit is passed where LlamaIndex has a setting for it: a retriever with a settable
``similarity_top_k`` (``VectorIndexRetriever``, most vector and BM25 retrievers) is asked
through a shallow copy with ``similarity_top_k=limit`` (one copy per limit, the team's object
unchanged, the index shared); any other retriever returns what it returns, and the ranking is
cut at the limit.

Provenance: the pipeline identity is the factory and the class it returned; the corpus and
model revisions are declared by ``corpus_revision`` / ``model_revision``, else unknown.
``llama-index-core`` comes with the ``llamaindex`` extra and is imported only when the retriever
is built.  goldeneval never configures LlamaIndex's global ``Settings``: the team's factory
sets its embedding model (and ``llm=None`` when it needs none), so nothing calls a hosted API
unless the team's code does.
"""

from __future__ import annotations

from typing import Any

from goldeneval.retrieval.retrievers.adapters import (
    FRAMEWORK_OPTIONS,
    FrameworkRetriever,
    build_framework_retriever,
    shallow_copy_with,
)
from goldeneval.retrieval.retrievers.base import RetrieverContext

__all__ = ["LLAMAINDEX_OPTIONS", "LlamaIndexRetriever", "build"]

RETRIEVER_ID = "goldeneval.llamaindex"
LLAMAINDEX_OPTIONS = FRAMEWORK_OPTIONS
TOP_K_ATTRIBUTE = "similarity_top_k"


class LlamaIndexRetriever(FrameworkRetriever):
    """A LlamaIndex ``BaseRetriever``, asked once per question (module docstring)."""

    fallback_words = "ref_doc_id or node_id"
    asked_with = "retrieve()"
    result_words = "NodeWithScore"

    def _limit_setting(self, retriever: Any) -> str:
        """``similarity_top_k`` where the retriever has an integer one that a copy can set, else ``truncate``."""
        if not isinstance(getattr(retriever, TOP_K_ATTRIBUTE, None), int):
            return "truncate"
        declared = getattr(type(retriever), TOP_K_ATTRIBUTE, None)
        settable = not isinstance(declared, property) or declared.fset is not None
        return TOP_K_ATTRIBUTE if settable else "truncate"

    def _with_limit(self, retriever: Any, limit: int) -> Any:
        return shallow_copy_with(retriever, TOP_K_ATTRIBUTE, limit)

    def _ask(self, question: str, limit: int) -> Any:
        asked = self._copies.get(limit) if self.limit_by == TOP_K_ATTRIBUTE else self.retriever
        return asked.retrieve(question)

    def _id(self, position: int, item: Any) -> str:
        node = getattr(item, "node", item)
        hit = f"node {position}"
        fallbacks = tuple((name, getattr(node, name, None), hit) for name in ("ref_doc_id", "node_id"))
        return self._document_id(getattr(node, "metadata", None), hit, fallbacks)


def build(context: RetrieverContext) -> LlamaIndexRetriever:
    """Entry-point factory for ``goldeneval.llamaindex``: option ``factory`` is required."""
    return build_framework_retriever(
        context, RETRIEVER_ID, LlamaIndexRetriever, "llama_index.core.retrievers", "llamaindex", "llama-index-core"
    )
