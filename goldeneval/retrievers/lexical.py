"""``goldeneval.lexical``: BM25 over title and text with bm25s.

English stop words and the Snowball stemmer (the shared analyser in :mod:`goldeneval.text`),
Lucene's BM25 variant with k1=1.5, b=0.75.  The index is built once per corpus revision and
parameters, and cached on disk; a later run loads it instead of re-indexing.  Documents that
share no term with the question are not returned, so a question nothing matches gets an
empty ranking.

Options ``k1`` (a finite number >= 0) and ``b`` (a finite number in [0, 1]), read by
:func:`bm25_parameters`, which hybrid and reranked use for their lexical stage too; any other
option is an error.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np

from goldeneval.corpus import Corpus
from goldeneval.errors import RetrieverError
from goldeneval.provenance import NOT_APPLICABLE, Provenance
from goldeneval.retrievers.base import RetrieverContext, execution_revision
from goldeneval.retrievers.options import check_known_options
from goldeneval.text import bm25_tokenize

__all__ = ["BM25_OPTIONS", "DEFAULT_B", "DEFAULT_K1", "LexicalRetriever", "bm25_parameters", "build"]

RETRIEVER_ID = "goldeneval.lexical"
INDEX_FORMAT = "bm25s-lucene-v1"
DEFAULT_K1 = 1.5
DEFAULT_B = 0.75
BM25_OPTIONS = ("k1", "b")


def bm25_parameters(context: RetrieverContext, retriever_id: str = RETRIEVER_ID) -> tuple[float, float]:
    """Options ``k1`` (finite, >= 0; default 1.5) and ``b`` (finite, in [0, 1]; default 0.75).

    Shared by every retriever with a BM25 stage; ``retriever_id`` is the one errors name.
    """
    k1 = context.float_option("k1", DEFAULT_K1, minimum=0.0, retriever_id=retriever_id)
    b = context.float_option("b", DEFAULT_B, minimum=0.0, maximum=1.0, retriever_id=retriever_id)
    return k1, b


def _check_bm25_parameters(k1: float, b: float) -> None:
    if not (math.isfinite(k1) and k1 >= 0):
        raise RetrieverError(f"retriever {RETRIEVER_ID!r}: k1 must be a finite number >= 0, got {k1:g}")
    if not (math.isfinite(b) and 0 <= b <= 1):
        raise RetrieverError(f"retriever {RETRIEVER_ID!r}: b must be a finite number in [0, 1], got {b:g}")


class LexicalRetriever:
    """BM25 over a corpus, with its index cached per corpus revision under ``cache_dir``."""

    def __init__(
        self, corpus: Corpus, cache_dir: Path | None = None, *, k1: float = DEFAULT_K1, b: float = DEFAULT_B
    ) -> None:
        _check_bm25_parameters(k1, b)
        self.corpus_revision = corpus.revision
        self.k1, self.b = k1, b
        self._ids = [doc.id for doc in corpus]
        self.index_loaded_from_cache = False
        index_dir = self._index_dir(cache_dir) if cache_dir is not None else None
        if index_dir is not None and (index_dir / "ids.json").is_file():
            self._model = bm25s.BM25.load(str(index_dir), show_progress=False)
            self._ids = json.loads((index_dir / "ids.json").read_text(encoding="utf-8"))
            self.index_loaded_from_cache = True
        else:
            self._model = self._build(corpus)
            if index_dir is not None:
                self._save(index_dir)

    def provenance(self) -> Provenance:
        """Model-less and unchunked: model and chunking are declared not applicable."""
        return Provenance(
            corpus_revision=self.corpus_revision,
            model_revision=NOT_APPLICABLE,
            chunking_identity=NOT_APPLICABLE,
            pipeline_identity=f"{RETRIEVER_ID}/{INDEX_FORMAT}(k1={self.k1:g},b={self.b:g})",
            execution_revision=execution_revision("bm25s"),
        )

    def _index_dir(self, cache_dir: Path) -> Path:
        key = f"{INDEX_FORMAT}|{self.corpus_revision}|k1={self.k1}|b={self.b}"
        return cache_dir / "lexical" / hashlib.sha256(key.encode()).hexdigest()[:24]

    def _build(self, corpus: Corpus) -> bm25s.BM25:
        texts = [f"{doc.title}\n{doc.text}" for doc in corpus]
        tokens = bm25_tokenize(texts)
        model = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        model.index(tokens, show_progress=False)
        return model

    def _save(self, index_dir: Path) -> None:
        """Write to a sibling temporary folder and rename, so a cache is whole or absent."""
        index_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=index_dir.parent, prefix=".building-"))
        try:
            self._model.save(str(staging), show_progress=False)
            (staging / "ids.json").write_text(json.dumps(self._ids), encoding="utf-8")
            staging.rename(index_dir)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            if not (index_dir / "ids.json").is_file():
                raise

    def _query_tokens(self, question: str) -> list[str]:
        tokenized = bm25_tokenize(question, return_ids=False)
        vocab = self._model.vocab_dict
        return [token for token in tokenized[0] if token in vocab]

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        tokens = self._query_tokens(question)
        if not tokens or limit <= 0:
            return []
        k = min(limit, len(self._ids))
        doc_indices, scores = self._model.retrieve([tokens], k=k, show_progress=False, n_threads=1)
        positive = np.asarray(scores[0]) > 0
        return [self._ids[int(i)] for i in np.asarray(doc_indices[0])[positive]]


def build(context: RetrieverContext) -> LexicalRetriever:
    """Entry-point factory for ``goldeneval.lexical``; options ``k1`` and ``b`` (:func:`bm25_parameters`)."""
    check_known_options(context, RETRIEVER_ID, BM25_OPTIONS)
    k1, b = bm25_parameters(context)
    corpus = context.require_corpus(RETRIEVER_ID)
    return LexicalRetriever(corpus, context.cache_dir, k1=k1, b=b)
