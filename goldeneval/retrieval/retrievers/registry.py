"""Finding a retriever factory by id: entry points first, then an import path.

Retrievers are registered under the entry-point group ``goldeneval.retrievers`` with ids
like ``goldeneval.lexical``; any other factory can be named as ``package.module:factory``.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from goldeneval.core.errors import GoldenEvalError, RetrieverError, one_line
from goldeneval.retrieval.retrievers.base import Retriever, RetrieverContext, RetrieverFactory

__all__ = ["RETRIEVERS_ENTRY_POINT_GROUP", "build_retriever", "known_retrievers", "load_factory"]

RETRIEVERS_ENTRY_POINT_GROUP = "goldeneval.retrievers"


def known_retrievers() -> list[str]:
    return sorted(ep.name for ep in entry_points(group=RETRIEVERS_ENTRY_POINT_GROUP))


def load_factory(retriever_id: str) -> RetrieverFactory:
    for entry_point in entry_points(group=RETRIEVERS_ENTRY_POINT_GROUP, name=retriever_id):
        factory: RetrieverFactory = entry_point.load()
        return factory
    if ":" not in retriever_id:
        raise RetrieverError(
            f"unknown retriever {retriever_id!r}: not a registered id "
            f"(known: {', '.join(known_retrievers()) or 'none'}) and not an import path "
            "of the form package.module:factory"
        )
    module_name, _, attribute = retriever_id.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise RetrieverError(f"retriever {retriever_id!r}: cannot import {module_name!r}: {exc}") from None
    candidate = getattr(module, attribute, None)
    if not callable(candidate):
        raise RetrieverError(f"retriever {retriever_id!r}: module {module_name!r} has no callable {attribute!r}")
    imported: RetrieverFactory = candidate
    return imported


def build_retriever(retriever_id: str, context: RetrieverContext) -> Retriever:
    """Build the retriever; a factory that raises is invalid input naming the retriever."""
    factory = load_factory(retriever_id)
    try:
        retriever = factory(context)
    except GoldenEvalError:
        raise
    except (Exception, SystemExit) as exc:  # sys.exit() in a factory is its error, not a clean exit
        raise RetrieverError(
            f"retriever {retriever_id!r}: its factory raised {type(exc).__name__}: {one_line(str(exc))}"
        ) from None
    if not callable(getattr(retriever, "retrieve", None)):
        raise RetrieverError(
            f"retriever {retriever_id!r}: its factory returned {type(retriever).__name__}, "
            "which has no retrieve(question, limit) method"
        )
    return retriever
