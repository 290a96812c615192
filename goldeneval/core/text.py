"""The one text analyser: tokens, English stop words and the Snowball stemmer.

The lexical retriever indexes with it and the BEIR import derives question forms with it,
so "shares vocabulary" means the same thing in both places.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import re
import sys
import threading
import types
from functools import lru_cache
from typing import Any

import Stemmer

__all__ = [
    "ENGLISH_STOPWORDS",
    "STOPWORDS",
    "TOKEN_PATTERN",
    "bm25_tokenize",
    "bm25s_module",
    "content_terms",
    "stemmer",
]

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
"""bm25s' default token pattern: two or more word characters."""


def _bm25s_stopwords() -> tuple[str, ...]:
    """bm25s' English stop words, read from its ``stopwords`` module alone: importing the
    package runs its ``__init__``, which imports numba (about a second) for the index we only
    need when a lexical retriever is built.  The module is a plain tuple literal."""
    package = importlib.util.find_spec("bm25s")
    if package is None or not package.submodule_search_locations:
        raise ImportError("bm25s is not installed")
    spec = importlib.util.spec_from_file_location(
        "goldeneval._bm25s_stopwords", f"{next(iter(package.submodule_search_locations))}/stopwords.py"
    )
    if spec is None or spec.loader is None:
        raise ImportError("bm25s has no stopwords module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    words: tuple[str, ...] = module.STOPWORDS_EN
    return words


STOPWORDS: frozenset[str] = frozenset(_bm25s_stopwords())
ENGLISH_STOPWORDS: frozenset[str] = STOPWORDS | frozenset(
    """
    about above after again against all am any because been before being below between both can
    cannot could did do does doing don down during each few from further had has have having he her
    here hers herself him himself his how i its itself just me more most my myself nor now off once
    only other ought our ours ourselves out over own same she should so some than theirs them
    themselves those through too under until up very we were what when where which while who whom
    why would you your yours yourself yourselves
    """.split()  # noqa: SIM905 - a word list reads best as words
)
"""A fuller English stop-word list: :data:`STOPWORDS` (bm25s' short list, which the lexical
index and the measured form use, and which keeps "can" and "my" as terms) and the rest of a
common English list (NLTK's).  What the judging page never marks, and what ``goldeneval lint``
does not count as a shared word when it looks for near-duplicate questions."""

_STOPWORD_LIST = sorted(STOPWORDS)
_TOKEN = re.compile(TOKEN_PATTERN)


@lru_cache(maxsize=1)
def stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def content_terms(text: str) -> set[str]:
    """Lower-cased, stop-word-free, stemmed terms of ``text``."""
    tokens = [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]
    return set(stemmer().stemWords(tokens))


class _RefuseImportsHere(importlib.abc.MetaPathFinder):
    """Refuses to import the packages ``names`` in one thread only, so bm25s' ``try: import ...``
    takes its numpy path while any other thread imports them as usual."""

    def __init__(self, names: frozenset[str]) -> None:
        self.thread = threading.get_ident()
        self.names = names

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname.partition(".")[0] in self.names and threading.get_ident() == self.thread:
            raise ModuleNotFoundError(f"{fullname} is not needed by goldeneval's bm25s", name=fullname)


BM25S_UNUSED = frozenset({"numba", "scipy"})
"""What bm25s imports at its own import whenever it is installed, for backends goldeneval never
selects: numba for ``backend="numba"`` (0.1 s of a lexical run's start-up; the test extra's ranx
brings it), scipy.sparse for ``csc_backend="scipy"`` (0.06 s; ``bm25s.BM25`` builds its matrix
with numpy by default, and a cached index is numpy arrays).  scipy stays available to a plug-in
that asks bm25s for it in the same process (:class:`_ScipySparseOnUse`)."""


class _ScipySparseOnUse(types.ModuleType):
    """bm25s' ``sp`` (``scipy.sparse``), imported when bm25s first uses it: a plug-in building
    ``bm25s.BM25(csc_backend="scipy")`` in the same process gets scipy as bm25s would have
    given it, and a goldeneval run that never asks pays nothing."""

    def __getattr__(self, name: str) -> Any:
        import scipy.sparse

        return getattr(scipy.sparse, name)


def bm25s_module() -> types.ModuleType:
    """bm25s, imported without numba and scipy (:data:`BM25S_UNUSED`): this thread's import of
    either is refused while bm25s imports, unless it is loaded already."""
    loaded = sys.modules.get("bm25s")
    if loaded is not None and not getattr(getattr(loaded, "__spec__", None), "_initializing", False):
        return loaded
    names = frozenset(name for name in BM25S_UNUSED if name not in sys.modules)
    refuse = _RefuseImportsHere(names) if names else None
    if refuse is not None:
        sys.meta_path.insert(0, refuse)
    try:
        import bm25s
    finally:
        if refuse is not None:
            sys.meta_path.remove(refuse)
    if "scipy" in names and importlib.util.find_spec("scipy") is not None:
        bm25s.sp = _ScipySparseOnUse("scipy.sparse")
        bm25s.SCIPY_AVAILABLE = True
    module: types.ModuleType = bm25s
    return module


def bm25_tokenize(texts: str | list[str], *, return_ids: bool = True) -> Any:
    """bm25s tokenisation with this analyser: ids for indexing, strings for queries."""
    bm25s = bm25s_module()  # only where an index is built or queried: see _bm25s_stopwords

    return bm25s.tokenize(
        texts,
        token_pattern=TOKEN_PATTERN,
        stopwords=_STOPWORD_LIST,
        stemmer=stemmer(),
        return_ids=return_ids,
        show_progress=False,
    )
