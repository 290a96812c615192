"""The one text analyser: tokens, English stop words and the Snowball stemmer.

The lexical retriever indexes with it and the BEIR import derives question forms with it,
so "shares vocabulary" means the same thing in both places.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import bm25s
import Stemmer
from bm25s.stopwords import STOPWORDS_EN

__all__ = ["STOPWORDS", "TOKEN_PATTERN", "bm25_tokenize", "content_terms", "stemmer"]

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
"""bm25s' default token pattern: two or more word characters."""
STOPWORDS: frozenset[str] = frozenset(STOPWORDS_EN)
_STOPWORD_LIST = sorted(STOPWORDS)
_TOKEN = re.compile(TOKEN_PATTERN)


@lru_cache(maxsize=1)
def stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def content_terms(text: str) -> set[str]:
    """Lower-cased, stop-word-free, stemmed terms of ``text``."""
    tokens = [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]
    return set(stemmer().stemWords(tokens))


def bm25_tokenize(texts: str | list[str], *, return_ids: bool = True) -> Any:
    """bm25s tokenisation with this analyser: ids for indexing, strings for queries."""
    return bm25s.tokenize(
        texts,
        token_pattern=TOKEN_PATTERN,
        stopwords=_STOPWORD_LIST,
        stemmer=stemmer(),
        return_ids=return_ids,
        show_progress=False,
    )
