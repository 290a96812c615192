"""The revisions an external retriever's options declare.

goldeneval cannot see inside a system it measures from outside (a search program, an HTTP
service, a team's LangChain or LlamaIndex chain), so the corpus and model revisions of its
provenance are what options ``corpus_revision`` and ``model_revision`` say, else unknown.
"""

from __future__ import annotations

from goldeneval.retrieval.retrievers.base import RetrieverContext
from goldeneval.retrieval.retrievers.external import REVISION_OPTIONS, declared_revision

__all__ = ["declared_revisions"]


def declared_revisions(context: RetrieverContext, retriever_id: str) -> dict[str, str | None]:
    """Options ``corpus_revision`` and ``model_revision``, each checked as a provenance value
    (None where the option is not given)."""
    return {name: declared_revision(context, name, retriever_id) for name in REVISION_OPTIONS}
