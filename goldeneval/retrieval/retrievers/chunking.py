"""Chunking: how a document is cut into the passages a dense retriever embeds.

Three strategies, each with one canonical identity string that parses back and is what
provenance records (and what the embedding cache is keyed by):

* ``whole`` — one chunk per document: the title, a newline, the text.
* ``tokens(size=S,overlap=O)`` — windows of ``S`` tokens, each starting ``S - O`` tokens
  after the previous one; a token is a run of non-whitespace characters.  The title is
  put in front of every window, so each window knows what it belongs to.
* ``sections`` — paragraphs and Markdown sections: a heading line (``#`` to ``######``)
  starts a new section and stays with the paragraph below it; a blank line ends a
  paragraph.  The title is put in front of every section.

Chunk ids are ``<document id>#<n>`` with ``n`` counting from 0, so the scoring adapter's
prefix rule maps them back to the document.  Every document yields at least one chunk, even
an empty one, so that every document can be found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import RetrieverError

__all__ = [
    "CHUNK_SEPARATOR",
    "Chunk",
    "ChunkingStrategy",
    "Sections",
    "TokenWindows",
    "WholeDocument",
    "chunk_corpus",
    "chunking_from_options",
    "parse_chunking",
]

CHUNK_SEPARATOR = "#"
_WORD = re.compile(r"\S+")
_HEADING = re.compile(r"^#{1,6}\s")
_IDENTITY = re.compile(r"^(?P<name>[a-z]+)(?:\((?P<params>[^()]*)\))?$")


@dataclass(frozen=True, slots=True)
class Chunk:
    id: str
    document_id: str
    text: str


class ChunkingStrategy(Protocol):
    """A way to cut a document into chunks; ``identity`` is its canonical text form."""

    @property
    def identity(self) -> str: ...

    def passages(self, document: Document) -> list[str]:
        """The chunk texts of ``document``, in order; never empty."""
        ...


def _with_title(title: str, body: str) -> str:
    return f"{title}\n{body}" if title and body else (title or body)


@dataclass(frozen=True)
class WholeDocument:
    """One chunk per document."""

    identity = "whole"

    def passages(self, document: Document) -> list[str]:
        return [_with_title(document.title, document.text)]


@dataclass(frozen=True)
class TokenWindows:
    """Windows of ``size`` whitespace tokens overlapping by ``overlap`` tokens."""

    size: int = 128
    overlap: int = 32

    def __post_init__(self) -> None:
        if self.size < 1:
            raise RetrieverError(f"chunking tokens: size must be at least 1, got {self.size}")
        if not 0 <= self.overlap < self.size:
            raise RetrieverError(
                f"chunking tokens: overlap must be at least 0 and less than size ({self.size}), got {self.overlap}"
            )

    @property
    def identity(self) -> str:
        return f"tokens(size={self.size},overlap={self.overlap})"

    def passages(self, document: Document) -> list[str]:
        words = _WORD.findall(document.text)
        if len(words) <= self.size:
            return [_with_title(document.title, " ".join(words))]
        step = self.size - self.overlap
        windows: list[str] = []
        for start in range(0, len(words), step):
            windows.append(_with_title(document.title, " ".join(words[start : start + self.size])))
            if start + self.size >= len(words):
                break
        return windows


@dataclass(frozen=True)
class Sections:
    """Paragraphs, with a Markdown heading kept together with the paragraph below it."""

    identity = "sections"

    def passages(self, document: Document) -> list[str]:
        sections: list[list[str]] = []
        current: list[str] = []
        pending_heading = False
        for line in document.text.splitlines():
            stripped = line.strip()
            if _HEADING.match(stripped):
                if current and not pending_heading:
                    sections.append(current)
                    current = []
                current.append(stripped)
                pending_heading = True
            elif not stripped:
                if current and not pending_heading:
                    sections.append(current)
                    current = []
            else:
                current.append(stripped)
                pending_heading = False
        if current:
            sections.append(current)
        if not sections:
            return [document.title]
        return [_with_title(document.title, "\n".join(lines)) for lines in sections]


def chunk_corpus(corpus: Corpus | Sequence[Document], strategy: ChunkingStrategy) -> list[Chunk]:
    """Every chunk of every document, in corpus order; ids ``<document id>#<n>``."""
    return [
        Chunk(f"{doc.id}{CHUNK_SEPARATOR}{n}", doc.id, text)
        for doc in corpus
        for n, text in enumerate(strategy.passages(doc))
    ]


def _parse_params(identity: str, raw: str) -> dict[str, int]:
    params: dict[str, int] = {}
    for part in raw.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key or not value.isdigit():
            raise RetrieverError(f"chunking {identity!r}: expected name=integer parameters, got {part!r}")
        params[key] = int(value)
    return params


def parse_chunking(identity: str) -> ChunkingStrategy:
    """The strategy an identity string names: ``whole``, ``sections``, ``tokens(size=S,overlap=O)``."""
    match = _IDENTITY.match(identity.strip())
    name = match.group("name") if match else None
    raw_params = match.group("params") if match else None
    if name in ("whole", "sections") and raw_params is None:
        return WholeDocument() if name == "whole" else Sections()
    if name == "tokens" and raw_params:
        params = _parse_params(identity, raw_params)
        if set(params) != {"size", "overlap"}:
            raise RetrieverError(
                f"chunking {identity!r}: tokens takes exactly size and overlap, got {', '.join(params)}"
            )
        return TokenWindows(size=params["size"], overlap=params["overlap"])
    raise RetrieverError(f"chunking {identity!r} is not one of: whole, sections, tokens, tokens(size=S,overlap=O)")


def chunking_from_options(chunking: str, size: int | None, overlap: int | None) -> ChunkingStrategy:
    """The strategy from retriever options: ``chunking`` names it (or is a full identity);
    ``chunk_size``/``chunk_overlap`` set the token windows (defaults 128 and 32)."""
    if chunking == "tokens":
        defaults = TokenWindows()
        return TokenWindows(
            size=defaults.size if size is None else size,
            overlap=defaults.overlap if overlap is None else overlap,
        )
    strategy = parse_chunking(chunking)
    if (size is not None or overlap is not None) and not isinstance(strategy, TokenWindows):
        raise RetrieverError(
            f"options chunk_size and chunk_overlap apply to chunking=tokens only, not {strategy.identity!r}"
        )
    if isinstance(strategy, TokenWindows) and (size is not None or overlap is not None):
        raise RetrieverError(
            f"chunking {strategy.identity!r} already sets size and overlap: drop chunk_size/chunk_overlap"
        )
    return strategy
