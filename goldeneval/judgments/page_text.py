"""The judging page's text rendering: the question's terms marked in a document, the grades' labels."""

from __future__ import annotations

import re
from collections.abc import Sequence

from goldeneval.core.text import ENGLISH_STOPWORDS, TOKEN_PATTERN, stemmer

__all__ = ["HIGHLIGHT_STOPWORDS", "MAX_SHOWN_CHARS", "grade_labels", "highlighted", "marked_terms", "shown_text"]

_NAMES = {0: "not relevant", 1: "relevant", 2: "highly relevant", 3: "perfect"}
_TOKEN = re.compile(TOKEN_PATTERN)
MAX_SHOWN_CHARS = 20_000
"""Longest document text the page shows (the rest is cut, with a note)."""


HIGHLIGHT_STOPWORDS = ENGLISH_STOPWORDS
"""Words never marked on the page (:data:`goldeneval.core.text.ENGLISH_STOPWORDS`: the lexical
analyser's stop words, which keep "can" and "my" as terms, and the rest of a common English
list), so that the marks fall on what the question is about."""


def marked_terms(question: str) -> set[str]:
    """The stems the page marks for ``question``: its words less :data:`HIGHLIGHT_STOPWORDS`,
    stemmed as the lexical analyser stems them."""
    words = [word for word in _TOKEN.findall(question.lower()) if word not in HIGHLIGHT_STOPWORDS]
    return set(stemmer().stemWords(words))


def grade_labels(scale: Sequence[int]) -> dict[int, str]:
    return {grade: _NAMES.get(grade, f"grade {grade}") for grade in scale}


def highlighted(text: str, terms: set[str]) -> list[tuple[str, bool]]:
    """``text`` as segments, each token whose stem is one of ``terms`` a marked segment of its
    own; a stop word (:data:`HIGHLIGHT_STOPWORDS`) is never marked."""
    matches = list(_TOKEN.finditer(text))
    stems = stemmer().stemWords([m.group().lower() for m in matches]) if matches else []
    segments: list[tuple[str, bool]] = []
    at = 0
    for match, stem in zip(matches, stems, strict=True):
        if match.group().lower() in HIGHLIGHT_STOPWORDS or stem not in terms:
            continue
        if match.start() > at:
            segments.append((text[at : match.start()], False))
        segments.append((match.group(), True))
        at = match.end()
    if at < len(text):
        segments.append((text[at:], False))
    return segments


def shown_text(text: str) -> str:
    """``text`` as the page shows it: cut at :data:`MAX_SHOWN_CHARS`, with a note."""
    return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS] + " [...]"
