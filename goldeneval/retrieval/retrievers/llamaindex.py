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
    shallow_copy_with,
)
from goldeneval.retrieval.retrievers.base import RetrieverContext, option_label
from goldeneval.retrieval.retrievers.external import SearchError
from goldeneval.retrieval.retrievers.options import check_known_options

__all__ = ["LLAMAINDEX_OPTIONS", "LlamaIndexRetriever", "build"]

RETRIEVER_ID = "goldeneval.llamaindex"
LLAMAINDEX_OPTIONS = FRAMEWORK_OPTIONS
DEFAULT_ID_FIELD = "id"
TOP_K_ATTRIBUTE = "similarity_top_k"


def _settable_top_k(retriever: Any) -> bool:
    """Whether ``retriever`` has an integer ``similarity_top_k`` that a copy can set."""
    if not isinstance(getattr(retriever, TOP_K_ATTRIBUTE, None), int):
        return False
    declared = getattr(type(retriever), TOP_K_ATTRIBUTE, None)
    return not isinstance(declared, property) or declared.fset is not None


class LlamaIndexRetriever(FrameworkRetriever):
    """A LlamaIndex ``BaseRetriever``, asked once per question (module docstring)."""

    fallback_words = "ref_doc_id or node_id"

    def __init__(
        self,
        retriever: Any,
        *,
        id_field: str = DEFAULT_ID_FIELD,
        strict_field: bool = False,
        provenance: Callable[[], Provenance] | None = None,
    ) -> None:
        super().__init__(retriever, id_field=id_field, strict_field=strict_field, provenance=provenance)
        self.limit_by = TOP_K_ATTRIBUTE if _settable_top_k(retriever) else "truncate"
        """How the limit reaches the retriever: ``similarity_top_k`` or ``truncate``."""
        self._copies: LimitedCopies[Any] = LimitedCopies(
            retriever, lambda original, limit: shallow_copy_with(original, TOP_K_ATTRIBUTE, limit)
        )

    def retrieve(self, question: str, limit: int) -> list[str]:
        if limit <= 0:
            return []
        asked = self._copies.get(limit) if self.limit_by == TOP_K_ATTRIBUTE else self.retriever
        nodes = asked.retrieve(question)
        if not isinstance(nodes, (list, tuple)):
            raise SearchError(f"retrieve() returned {type(nodes).__name__}, not a list of NodeWithScore")
        return [self._id(position, item) for position, item in enumerate(nodes[:limit])]

    def _id(self, position: int, item: Any) -> str:
        node = getattr(item, "node", item)
        hit = f"node {position}"
        fallbacks = tuple((name, getattr(node, name, None), hit) for name in ("ref_doc_id", "node_id"))
        return self._document_id(getattr(node, "metadata", None), hit, fallbacks)


def build(context: RetrieverContext) -> LlamaIndexRetriever:
    """Entry-point factory for ``goldeneval.llamaindex``: option ``factory`` is required."""
    check_known_options(context, RETRIEVER_ID, LLAMAINDEX_OPTIONS)
    id_field, strict = id_field_option(context, RETRIEVER_ID, DEFAULT_ID_FIELD)
    revisions = framework_revisions(context, RETRIEVER_ID)
    retrievers = require_extra(RETRIEVER_ID, "llama_index.core.retrievers", "llamaindex")
    factory, built = load_user_factory(context, RETRIEVER_ID, "my_module:make_retriever")
    if not isinstance(built, retrievers.BaseRetriever):
        raise RetrieverError(
            f"{option_label('factory', RETRIEVER_ID)}: {factory}() returned {type(built).__module__}."
            f"{type(built).__qualname__}, not a llama_index.core.retrievers.BaseRetriever"
        )
    provenance = framework_provenance(RETRIEVER_ID, factory, built, revisions, "llama-index-core")
    return LlamaIndexRetriever(built, id_field=id_field, strict_field=strict, provenance=provenance)
