"""``goldeneval.lexical``: BM25 over title and text with bm25s.

English stop words and the Snowball stemmer (the shared analyser in :mod:`goldeneval.core.text`),
Lucene's BM25 variant with k1=1.5, b=0.75.  The index is built once per corpus revision and
parameters, and cached on disk; a later run loads it instead of re-indexing.  Documents that
share no term with the question are not returned, so a question nothing matches gets an
empty ranking.

The cache is trusted only when it verifies: its ``manifest.json``, written last, holds the
SHA-256 of every other file of the index folder and the document count, and the cached
document ids must be the corpus's.  A folder without a manifest, with a file that does not
match it, with a file too many or too few, or with other ids is rebuilt and replaced
(built beside it, then swapped in by renames), never used.

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
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from goldeneval.core.corpus import Corpus
from goldeneval.core.errors import RetrieverError
from goldeneval.core.provenance import NOT_APPLICABLE, Provenance
from goldeneval.core.text import bm25_tokenize, bm25s_module
from goldeneval.retrieval.retrievers.base import RetrieverContext, execution_revision
from goldeneval.retrieval.retrievers.options import check_known_options

if TYPE_CHECKING:
    import bm25s
else:
    bm25s = bm25s_module()

__all__ = ["BM25_OPTIONS", "DEFAULT_B", "DEFAULT_K1", "LexicalRetriever", "bm25_parameters", "build"]

RETRIEVER_ID = "goldeneval.lexical"
INDEX_FORMAT = "bm25s-lucene-v1"
DEFAULT_K1 = 1.5
DEFAULT_B = 0.75
BM25_OPTIONS = ("k1", "b")
IDS_FILE = "ids.json"
MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = "goldeneval.lexical-index-manifest/v1"


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
        self.cache_problem: str | None = None  # why a cached index was rebuilt; None: loaded, or none cached
        index_dir = self._index_dir(cache_dir) if cache_dir is not None else None
        cached = self._load(index_dir) if index_dir is not None else None
        if cached is not None:
            self._model = cached
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

    def _load(self, index_dir: Path) -> bm25s.BM25 | None:
        """The cached index when the folder verifies against its manifest, else None."""
        if not index_dir.exists():
            return None
        self.cache_problem = _verify_index(index_dir, self._ids)
        if self.cache_problem is not None:
            return None
        try:
            model: bm25s.BM25 = bm25s.BM25.load(str(index_dir), show_progress=False)
        except (OSError, ValueError, KeyError) as exc:  # replaced between verifying and loading
            self.cache_problem = f"cannot load: {exc}"
            return None
        return model

    def _save(self, index_dir: Path) -> None:
        """Build the folder beside ``index_dir``, manifest last, then swap it in by renames:
        the folder is whole or absent, and a corrupted one is replaced only by a whole one."""
        cache = index_dir.parent
        try:
            cache.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(dir=cache, prefix=".building-"))
        except OSError as exc:
            raise self._unwritable(cache, exc) from None
        try:
            self._model.save(str(staging), show_progress=False)
            (staging / IDS_FILE).write_text(json.dumps(self._ids), encoding="utf-8")
            _write_manifest(staging, len(self._ids))
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise self._unwritable(cache, exc) from None
        try:
            if index_dir.exists():  # a folder that did not verify: move it aside, then drop it
                stale = cache / f".stale-{uuid.uuid4().hex}"
                try:
                    index_dir.rename(stale)
                except FileNotFoundError:  # another run moved it first
                    pass
                else:
                    shutil.rmtree(stale, ignore_errors=True)
            staging.rename(index_dir)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            if _verify_index(index_dir, self._ids) is not None:  # else another run just saved a whole one
                raise self._unwritable(cache, exc) from None

    @staticmethod
    def _unwritable(cache: Path, exc: OSError) -> RetrieverError:
        reason = exc.strerror or str(exc)
        return RetrieverError(f"retriever {RETRIEVER_ID!r}: cannot write the index cache at {cache}: {reason}")

    def _query_tokens(self, questions: Sequence[str]) -> list[list[str]]:
        """Each question's terms that the index knows, from one tokeniser call for them all:
        bm25s analyses every text on its own (shared is only the table of stems), so a
        question's terms do not depend on the others, and one call spares a call's fixed cost
        per question."""
        vocab = self._model.vocab_dict
        tokenized: list[list[str]] = bm25_tokenize(list(questions), return_ids=False)
        return [[token for token in tokens if token in vocab] for tokens in tokenized]

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        return self.retrieve_batch([question], limit)[0]

    def retrieve_batch(self, questions: Sequence[str], limit: int) -> list[list[str]]:
        """One ranking per question from one bm25s call: the scores, and so the rankings, are
        those of :meth:`retrieve` question by question (bm25s scores each query alone)."""
        rankings: list[list[str]] = [[] for _ in questions]
        if limit <= 0 or not rankings:
            return rankings
        queries = [(i, tokens) for i, tokens in enumerate(self._query_tokens(questions)) if tokens]
        if not queries:
            return rankings
        k = min(limit, len(self._ids))
        doc_indices, scores = self._model.retrieve(
            [tokens for _, tokens in queries], k=k, show_progress=False, n_threads=1
        )
        for row, (i, _) in enumerate(queries):
            positive = np.asarray(scores[row]) > 0
            rankings[i] = [self._ids[int(d)] for d in np.asarray(doc_indices[row])[positive]]
        return rankings


def _sha256(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _write_manifest(folder: Path, documents: int) -> None:
    """``manifest.json``: the SHA-256 of every other file and the document count, written last."""
    files = {path.name: _sha256(path) for path in sorted(folder.iterdir()) if path.name != MANIFEST_FILE}
    manifest = {"format": MANIFEST_FORMAT, "documents": documents, "files": files}
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def _verify_index(folder: Path, ids: list[str]) -> str | None:
    """What is wrong with a cached index folder, or None when it is whole and holds ``ids``."""
    try:
        manifest: Any = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
        files = manifest["files"] if isinstance(manifest, dict) else None
        if not isinstance(files, dict) or manifest.get("format") != MANIFEST_FORMAT:
            return "the manifest is not a lexical index manifest"
        if manifest.get("documents") != len(ids):
            return f"the manifest counts {manifest.get('documents')!r} documents, the corpus {len(ids)}"
        present = {path.name for path in folder.iterdir() if path.name != MANIFEST_FILE}
        if present != set(files):
            return f"files differ from the manifest: {', '.join(sorted(present ^ set(files)))}"
        for name in sorted(files):
            if _sha256(folder / name) != files[name]:
                return f"{name} does not match its checksum"
        if json.loads((folder / IDS_FILE).read_text(encoding="utf-8")) != ids:
            return "the cached document ids are not the corpus's"
    except FileNotFoundError as exc:
        return f"{Path(exc.filename or '?').name} is missing"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"unreadable: {exc}"
    return None


def build(context: RetrieverContext) -> LexicalRetriever:
    """Entry-point factory for ``goldeneval.lexical``; options ``k1`` and ``b`` (:func:`bm25_parameters`)."""
    check_known_options(context, RETRIEVER_ID, BM25_OPTIONS)
    k1, b = bm25_parameters(context)
    corpus = context.require_corpus(RETRIEVER_ID)
    return LexicalRetriever(corpus, context.cache_dir, k1=k1, b=b)
