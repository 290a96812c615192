"""The retriever contract (ADR-072, decision 2) and how document ids are read from it.

Deliberately minimal: a question string and a limit in, ranked ids out, so any retrieval
pipeline can be measured.  A retriever that indexes chunks returns chunk ids; the adapter
maps them to document ids by the prefix before a separator (``doc-17#3`` -> ``doc-17``), the
same identity scheme the golden set's labels use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from goldeneval.corpus import Corpus
from goldeneval.errors import RetrieverError
from goldeneval.golden import GoldenQuestionSet

__all__ = [
    "DEFAULT_CHUNK_SEPARATOR",
    "Retriever",
    "RetrieverContext",
    "RetrieverFactory",
    "document_id_mapper",
]

DEFAULT_CHUNK_SEPARATOR = "#"


@runtime_checkable
class Retriever(Protocol):
    """Anything that ranks ids for a question."""

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        """Up to ``limit`` ids, best first.  An empty result means "nothing found"."""
        ...


@dataclass(frozen=True)
class RetrieverContext:
    """What a retriever factory may use to build its retriever."""

    corpus: Corpus | None
    cache_dir: Path
    options: Mapping[str, str] = field(default_factory=dict)
    golden_set: GoldenQuestionSet | None = None
    """The set being evaluated, for retrievers that replay rankings keyed by question id."""

    def float_option(self, name: str, default: float) -> float:
        raw = self.options.get(name)
        if raw is None:
            return default
        try:
            return float(raw)
        except ValueError:
            raise RetrieverError(f"retriever option {name!r}: expected a number, got {raw!r}") from None

    def require_corpus(self, retriever_id: str) -> Corpus:
        if self.corpus is None:
            raise RetrieverError(
                f"retriever {retriever_id!r} needs a corpus: pass --corpus PATH, or give the "
                "golden set a 'corpus' entry"
            )
        return self.corpus


RetrieverFactory = Callable[[RetrieverContext], Retriever]


def document_id_mapper(separator: str | None = DEFAULT_CHUNK_SEPARATOR) -> Callable[[str], str]:
    """Map a returned id to its document id: the prefix before the first ``separator``."""
    if not separator:
        return lambda returned_id: returned_id

    def to_document(returned_id: str) -> str:
        return returned_id.split(separator, 1)[0]

    return to_document
