"""``goldeneval.lexical``: BM25 over title and text with bm25s.

English stop words and the Snowball stemmer (the shared analyser in :mod:`goldeneval.text`),
Lucene's BM25 variant with k1=1.5, b=0.75.  The index is built once per corpus revision and
parameters, and cached on disk; a later run loads it instead of re-indexing.  Documents that
share no term with the question are not returned, so a question nothing matches gets an
empty ranking.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Sequence
from importlib.metadata import version as package_version
from pathlib import Path

import bm25s
import numpy as np

from goldeneval.corpus import Corpus
from goldeneval.provenance import NOT_APPLICABLE, Provenance
from goldeneval.retrievers.base import RetrieverContext
from goldeneval.text import bm25_tokenize

__all__ = ["LexicalRetriever", "build"]

RETRIEVER_ID = "goldeneval.lexical"
INDEX_FORMAT = "bm25s-lucene-v1"


class LexicalRetriever:
    """BM25 over a corpus, with its index cached per corpus revision under ``cache_dir``."""

    def __init__(self, corpus: Corpus, cache_dir: Path | None = None, *, k1: float = 1.5, b: float = 0.75) -> None:
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
            execution_revision=(f"goldeneval {package_version('goldeneval')}; bm25s {package_version('bm25s')}"),
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
    """Entry-point factory for ``goldeneval.lexical``; options ``k1`` and ``b`` are floats."""
    corpus = context.require_corpus(RETRIEVER_ID)
    return LexicalRetriever(
        corpus, context.cache_dir, k1=context.float_option("k1", 1.5), b=context.float_option("b", 0.75)
    )
